"""harness/layer_map.py: which TFLite tensor a kernel's output is (the TFLM column of run --per-layer).
Expected tensors are read off the .tflite's operator list (kws_ref_model: operators 0-8 write tensors
22-30, AVERAGE_POOL_2D 31, the RESHAPE view 32, FULLY_CONNECTED 33, SOFTMAX 34)."""
from __future__ import annotations

from types import SimpleNamespace

from tinyfuse.driver import compile_model
from tinyfuse.harness.layer_map import kernel_tensors
from tests.conftest import shared_or_skip


def _step(spans, shape, dtype="int8"):
    fn = SimpleNamespace(source_spans=lambda: list(spans))
    return SimpleNamespace(call=SimpleNamespace(op=fn), kernel=SimpleNamespace(out=SimpleNamespace(shape=shape,
                                                                                                   dtype=dtype)))


def test_kws_kernels_are_the_operators_output_tensors():
    path = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    got = kernel_tensors(compile_model(path, target="cortex-m4"), path)
    assert [t.index for t in got] == [*range(22, 31), 31, 33, 34]
    assert [(t.op, t.op_index, t.shape) for t in got[-2:]] == [("FULLY_CONNECTED", 11, (1, 12)), ("SOFTMAX", 12, (1, 12))]


def test_only_a_kernel_that_is_the_whole_tensor_maps():
    """The last of two kernels ending in one operator is its tensor (the first is a part of it); a
    transposed layout, a span naming another operator, a dtype of its own, and a kernel with no
    source layer map to nothing; the highest operator index of a fused group decides."""
    path = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    nhwc, nchw = (1, 25, 5, 64), (1, 64, 25, 5)
    steps = [_step(["conv_2d_0"], nhwc), _step(["conv_2d_0"], nhwc), _step(["depthwise_conv_2d_1"], nchw),
             _step(["add_1"], nhwc), _step(["conv_2d_2"], nhwc, "int32"), _step([], nhwc),
             _step(["conv_2d_4", "depthwise_conv_2d_3"], (25, 5, 64))]
    got = kernel_tensors(SimpleNamespace(steps=steps), path)
    assert [t and t.index for t in got] == [None, 22, None, None, None, None, 26]


def test_onnx_model_has_no_tflite_tensors():
    path = shared_or_skip("models", "onnx", "ad01_int8.onnx")
    result = compile_model(path, target="host")
    assert kernel_tensors(result, path) == [None] * len(result.steps)
