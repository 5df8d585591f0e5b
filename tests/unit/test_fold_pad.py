"""fold_pad (issue 14): an explicit constant Pad folds into the padding of the conv / pool reading it
exactly when that padding stands for the pad value, and the numbers do not change. Oracle: onnxruntime
on the ONNX model (independent of tinyfuse), and the pipeline's numpy interpreter with the pass on and
off; the decision (folded or not) is read from the IR after the pipeline."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse.frontend import from_onnx
from tinyfuse.ir import Function, iter_calls
from tinyfuse.ir.interpreter import run_module
from tinyfuse.options import CompileOptions
from tinyfuse.passes.pipeline import PASS_NAMES, run_pipeline
from tests.builders.onnx_pad import CASES, X
from tests.conftest import ort_run


def _pads_left(mod) -> int:
    """nn.pad calls in the module, inside the fused kernel Functions too."""
    def count(fn) -> int:
        return sum(count(c.op) if isinstance(c.op, Function) else c.op == "nn.pad" for c in iter_calls(fn))
    return count(mod.main)


def test_fold_pad_is_a_pass_that_can_be_disabled():
    assert "fold_pad" in PASS_NAMES


@pytest.mark.parametrize("name", list(CASES))
def test_fold_pad_decision_and_numbers(name):
    model, folds = CASES[name]
    (want,) = ort_run(model, {"x": X})
    got = {}
    for disabled in ((), ("fold_pad",)):
        mod = run_pipeline(from_onnx(model), CompileOptions.resolve(disabled_passes=disabled))
        got[disabled] = (_pads_left(mod), run_module(mod, [X])[0])
    (on_pads, on), (off_pads, off) = got[()], got[("fold_pad",)]
    assert off_pads == 1, f"{name}: the Pad is in the graph without the pass"
    assert on_pads == (0 if folds else 1), f"{name}: expected folds={folds}, {on_pads} pad(s) left"
    atol = 1e-5 * float(np.max(np.abs(want[np.isfinite(want)])))
    for what, got_y in (("on", on), ("off", off)):       # a window all in padding: -inf both sides
        np.testing.assert_allclose(got_y, want, rtol=1e-5, atol=atol, err_msg=f"{name}, fold_pad {what}")


def test_two_convs_on_one_padded_input_share_one_transpose():
    """An NCHW input padded once and read by two convs: both fold, through one input transpose."""
    from onnx import helper
    from tests.builders.float_models import model_of
    from tests.builders.onnx_pad import W, _pad
    nodes = [_pad([0, 0, 1, 1, 0, 0, 1, 1]), helper.make_node("Conv", ["p", "w"], ["a"]),
             helper.make_node("Conv", ["p", "w"], ["b"], strides=[2, 2])]
    model = model_of(nodes, {"x": X}, ["a", "b"], inits={"pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "w": W})
    want = ort_run(model, {"x": X})
    mod = run_pipeline(from_onnx(model), CompileOptions.resolve(disabled_passes=("fuse_ops", "poly_fuse", "fold_input_transpose")))
    ops = [c.op.body.op if isinstance(c.op, Function) else c.op for c in iter_calls(mod.main)]
    assert _pads_left(mod) == 0 and ops.count("transpose") == 3, ops      # the input's and the outputs'
    for got, ref in zip(run_module(mod, [X]), want):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
