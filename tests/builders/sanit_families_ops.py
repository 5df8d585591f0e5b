"""Sanitizer models for the operator families added with the TFLM parity work (tests/builders/sanit_families.py
lists the older ones): one model per TFLM twin draw of the struct, signal, detection and dsp16 groups
(tests/fuzz/tflm_twin.py; a fixed seed each, TFLM's output as the oracle: exact for integers, the draw's
own rounding bound for float), and ONNX graphs of the ops only ONNX spells (ReduceProd, boolean
ReduceMax, TopK, OneHot, ScatterND, GatherElements, Gather with run-time indices), onnxruntime as the
oracle. The dsp16 draws are compiled for cortex-m4 and cortex-m55 too (the arm_dsp and arm_mve int16 kernels)."""
from __future__ import annotations

import re

import numpy as np
import onnx
from onnx import helper

from tests.builders.float_models import model_of, rand
from tests.builders.sanit_families import FamilyModel
from tests.conftest import ort_run

N = helper.make_node
I64 = np.int64
GROUP_TARGETS = {"struct": ("host",), "signal": ("host",), "detection": ("host",), "dsp16": ("host", "cortex-m4", "cortex-m55")}


def _name(op: str) -> str:
    return "t_" + re.sub(r"[^a-z0-9]+", "_", op.lower()).strip("_")


# the draws kept per operator: seeds whose models TFLM runs without a wrapped channel and that add a kernel
# family or form the earlier ones miss (the int8 form beside the float one, a framer that keeps frames, a
# dynamic update with a run-time start); chosen once by compiling seeds 0..15 and kept here so the suite
# compiles no more than it runs
SEEDS = {"SUM": [0, 1, 6], "CUMSUM": [0, 1], "LOG_SOFTMAX": [0, 1], "L2_NORMALIZATION": [0, 1], "BATCH_MATMUL": [0, 1, 12],
         "SLICE": [0, 1, 2], "PACK": [0, 2], "DYNAMIC_UPDATE_SLICE": [0, 1], "S2B>CONV>B2S": [0, 2, 3],
         "SignalFramer": [0, 2], "DW>CONV>ADD(i16)": [0, 1], "SIMD DEPTHWISE_CONV_2D(i16)": [1]}


def _drawn(op: str, seed: int, targets) -> FamilyModel:
    """Draw ``seed`` of twin draw ``op`` with TFLM's outputs as the oracle (ValueError when TFLM refuses it)."""
    from tests.fuzz.tflm_twin import OPS
    from tests.fuzz.twin_run import _tflm_run
    d = OPS[op](np.random.default_rng(seed))
    want = _tflm_run(d.model, list(d.inputs))
    if isinstance(want, str):
        raise ValueError(f"{op} seed {seed}: TFLM refused it ({want})")
    want = [np.asarray(w) for w in want]
    floats = [w for w in want if w.dtype.kind == "f"]
    tol = None
    if floats:
        scale = max(max(float(np.max(np.abs(w))) for w in floats), 1e-6)
        bound = float(np.max(d.tol)) if d.tol is not None else 1e-5 * scale
        tol = max(bound / scale, 1e-6) * 1.0001
    return FamilyModel(f"{_name(op)}_{seed}", d.model, list(d.inputs), want, tol=tol, targets=targets)


def drawn_models() -> list[FamilyModel]:
    from tests.fuzz.tflm_twin import GROUPS
    return [_drawn(op, seed, targets) for group, targets in GROUP_TARGETS.items()
            for op in dict.fromkeys(GROUPS[group]) for seed in SEEDS.get(op, [0])]


def _onnx(name, nodes, inputs: dict, outputs, opset=13, inits=None) -> FamilyModel:
    model = model_of(nodes, inputs, outputs, opset, inits)
    return FamilyModel(name, model, list(inputs.values()), ort_run(model, inputs), tol=1e-5)


def onnx_index_models() -> list[FamilyModel]:
    x = rand(2, 5, 4)
    idx = np.array([[[1, 0, 3, 2], [4, 4, 0, 1]], [[0, 2, 2, 3], [1, 3, 4, 0]]], I64)
    return [
        _onnx("o_reduce_prod", [N("ReduceProd", ["X"], ["Y"], axes=[1], keepdims=0)], {"X": x}, ["Y"], 13),
        _onnx("o_reduce_any", [N("Greater", ["X", "z"], ["g"]), N("ReduceMax", ["g", "ax"], ["m"], keepdims=1),
                               N("Cast", ["m"], ["Y"], to=onnx.TensorProto.FLOAT)],
              {"X": x}, ["Y"], 20, {"z": np.array(0.3, np.float32), "ax": np.array([2], I64)}),
        _onnx("o_topk_onehot", [N("TopK", ["X", "k"], ["V", "i"], axis=-1), N("Cast", ["i"], ["I"], to=onnx.TensorProto.FLOAT),
                                N("OneHot", ["i", "d", "v"], ["O"], axis=-1)],           # run-time indices: not folded
              {"X": x}, ["V", "I", "O"], 13, {"k": np.array([2], I64), "d": np.array(5, I64),
                                              "v": np.array([0.0, 2.5], np.float32)}),
        _onnx("o_scatter_gather", [N("ScatterND", ["X", "si", "su"], ["S"]), N("GatherElements", ["X", "gi"], ["G"], axis=1)],
              {"X": x}, ["S", "G"], 13, {"si": np.array([[0, 1], [1, 4]], I64), "su": rand(2, 4, seed=1), "gi": idx}),
        _onnx("o_gather_runtime", [N("ArgMax", ["X"], ["a"], axis=2, keepdims=0), N("Gather", ["T", "a"], ["Y"], axis=0)],
              {"X": x}, ["Y"], 13, {"T": rand(4, 3, seed=2)}),
    ]


def new_op_models() -> list[FamilyModel]:
    return drawn_models() + onnx_index_models()


__all__ = ["new_op_models"]
