"""One small model per op family (and fused form) for the sanitizer and guard runs
(tests/c/test_sanitize_families.py), each with its independent oracle's output:

- float ONNX graphs (onnx.helper), oracle onnxruntime (``tol`` = relative to max|ref|, as
  conftest.assert_close_to);
- int8 one-op cases whose oracle is TFLite Micro bit for bit (tflm_cases / tflm_misc /
  tflm_int8_misc / resize_models / tflite_convt builders; ``tol`` None = exact);
- int8 QDQ graphs (onnxruntime's static quantizer, poly-fused chains, sibling convs) that TFLM has no
  twin for, oracle onnxruntime's float QDQ reading within ``lsb`` output steps.

``targets`` lists where the model is compiled: int8 models with SIMD anchors (conv, depthwise, fully
connected, sibling convs, poly-fused chains) also for cortex-m4 (arm_dsp) and cortex-m55 (arm_mve),
whose kernels the host builds through tinyfuse_simd_host.h. Shapes are small (every model runs in
well under a millisecond unsanitized) so that the whole list goes through one build per configuration.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from tinyfuse.harness.host import CONVERSION_CFLAGS
from tests.builders.float_models import model_of, rand
from tests.conftest import ort_run

N = helper.make_node
SHORT = {"host": "h", "cortex-m4": "m4", "cortex-m55": "m55"}
# the sanitizer and strict-warning configurations (tests/c/test_sanitizers.py, test_sanitize_families.py):
# keyword arguments of harness.build_host / build_host_multi
CONFIGS = {
    "gcc_asan_ubsan_guard": dict(cc="gcc", sanitize=True, guard=256, arena_fill=0xA5),
    "gcc_wconversion": dict(cc="gcc", cflags=CONVERSION_CFLAGS, arena_fill=0xA5),
    "clang_wconversion": dict(cc="clang", cflags=CONVERSION_CFLAGS, arena_fill=0xA5),
}
I64 = np.int64
SIMD_TARGETS = ("host", "cortex-m4", "cortex-m55")
DSP_TARGETS = ("host", "cortex-m4")              # depthwise: arm_dsp only (cortex-m55 takes the same kernel)
MVE_TARGETS = ("host", "cortex-m55")             # Helium only (int8 average pool)
# the models with SIMD anchors, compiled for the Arm targets too (every other model: host only)
ARM_TARGETS = {"q_conv_relu6": SIMD_TARGETS, "q_conv_s2_valid": SIMD_TARGETS, "q_dw_mult2_s2": DSP_TARGETS,
               "q_fc": SIMD_TARGETS, "q_poly_chain": SIMD_TARGETS, "q_down_block": SIMD_TARGETS,
               "q_horizontal": SIMD_TARGETS, "f_gemm_softmax": DSP_TARGETS, "f_fpu_convs": DSP_TARGETS,
               "q_dw_inplace": SIMD_TARGETS, "q_avg_pool": MVE_TARGETS,
               "q_sparse_conv": DSP_TARGETS, "q_sparse_fc": DSP_TARGETS, "q_sparse_pairs24": DSP_TARGETS,
               "q_conv_k3": SIMD_TARGETS, "q_dw_batch2": SIMD_TARGETS, "q_sparse_dw": DSP_TARGETS,
               "q_skip_conv": DSP_TARGETS, "q_skip_fc": DSP_TARGETS}
SKIP_ZERO = {"realtime": {"skip_zero_activations": True}}   # the activation-skipping kernels (lower/conv/skip_zero.py)


@dataclass
class FamilyModel:
    name: str                               # C identifier prefix (a target suffix is added)
    model: object                           # onnx.ModelProto or .tflite bytes
    inputs: list[np.ndarray]
    want: list[np.ndarray]                  # the oracle's outputs
    tol: float | None = None                # float: relative tolerance; None: exact
    lsb: int | None = None                  # int8 vs onnxruntime: max difference in output steps
    step: float = 1.0                       # one output step (the output scale when the output is float)
    targets: tuple[str, ...] = ()           # default: ARM_TARGETS[name], else host only
    siblings_with_copies: bool = False      # compile with fuse_horizontal.VIEWS_ONLY off
    frames: int = 1                         # > 1: inputs and want are [frames, *shape], run frame after frame
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        self.targets = self.targets or ARM_TARGETS.get(self.name, ("host",))

    def oracle_error(self, i: int, got: np.ndarray) -> str | None:
        """Why output ``i`` of a build does not meet the oracle, or None."""
        want = self.want[i]
        if got.shape != tuple(want.shape):
            return f"shape {got.shape} != {want.shape}"
        if self.tol is not None:
            scale = max(float(np.max(np.abs(want))), 1e-6)
            err = float(np.max(np.abs(got.astype(np.float64) - want)))
            return None if err <= self.tol * scale else f"max abs diff {err:.3g} > {self.tol} x {scale:.3g}"
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64)) / self.step
        limit = (self.lsb or 0) + 1e-6
        return None if not np.any(diff > limit) else \
            f"{int(np.sum(diff > limit))} outputs off by up to {float(np.max(diff)):.2f} steps (allowed {self.lsb or 0})"

    def compile(self, target: str):
        """compile_model for ``target``, named ``<name>_<h|m4|m55>``."""
        import warnings
        from contextlib import ExitStack
        from unittest import mock
        from tinyfuse.driver import compile_model
        from tinyfuse.passes import fuse_horizontal
        with ExitStack() as stack, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if self.siblings_with_copies:
                stack.enter_context(mock.patch.object(fuse_horizontal, "VIEWS_ONLY", False))
            return compile_model(self.model, target=target, name=f"{self.name}_{SHORT[target]}", **self.options)


def _onnx_float(name, nodes, inputs: dict, outputs, opset=13, inits=None, tol=1e-4) -> FamilyModel:
    model = model_of(nodes, inputs, outputs, opset, inits)
    return FamilyModel(name, model, list(inputs.values()), ort_run(model, inputs), tol=tol)


def float_models() -> list[FamilyModel]:
    """Float32 ONNX graphs over every float lowering family, with fused epilogues and chains."""
    conv_pool = _onnx_float("f_conv_relu_pool", [
        N("Conv", ["X", "W", "B"], ["c"], pads=[1, 1, 1, 1]), N("Relu", ["c"], ["r"]),
        N("MaxPool", ["r"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
        N("AveragePool", ["m"], ["Y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        {"X": rand(1, 3, 10, 9)}, ["Y"], inits={"W": rand(8, 3, 3, 3, seed=1), "B": rand(8, seed=2)})
    dw = _onnx_float("f_dw_hardswish_gap", [
        N("Conv", ["X", "W"], ["c"], group=6, strides=[2, 2], pads=[1, 1, 1, 1]), N("HardSwish", ["c"], ["h"]),
        N("GlobalAveragePool", ["h"], ["Y"]), N("ReduceMean", ["h"], ["Y2"], axes=[1], keepdims=0)],
        {"X": rand(1, 6, 9, 8)}, ["Y", "Y2"], opset=14, inits={"W": rand(6, 1, 3, 3, seed=3)})
    gemm = _onnx_float("f_gemm_softmax", [
        N("Gemm", ["X", "W", "B"], ["g"], transB=1), N("Softmax", ["g"], ["Y"], axis=1),
        N("MatMul", ["X", "W2"], ["m"]), N("Add", ["m", "B2"], ["a"]), N("Gelu", ["a"], ["Y2"])],
        {"X": rand(3, 12)}, ["Y", "Y2"], opset=20,
        inits={"W": rand(7, 12, seed=4), "B": rand(7, seed=5), "W2": rand(12, 9, seed=6), "B2": rand(9, seed=7)})
    bmm = _onnx_float("f_batch_matmul_transpose", [
        N("MatMul", ["A", "B"], ["m"]), N("Transpose", ["m"], ["Y"], perm=[0, 2, 1]),
        N("Transpose", ["A"], ["Y2"], perm=[2, 0, 1])],
        {"A": rand(2, 3, 5), "B": rand(2, 5, 4, seed=1)}, ["Y", "Y2"])
    ln = _onnx_float("f_layer_norm", [
        N("LayerNormalization", ["X", "g", "b"], ["l"], epsilon=1e-3), N("Relu", ["l"], ["Y"])],
        {"X": rand(2, 3, 7) * 3 + 1}, ["Y"], opset=17, inits={"g": rand(7, seed=1), "b": rand(7, seed=2)})
    concat_pad = _onnx_float("f_concat_pad", [
        N("Relu", ["A"], ["ra"]), N("Sigmoid", ["B"], ["sb"]), N("Concat", ["ra", "sb"], ["c"], axis=1),
        N("Pad", ["c", "p", "v"], ["Y"]), N("Pad", ["B", "p"], ["Y2"])],
        {"A": rand(1, 2, 5, 6), "B": rand(1, 3, 5, 6, seed=1)}, ["Y", "Y2"],
        inits={"p": np.array([0, 0, 1, 2, 0, 0, 2, 1], I64), "v": np.array(0.5, np.float32)})
    # NHWC convs past the input (so not read through the input's layout): the arm_fpu kernels on cortex-m4,
    # with a channel tail (6 and 7 outputs), padded taps, a stride-2 depthwise and a pixel tail
    fpu = _onnx_float("f_fpu_convs", [
        N("Relu", ["X"], ["r"]), N("Conv", ["r", "W", "B"], ["c"], pads=[1, 1, 1, 1]), N("Relu", ["c"], ["c1"]),
        N("Conv", ["c1", "Wd"], ["d"], group=6, strides=[2, 2], pads=[1, 1, 1, 1]),
        N("Conv", ["d", "Wp", "Bp"], ["Y"])],
        {"X": rand(1, 5, 7, 9)}, ["Y"],
        inits={"W": rand(6, 5, 3, 3, seed=1), "B": rand(6, seed=2), "Wd": rand(6, 1, 3, 3, seed=3),
               "Wp": rand(7, 6, 1, 1, seed=4), "Bp": rand(7, seed=5)})
    return [conv_pool, dw, gemm, fpu, bmm, ln, concat_pad] + _float_more_models()


def _float_more_models() -> list[FamilyModel]:
    """Transposed convolution, resize, element-wise chains and casts, data movement, sibling convs."""
    convt = _onnx_float("f_conv_transpose", [
        N("ConvTranspose", ["X", "W", "B"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]),
        N("Relu", ["c"], ["Y"])],
        {"X": rand(1, 4, 5, 6)}, ["Y"], inits={"W": rand(4, 3, 3, 3, seed=1), "B": rand(3, seed=2)})
    from tests.builders.resize_models import onnx_resize
    rz = onnx_resize((1, 3, 5, 7), out_size=(1, 3, 9, 13), mode="linear", coordinate_transformation_mode="half_pixel")
    x = rand(1, 3, 5, 7)
    resize = FamilyModel("f_resize", rz, [x], ort_run(rz, {"X": x}), tol=1e-5)
    elemwise = _onnx_float("f_elemwise_prelu", [
        N("PRelu", ["X", "s"], ["p"]), N("Erf", ["p"], ["e"]), N("Div", ["e", "D"], ["d"]),
        N("Clip", ["d", "lo", "hi"], ["c"]), N("Tanh", ["c"], ["t"]), N("Sub", ["t", "X"], ["Y"]),
        N("Mul", ["X", "k"], ["m"]), N("Cast", ["m"], ["i"], to=onnx.TensorProto.INT32),
        N("Cast", ["i"], ["Y2"], to=onnx.TensorProto.FLOAT), N("Cast", ["m"], ["b"], to=onnx.TensorProto.INT8),
        N("Cast", ["b"], ["Y3"], to=onnx.TensorProto.FLOAT)],
        {"X": rand(1, 4, 3, 5)}, ["Y", "Y2", "Y3"],
        inits={"s": rand(4, 1, 1, seed=1), "D": rand(1, 1, 5, seed=2, low=0.5), "lo": np.array(-0.8, np.float32),
               "hi": np.array(0.9, np.float32), "k": np.array(20.0, np.float32)})
    movement = _onnx_float("f_movement", [
        N("Slice", ["X", "s", "e", "a", "t"], ["Y"]), N("Slice", ["X", "s1", "e1", "a1"], ["Y1"]),
        N("Split", ["X"], ["A", "B"], axis=0), N("Relu", ["B"], ["Y2"]), N("Gather", ["X", "gi"], ["Y3"], axis=2),
        N("Expand", ["V", "es"], ["Y4"]), N("Tile", ["V", "ts"], ["Y5"]), N("Add", ["A", "A"], ["Y6"])],
        {"X": rand(2, 3, 9, 4), "V": rand(3, 1, 4, seed=1)}, ["Y", "Y1", "Y2", "Y3", "Y4", "Y5", "Y6"],
        inits={"s": np.array([0, 1], I64), "e": np.array([9, 4], I64), "a": np.array([2, 3], I64),
               "t": np.array([2, 2], I64), "s1": np.array([2], I64), "e1": np.array([-1], I64),
               "a1": np.array([-2], I64), "gi": np.array([[6, 0], [2, 8]], I64), "es": np.array([2, 3, 5, 4], I64),
               "ts": np.array([2, 3, 2], I64)})
    sib = model_of([N("Conv", ["X", "W1", "B1"], ["c1"]), N("Relu", ["c1"], ["r1"]), N("Conv", ["X", "W2"], ["c2"]),
                    N("Concat", ["r1", "c2"], ["Y"], axis=1)], {"X": rand(1, 6, 5, 7)}, ["Y"], 13,
                   {"W1": rand(4, 6, 1, 1, seed=1), "B1": rand(4, seed=2), "W2": rand(3, 6, 1, 1, seed=3)})
    x = rand(1, 6, 5, 7)
    horizontal = FamilyModel("f_horizontal", sib, [x], ort_run(sib, {"X": x}), tol=1e-4, siblings_with_copies=True)
    return [convt, resize, elemwise, movement, horizontal]


def _tflm(name, case) -> FamilyModel:
    """A tflm_cases.Case: tinyfuse compiles the .tflite model, TFLM's output is the oracle."""
    return FamilyModel(name, case.tflm, list(case.inputs), [case.want])


