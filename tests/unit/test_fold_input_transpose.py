"""fold_input_transpose in the IR (issue 14): after the pass the conv reads the NCHW model input with
``input_layout='NCHW'`` and the numpy reference of the rewritten graph (ops/conv.py compute) equals
onnxruntime; ``--disable-pass fold_input_transpose`` keeps the transpose."""
from __future__ import annotations

import numpy as np

from tests.builders.onnx_pad import CASES, X
from tests.conftest import ort_run
from tinyfuse.frontend import from_onnx
from tinyfuse.ir import Function, iter_calls
from tinyfuse.ir.interpreter import run_module
from tinyfuse.options import CompileOptions
from tinyfuse.passes.pipeline import PASS_NAMES, run_pipeline

UNFUSED = ("fuse_ops", "poly_fuse")


def _calls(mod):
    return [c.op.body if isinstance(c.op, Function) else c for c in iter_calls(mod.main)]


def test_conv_reads_the_nchw_input_and_equals_onnxruntime():
    model, _ = CASES["conv-asym-zero"]
    (want,) = ort_run(model, {"x": X})
    mod = run_pipeline(from_onnx(model), CompileOptions.resolve(disabled_passes=UNFUSED))
    calls = _calls(mod)
    assert [c.op for c in calls] == ["nn.conv2d", "transpose"], [c.op for c in calls]   # the output's stays
    conv = calls[0]
    assert conv.attrs["input_layout"] == "NCHW" and conv.attrs["data_layout"] == "NHWC"
    assert conv.args[0].ty.shape == X.shape                     # the NCHW image itself
    (got,) = run_module(mod, [X])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_disable_pass_keeps_the_input_transpose():
    assert "fold_input_transpose" in PASS_NAMES
    model, _ = CASES["conv-asym-zero"]
    mod = run_pipeline(from_onnx(model), CompileOptions.resolve(disabled_passes=UNFUSED + ("fold_input_transpose",)))
    assert [c.op for c in _calls(mod)] == ["transpose", "nn.conv2d", "transpose"]
    assert all(c.attrs.get("input_layout") is None for c in _calls(mod))
