"""The sparse kernels (lower/conv/sparse.py, ``--sparse``): pruned one-op int8 models bit-exact with
TensorFlow Lite Micro on the same pruned .tflite (tests/builders/sparse_models.py: magnitude pruning
by examples/prune_models.py plus one all-zero output channel), the cost model's choice (auto: dense
for unpruned weights; off: dense always), and the pruned KWS through the in-place sparse kernels."""
from __future__ import annotations

import numpy as np
import pytest

from tests.builders import conv_case, fc_case
from tests.builders.sparse_models import prune_module, pruned_case, pruned_tflite
from tests.conftest import compile_and_run, shared_or_skip

CASES = {
    "conv3x3-same": lambda: conv_case("conv", 0, (1, 7, 9, 6), 5, (3, 3)),
    "conv3x3-s2-relu": lambda: conv_case("conv", 1, (1, 9, 11, 5), 6, (3, 3), (2, 2), act="RELU"),
    "conv5x3-d2": lambda: conv_case("conv", 2, (1, 8, 10, 3), 4, (5, 3), dilation=(2, 2)),
    "conv1x1-batch2": lambda: conv_case("conv", 3, (2, 5, 7, 8), 6, (1, 1), padding="VALID", act="RELU6"),
    "dw-mult2-s2": lambda: conv_case("dw", 4, (1, 9, 8, 4), 0, (3, 3), (2, 2), mult=2),
    "fc-batch3": lambda: fc_case(5, 3, 37, 10),
}


def _variants(result) -> set[str]:
    return {s.kernel.variant for s in result.steps}


@pytest.mark.parametrize("level", ["75", "2:4"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_pruned_oneop_equals_tflm(name, level, tmp_path):
    model, inputs, want = pruned_case(CASES[name](), level)
    outs, result = compile_and_run(model, inputs, tmp_path, sparse="on")
    assert "sparse" in _variants(result)
    np.testing.assert_array_equal(outs[0], want)
    assert len(np.unique(want)) > 6, "the case saturates: a weak oracle"


def test_sparse_off_and_auto_keep_dense_kernels(tmp_path):
    case = conv_case("conv", 0, (1, 7, 9, 6), 5, (3, 3))
    pruned, inputs, want = pruned_case(case, "90")
    from tinyfuse.driver import compile_model
    assert "sparse" not in _variants(compile_model(pruned, sparse="off"))
    assert "sparse" not in _variants(compile_model(case.tflm))          # unpruned: dense under auto
    outs, result = compile_and_run(pruned, inputs, tmp_path)             # 90% zeros: sparse under auto
    assert "sparse" in _variants(result)
    np.testing.assert_array_equal(outs[0], want)
    # step fission slices dense kernels only: auto keeps the pruned model dense under a step budget
    stepped = compile_model(pruned, realtime={"max_step_instructions": 20000})
    assert "sparse" not in _variants(stepped)


def test_pruned_kws_in_place_equals_tflm(tmp_path):
    """The pruned KWS runs its pointwise convs in place through a pixel buffer and its depthwise
    convs through a plane: the sparse twins of both kernels, bit-exact with TFLM."""
    from tests.conftest import tflm_run
    data = shared_or_skip("models", "tflite", "kws_ref_model.tflite").read_bytes()
    model = pruned_tflite(data, "90", zero_channel=None)
    x = np.random.default_rng(0).integers(-128, 128, (1, 49, 10, 1), dtype=np.int8)
    outs, result = compile_and_run(model, [x], tmp_path)
    sparse = [s.kernel for s in result.steps if s.kernel.variant == "sparse"]
    assert any("plane" in k.loops for k in sparse) and any("memcpy" in k.loops for k in sparse)
    np.testing.assert_array_equal(outs[0], tflm_run(model, [x])[0])


def test_prune_levels():
    pm = prune_module()
    w = np.random.default_rng(0).integers(-127, 128, (8, 3, 3, 8)).astype(np.int8)
    for level, frac in (("50", 0.5), ("75", 0.75), ("90", 0.9)):
        p = pm.prune(w, "conv", level)
        assert np.count_nonzero(p == 0) == int(frac * w.size)
        assert np.all((p == 0) | (p == w))
        kept = np.abs(w[p != 0]).min()
        assert kept >= np.abs(w[(p == 0) & (w != 0)]).max()          # magnitude: the smallest went
    groups = pm.prune(w, "conv", "2:4").reshape(8, -1, 4)
    assert np.all(np.count_nonzero(groups, axis=2) <= 2)
