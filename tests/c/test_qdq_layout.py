"""onnxruntime-quantized NCHW models stay integer end to end (issue 14; passes shift_uint8, qdq_layout).

A MobileNetV1-style net (tests/builders/mobilenet_v1.py, seeded weights) quantized by onnxruntime's
quantize_static in QDQ form, with uint8 activations ("U8S8", onnxruntime's x86 choice) and with int8
activations (and the QOperator form with uint8 activations): every kernel but the model boundary is int8 NHWC, the float image is
quantized and transposed by one kernel in place over it (no float32 NHWC copy in the arena), a 4-D float output is transposed as int8
with its dequantize in the same kernel. Oracles: onnxruntime (outputs within a few LSB of the
output scale), the per-kernel real-arithmetic oracle (every int8 kernel within 1 LSB), and byte
counts computed from the graph's tensor types.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import numpy_helper

from tinyfuse.driver import compile_model
from tinyfuse.harness.real_oracle import MAX_LSB, check_kernels
from tinyfuse.ir import Constant
from tests.builders.mobilenet_v1 import mobilenet_v1, quantize_static_qdq
from tests.conftest import compile_and_run, ort_run, require_programs

HW = 32
OUT_LSB = 3      # output within 3 steps of the output scale of onnxruntime's own int8 run


def _bytes(ty) -> int:
    return int(np.prod(ty.shape, dtype=np.int64)) * np.dtype(str(ty.dtype)).itemsize


def _largest_pair(result) -> int:
    """The largest bytes one kernel reads and writes at once (its activation operands + its output):
    the arena a chain of kernels needs without in-place reuse, from the graph's types."""
    return max(sum(_bytes(a.ty) for a in s.call.args if not isinstance(a, Constant)) + _bytes(s.call.ty)
               for s in result.steps)


def _output_step(model) -> float:
    """The scale of the DequantizeLinear that produces the model's output."""
    out = model.graph.output[0].name
    dq = next(n for n in model.graph.node if n.op_type == "DequantizeLinear" and n.output[0] == out)
    return float(next(numpy_helper.to_array(t) for t in model.graph.initializer if t.name == dq.input[1]))


def _check_oracles(model, tmp_path):
    """Compile, run the C, compare with onnxruntime and the per-kernel real oracle. Returns the result."""
    require_programs("gcc")
    x = np.random.default_rng(5).standard_normal((1, 3, HW, HW)).astype(np.float32) * 1.5
    (got,), result = compile_and_run(model, [x], tmp_path)
    want = ort_run(model, {"x": x})[0]
    assert got.shape == want.shape
    assert float(np.max(np.abs(got - want))) <= OUT_LSB * _output_step(model) + 1e-6
    report = check_kernels(result, [x], tmp_path / "trace", "half_even")
    s = report.summary()
    assert s["checked"] >= 8 and s["unchecked"] == 0, s
    assert s["over"] == 0 and s["max_lsb"] <= MAX_LSB, [k for k in report.kernels if not k.holds]
    return result


def _layers(model) -> int:
    return sum(n.op_type in ("Conv", "Gemm", "GlobalAveragePool") for n in model.graph.node)


@pytest.mark.parametrize("fmt,activation", [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8")])
def test_mobilenet_v1_int8_end_to_end(tmp_path, fmt, activation):
    float_model = mobilenet_v1(HW)
    model = quantize_static_qdq(float_model, tmp_path, activation, fmt=fmt)
    result = _check_oracles(model, tmp_path)
    dtypes = [str(s.call.ty.dtype) for s in result.steps]
    assert dtypes[:-1] == ["int8"] * (len(dtypes) - 1) and dtypes[-1] == "float32", dtypes
    # the image is read NCHW float and written int8 NHWC by one kernel, in place over its last bytes
    assert result.kernels[0].ops == ["transpose", "qnn.quantize"], result.kernels[0].ops
    assert result.memory.inplace[0].rule == "transpose"
    in_bytes = 3 * HW * HW * 4
    assert in_bytes <= result.arena_bytes <= max(in_bytes, _largest_pair(result))
    # kernels: one per conv/pool/gemm layer plus the input's quantize-and-transpose
    unfused = compile_model(model, disabled_passes=("poly_fuse",))
    assert len(unfused.kernels) == _layers(float_model) + 1
    assert len(result.kernels) <= len(unfused.kernels)


def test_uint8_activations_compile_as_their_int8_twin(tmp_path):
    """The same float net quantized with uint8 and with int8 activations gives the same kernels and arena
    (the calibration is the same, the zero points differ by 128)."""
    float_model = mobilenet_v1(HW)
    u8 = compile_model(quantize_static_qdq(float_model, tmp_path, "QUInt8"))
    i8 = compile_model(quantize_static_qdq(float_model, tmp_path, "QInt8"))
    assert [k.ops for k in u8.kernels] == [k.ops for k in i8.kernels]
    assert u8.arena_bytes == i8.arena_bytes


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_4d_output_transposed_as_int8(tmp_path, activation):
    """A conv stack whose output is the last NCHW activation: the layout transpose back to NCHW reads
    int8 and dequantizes in the same kernel; no float NHWC copy of the output."""
    model = quantize_static_qdq(mobilenet_v1(HW, head=False), tmp_path, activation)
    result = _check_oracles(model, tmp_path)
    last = result.steps[-1]
    assert result.kernels[-1].ops == ["transpose", "qnn.dequantize"]
    assert str(last.call.args[0].ty.dtype) == "int8" and str(last.call.ty.dtype) == "float32"
    assert sum(str(s.call.ty.dtype) == "float32" for s in result.steps) == 1
    out_bytes, in_bytes = _bytes(last.call.ty), 3 * HW * HW * 4
    assert result.arena_bytes <= max(in_bytes, out_bytes + out_bytes // 4, _largest_pair(result))