def _with(model: FamilyModel, options: dict) -> FamilyModel:
    model.options = {**model.options, **options}
    return model


def _tflm_bytes(name, model: bytes, inputs) -> FamilyModel:
    from tests.builders.tflm_cases import tflm_oneop
    return FamilyModel(name, model, list(inputs), list(tflm_oneop().run(model, list(inputs))))


def int8_tflm_models() -> list[FamilyModel]:
    """int8 one-op .tflite models with TFLM as the exact oracle."""
    from tests.builders import tflite_convt, tflm_misc
    from tests.builders.resize_models import tflite_resize
    from tests.builders.tflm_cases import (binary_case, concat_case, conv_case, fc_case, pool_case, unary_case)
    from tests.builders.tflm_int8_misc import binary_case as misc_binary, mean_case
    rng = np.random.default_rng(11)
    i8 = lambda *s: rng.integers(-128, 128, s).astype(np.int8)  # noqa: E731
    q = (0.05, 3)
    out = [
        _tflm("q_conv_relu6", conv_case("conv", 0, (1, 9, 7, 8), 12, (3, 3), act="RELU6")),
        _tflm("q_conv_s2_valid", conv_case("conv", 5, (1, 8, 9, 5), 6, (3, 3), (2, 2), "VALID")),
        _tflm("q_dw_mult2_s2", conv_case("dw", 1, (1, 9, 8, 4), 0, (3, 3), (2, 2), mult=2)),
        _tflm("q_dw_inplace", conv_case("dw", 2, (1, 7, 6, 8), 0, (3, 3))),     # Helium on cortex-m55 (depthwise_mve)
        _tflm("q_fc", fc_case(2, 3, 37, 10, act="RELU")),
        _tflm("q_conv_k3", conv_case("conv", 17, (1, 6, 7, 8), 3, (1, 1))),    # Helium: K < 4, the 2 x 2 blocks
        _tflm("q_dw_batch2", conv_case("dw", 18, (2, 6, 5, 8), 0, (3, 3))),     # batch 2: never in place
        _with(_tflm("q_skip_conv", conv_case("conv", 19, (1, 5, 6, 8), 6, (1, 1), act="RELU")), SKIP_ZERO),
        _with(_tflm("q_skip_fc", fc_case(20, 2, 16, 6, act="RELU")), SKIP_ZERO),
        _tflm("q_add_relu", binary_case("add", 3, (1, 4, 5, 6), (1, 4, 5, 6), "RELU")),
        _tflm("q_mul_bcast", misc_binary("mul", 4, (1, 5, 7, 6), (1, 5, 1, 1), "RELU")),
        _tflm("q_sub_bcast", misc_binary("sub", 5, (1, 5, 7, 6), (1, 1, 1, 6))),
        _tflm("q_avg_pool", pool_case("avg_pool", 6, (1, 7, 5, 5), (3, 3), (2, 2), "SAME", "RELU")),
        _tflm("q_max_pool", pool_case("max_pool", 7, (1, 8, 10, 3), (2, 2), (2, 2))),
        _tflm("q_softmax", unary_case("softmax", 8, (2, 9))),
        _tflm("q_logistic", unary_case("logistic", 9, (1, 16, 16), full_range=True)),
        _tflm("q_tanh", unary_case("tanh", 10, (3, 11))),
        _tflm("q_concat", concat_case(11, [(1, 3, 4, 2), (1, 3, 4, 5)])),
        _tflm("q_mean", mean_case(12, (1, 6, 7, 5), (1, 2), True)),
        _tflm_bytes("q_strided_slice", tflm_misc.strided_slice((2, 7, 9), (2, 3, 3), [0, 1, 8], [2, 7, 0], [1, 2, -3],
                                                               q), [i8(2, 7, 9)]),
        _tflm_bytes("q_split_v", tflm_misc.split_v((4, 9), [2, -1, 3], 1, q), [i8(4, 9)]),
        _tflm_bytes("q_gather", tflm_misc.gather((3, 7, 4), [[6, 0], [2, 5]], 1, q), [i8(3, 7, 4)]),
        _tflm_bytes("q_prelu", tflm_misc.prelu((1, 5, 4, 6), i8(1, 1, 6), (0.05, -7), (0.01, 3), (0.04, 10)),
                    [i8(1, 5, 4, 6)]),
        _tflm_bytes("q_resize_bilinear", tflite_resize("bilinear", (1, 5, 7, 3), (8, 11), False, True, q=q),
                    [i8(1, 5, 7, 3)]),
        _tflm_bytes("q_resize_nearest", tflite_resize("nearest", (1, 6, 4, 2), (3, 9), True, False, q=q),
                    [i8(1, 6, 4, 2)]),
    ]
    w = rng.integers(-127, 128, (3, 3, 3, 4), dtype=np.int8)
    convt = tflite_convt.transpose_conv_int8((1, 5, 6, 4), w, rng.integers(-3000, 3000, 3, dtype=np.int32),
                                             (0.05, 5), rng.uniform(0.002, 0.02, 3), (0.2, -3), (10, 12),
                                             (2, 2), "SAME", "RELU")
    out.append(_tflm_bytes("q_conv_transpose", convt, [i8(1, 5, 6, 4)]))
    return out + _sparse_models()


