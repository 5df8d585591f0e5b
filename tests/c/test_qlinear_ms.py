"""com.microsoft QLinear* ops (onnxruntime contrib ops: QLinearAveragePool, QLinearLeakyRelu,
QLinearConcat, QLinearGlobalAveragePool, QLinearSigmoid, QLinearAdd, QLinearMul), int8 and uint8 at
the model's I/O, against onnxruntime (which implements them: dequantize, float op, requantize in
float; 1 LSB apart from fixed point at most) and the per-kernel real-arithmetic oracle."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tinyfuse.harness.real_oracle import check_kernels
from tests.conftest import ort_run, require_programs

ELEM = {"int8": TensorProto.INT8, "uint8": TensorProto.UINT8}
SHAPE = (1, 4, 7, 6)
# op: (attributes, number of data inputs, output shape)
CASES = {
    "QLinearAveragePool": ({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
                            "count_include_pad": 1}, 1, (1, 4, 4, 3)),
    "QLinearAveragePool_nopad": ({"kernel_shape": [2, 3], "strides": [1, 2]}, 1, (1, 4, 6, 2)),
    "QLinearLeakyRelu": ({"alpha": 0.1}, 1, SHAPE),
    "QLinearGlobalAveragePool": ({}, 1, (1, 4, 1, 1)),
    "QLinearSigmoid": ({}, 1, SHAPE),
    "QLinearConcat": ({"axis": 1}, 2, (1, 8, 7, 6)),
    "QLinearAdd": ({}, 2, SHAPE),
    "QLinearMul": ({}, 2, SHAPE),
}


def _model(case: str, dtype: str):
    """One com.microsoft node with quantized I/O of ``dtype``; input scales 0.05 / 0.03, output 0.04."""
    attrs, n_in, out_shape = CASES[case]
    op = case.split("_")[0]
    zp = {"int8": (-7, 11, 3), "uint8": (121, 140, 128)}[dtype]
    np_t = np.dtype(dtype)
    inits = [numpy_helper.from_array(np.array(v, t), n) for n, v, t in
             (("s0", 0.05, np.float32), ("z0", zp[0], np_t), ("s1", 0.03, np.float32), ("z1", zp[1], np_t),
              ("sy", 0.04, np.float32), ("zy", zp[2], np_t))]
    names = [f"x{i}" for i in range(n_in)]
    if op == "QLinearConcat":
        ins = ["sy", "zy", "x0", "s0", "z0", "x1", "s1", "z1"]
    elif n_in == 2:
        ins = ["x0", "s0", "z0", "x1", "s1", "z1", "sy", "zy"]
    else:
        ins = ["x0", "s0", "z0", "sy", "zy"]
    node = helper.make_node(op, ins, ["y"], domain="com.microsoft", **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, ELEM[dtype], SHAPE) for n in names],
                          [helper.make_tensor_value_info("y", ELEM[dtype], out_shape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m, names


@pytest.mark.filterwarnings("ignore:legalize_qdq")
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_com_microsoft_qlinear_op_vs_onnxruntime(case, dtype, tmp_path):
    require_programs("gcc")
    model, names = _model(case, dtype)
    result = compile_model(model)
    assert [t.dtype for t in result.inputs + result.outputs] == [dtype] * (len(names) + 1)
    info = np.iinfo(dtype)
    exe = build_host(result, tmp_path)
    for seed in range(2):
        rng = np.random.default_rng(seed)
        xs = [rng.integers(info.min, info.max + 1, SHAPE).astype(dtype) for _ in names]
        (got,) = run_host(exe, result, xs)
        (want,) = ort_run(model, dict(zip(names, xs)))
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.max(np.abs(got.astype(int) - want.astype(int))) <= 1, (case, dtype, seed)
        report = check_kernels(result, xs, tmp_path / f"trace{seed}", "half_even")
        s = report.summary()
        assert report.holds and s["unchecked"] == 0 and s["checked"] >= 1, s
