"""The SMLAD pair layout of the sparse variant on arm_dsp targets (lower/conv/sparse_dsp.py,
ops/sparse_pairs.py): pruned one-op int8 conv / fully connected models compiled for cortex-m4 and
built on the host through simd_host.h (portable stand-ins of the DSP intrinsics), bit-exact with
TensorFlow Lite Micro on the same pruned .tflite; and the pair cover itself against hand-counted
pairs (2:4 keeps exactly one pair per quad: half the MACs)."""
from __future__ import annotations

import numpy as np

from tests.builders import conv_case, fc_case
from tests.builders.sparse_models import pruned_case
from tests.conftest import require_programs

CASES = {
    "conv3x3-same": lambda: conv_case("conv", 40, (1, 7, 9, 6), 5, (3, 3)),
    "conv3x3-s2-relu": lambda: conv_case("conv", 41, (1, 9, 11, 8), 6, (3, 3), (2, 2), act="RELU"),
    "conv1x1-batch2": lambda: conv_case("conv", 42, (2, 5, 7, 8), 6, (1, 1), padding="VALID", act="RELU6"),
    "fc-batch3": lambda: fc_case(43, 3, 37, 10),
}


def test_pair_cover_counts():
    from tinyfuse.ops.sparse_pairs import pair_cover
    w = np.array([[1, 0, 0, 2, 0, 0, 0, 0, 3, 4, 0, 0], [0, 5, 6, 0, 0, 0, 7, 0, 1, 1, 1, 0]], np.int8)
    pc = pair_cover(w)
    assert list(pc["ptr"]) == [0, 2, 6] and list(pc["word"]) == [6, 4, 7, 3, 4, 5]
    assert [tuple(c) for c in pc["cross"]] == [(0, 3), (1, 2)] and pc["words"] == 8
    assert pc["wval"][0] == 1 | 2 << 16 and pc["wval"][3] == 7          # (w_a | w_b << 16), zero half
    rng = np.random.default_rng(0)
    w24 = rng.integers(1, 127, (16, 64)).astype(np.int8).reshape(16, 16, 4)
    for q in w24.reshape(-1, 4):
        q[rng.choice(4, 2, replace=False)] = 0
    pc = pair_cover(w24.reshape(16, 64))
    assert pc["pairs"] == 16 * 16 and pc["full_cross"]                   # one SMLAD per quad
    half = pc["R4"] // 2
    for k in range(16):                    # the kept pairs add up to the weights, element by element
        got = np.zeros(pc["R4"], np.int64)
        for j in range(pc["ptr"][k], pc["ptr"][k + 1]):
            wd = pc["word"][j]
            a, b = (2 * wd, 2 * wd + 1) if wd < half else pc["cross"][wd - half]
            lo, hi = np.array([pc["wval"][j]], np.int32).view(np.int16)
            got[a] += lo
            got[b] += hi
        np.testing.assert_array_equal(got, w24.reshape(16, 64)[k])


def test_pruned_oneop_pairs_equal_tflm(tmp_path):
    require_programs("gcc")
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.multi import build_host_multi, run_host_multi
    runs = []
    for name, make in sorted(CASES.items()):
        for level in ("75", "2:4"):
            model, inputs, want = pruned_case(make(), level)
            tag = f"sd_{name.replace('-', '_')}_{level.replace(':', 'of')}"
            result = compile_model(model, target="cortex-m4", name=tag, sparse="on")
            sparse = [s.kernel for s in result.steps if s.kernel.variant == "sparse"]
            assert sparse and all("tf_smlad" in k.loops for k in sparse), tag
            runs.append((tag, inputs, want, result))
    results = [r for *_, r in runs]
    exe = build_host_multi(results, tmp_path, sanitize=True, guard=64, arena_fill=0xA5, simd_host=True)
    outs = run_host_multi(exe, results, [inputs for _, inputs, _, _ in runs])
    for (tag, _, want, _), (got,) in zip(runs, outs):
        np.testing.assert_array_equal(got.reshape(want.shape), want, err_msg=tag)
        assert len(np.unique(want)) > 6, f"{tag}: the case saturates: a weak oracle"