def _sparse_models() -> list[FamilyModel]:
    """Pruned (75%, one zero channel) conv, depthwise and FC for the sparse kernels (lower/conv/sparse.py;
    on cortex-m4 the SMLAD pair layout, lower/conv/sparse_dsp.py; the depthwise in place, dw_plane), and a
    2:4 conv with 8 input channels (pair layout: the SXTAB16 widening, all four cross words per quad)."""
    from tests.builders.sparse_models import pruned_case
    from tests.builders.tflm_cases import conv_case, fc_case
    cases = (("q_sparse_conv", conv_case("conv", 13, (1, 7, 9, 6), 5, (3, 3), (1, 2))),
             ("q_sparse_fc", fc_case(14, 2, 37, 9)),
             ("q_sparse_pairs24", conv_case("conv", 15, (1, 6, 9, 8), 6, (3, 3))),
             ("q_sparse_dw", conv_case("dw", 16, (1, 7, 6, 8), 0, (3, 3))))     # in place: the sparse dw_plane
    return [FamilyModel(name, model, inputs, [want], options={"sparse": "on"})
            for name, (model, inputs, want) in ((n, pruned_case(c, "2:4" if n.endswith("24") else "75")) for n, c in cases)]


def _ort_int8(name, model, x, lsb, **kw) -> FamilyModel:
    """A QDQ model; its output is int8, or float after a DequantizeLinear whose scale is one step."""
    from onnx import numpy_helper
    step = 1.0
    out = model.graph.output[0]
    if out.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
        node = next(n for n in model.graph.node if out.name in n.output)
        inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
        step = float(inits[node.input[1]])
    return FamilyModel(name, model, [x], ort_run(model, {model.graph.input[0].name: x}), lsb=lsb, step=step,
                       **kw)


def int8_qdq_models(tmp: Path) -> list[FamilyModel]:
    """int8 QDQ graphs without a TFLM twin: onnxruntime-quantized float graphs (batched matmul, layer
    norm, softmax at scale 1/255, pad + hardswish + transpose, sibling convs), a poly-fused MobileNetV2
    residual block, a downsampling block (poly-fused chain + conv with the residual add in place)."""
    from tests.builders import DOWN_BLOCK, MBV2_RESIDUAL, qdq_chain, quantize_qdq
    from tests.builders.int8_models import sibling_int8_convs

    def quantized(sub, nodes, inputs, outputs, opset, inits=None):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
        return quantize_qdq(model_of(nodes, inputs, outputs, opset, inits), tmp / sub)

    ln = quantized("ln", [N("LayerNormalization", ["X", "g", "b"], ["Y"])], {"X": np.zeros((2, 3, 8))},
                   {"Y": [2, 3, 8]}, 17, {"g": rand(8, seed=1, low=0.5), "b": rand(8, seed=2)})
    bmm = quantized("bmm", [N("MatMul", ["X", "W"], ["m"]), N("Transpose", ["m"], ["t"], perm=[0, 2, 1]),
                            N("MatMul", ["m", "t"], ["Y"])], {"X": np.zeros((2, 4, 6))}, {"Y": [2, 4, 4]}, 13,
                    {"W": rand(6, 5, seed=3)})
    sm = quantized("sm", [N("Softmax", ["X"], ["Y"], axis=-1)], {"X": np.zeros((3, 10))}, {"Y": [3, 10]}, 13)
    misc = quantized("misc", [N("Pad", ["X", "p"], ["pd"]), N("HardSwish", ["pd"], ["h"]),
                              N("Transpose", ["h"], ["t"], perm=[0, 2, 3, 1]), N("Mul", ["t", "t"], ["Y"])],
                     {"X": np.zeros((1, 4, 5, 6))}, {"Y": [1, 7, 9, 4]}, 14,
                     {"p": np.array([0, 0, 1, 2, 0, 0, 1, 1], I64)})
    chain, xc = qdq_chain((1, 12, 12, 8), MBV2_RESIDUAL)
    down, xd = qdq_chain((1, 8, 8, 8), DOWN_BLOCK)         # a 2-stage chain, then a conv + add over the skip
    (tmp / "sib").mkdir(parents=True, exist_ok=True)
    sib = sibling_int8_convs(3, tmp / "sib")
    return [
        _ort_int8("q_layer_norm", ln, rand(2, 3, 8), 2),
        _ort_int8("q_batch_matmul", bmm, rand(2, 4, 6, seed=1), 2),
        _ort_int8("q_softmax_any_scale", sm, rand(3, 10, seed=2) * 3, 1),
        _ort_int8("q_pad_hardswish_transpose", misc, rand(1, 4, 5, 6, seed=3), 1),
        _ort_int8("q_poly_chain", chain, xc, 2),
        _ort_int8("q_down_block", down, xd, 2),
        _ort_int8("q_horizontal", sib, rand(1, 3, 6, 5, seed=4), 1, siblings_with_copies=True),
    ]


# the tuning knobs of the arm_dsp SMLAD blocks (lower/group_knobs.py), set on every kernel of a copy of
# these models on cortex-m4: int16 pre-widened weights read by 8-byte aligned LDRD (simd_host.h asserts
# the alignment), 4 and 2 channels per block, a short unroll (a loop over divisor bodies)
KNOBBED = {"q_conv_s2_valid": {"weights": "int16", "channels": 4, "unroll": 4},
           "q_horizontal": {"weights": "int16", "channels": 2},
           "q_poly_chain": {"weights": "int16", "channels": 2},
           "q_down_block": {"weights": "int16", "channels": 4}}


def knobbed_models(models: list[FamilyModel]) -> list[FamilyModel]:
    """Copies of the KNOBBED models for cortex-m4, compiled with those knobs on every kernel."""
    from tinyfuse.cost.features import group_signature
    from tinyfuse.cost.records import TuningRecords
    out = []
    for m in models:
        if m.name not in KNOBBED:
            continue
        base = m.compile("cortex-m4")
        config = {"kernels": {group_signature(s.call.op, "cortex-m4"): KNOBBED[m.name] for s in base.steps}}
        out.append(FamilyModel(f"{m.name}_kn", m.model, m.inputs, m.want, m.tol, m.lsb, m.step, ("cortex-m4",),
                               m.siblings_with_copies, m.frames,
                               {**m.options, "tuning_records": TuningRecords(config=config)}))
    return out


def all_models(tmp: Path) -> list[FamilyModel]:
    """Every family model; the recurrent, border-pad, pool-indices, resize-taps and stateful ones come
    from tests/builders/sanit_families_state.py; knobbed copies of a few (KNOBBED)."""
    from tests.builders.sanit_families_ops import new_op_models
    from tests.builders.sanit_families_state import onnx_new_models, stateful_models
    models = float_models() + int8_tflm_models() + int8_qdq_models(tmp) + onnx_new_models() + stateful_models() \
        + new_op_models()
    return models + knobbed_models(models)
