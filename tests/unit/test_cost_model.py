"""Learned cost model, kernel features and tuning records (no qemu: records are made up or taken
from a compile)."""
import json

import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper, numpy_helper

from tinyfuse.cost.features import FEATURE_NAMES, group_signature, kernel_features, record_key, vector
from tinyfuse.cost.learned import CostModel, fit, holdout_split, spearman
from tinyfuse.driver import compile_model
from tinyfuse.ir import Call, Function, post_order
from tinyfuse.cost.records import TuningRecords, apply_global, load_records
from tinyfuse.errors import TinyfuseError
from tinyfuse.tune.pareto import front
from tinyfuse.tune.ramlimit import parse_bytes


def _conv_model(path, c=4, k=8):
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((k, c, 3, 3)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["y"], ["z"])]
    g = helper.make_graph(nodes, "c", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 6, 6])],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, k, 6, 6])], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_signature_is_stable_across_compiles_and_ignores_names(tmp_path):
    path = _conv_model(tmp_path / "m.onnx")
    a = compile_model(path, target="cortex-m4")
    b = compile_model(path, target="cortex-m4", name="other")
    sa = [group_signature(s.call.op, "cortex-m4") for s in a.steps]
    sb = [group_signature(s.call.op, "cortex-m4") for s in b.steps]
    assert sa == sb and all(len(s) == 16 for s in sa)
    assert group_signature(a.steps[0].call.op, "cortex-m4") != group_signature(a.steps[0].call.op, "cortex-m0")
    assert group_signature(a.steps[0].call.op, "cortex-m4", "dw_plane") != sa[0]
    assert record_key(sa[0], {"variant": "ref"}) != record_key(sa[0], {"variant": "arm_dsp"})
    assert record_key(sa[0], {"variant": "ref"}) == record_key(sa[0], {"variant": "ref"})


def test_features_have_fixed_names_and_finite_values(tmp_path):
    r = compile_model(_conv_model(tmp_path / "m.onnx"), target="cortex-m4")
    for s in r.steps:
        f = kernel_features(s.call.op, s.kernel, r.options)
        v = vector(f)
        assert list(f) == list(FEATURE_NAMES) and np.all(np.isfinite(v))
    macs = max(kernel_features(s.call.op, s.kernel, r.options)["log_macs"] for s in r.steps)
    assert macs == np.log1p(6 * 6 * 8 * 9 * 4)


def _synthetic(n=120, seed=0):
    """Kernels whose cost is macs x ipm(variant) + 14 x outputs (as the analytical model assumes)."""
    rng = np.random.default_rng(seed)
    feats, y, sigs = [], [], []
    for i in range(n):
        macs, outs = int(rng.integers(100, 10 ** 6)), int(rng.integers(10, 10 ** 4))
        v = ["ref", "arm_dsp"][i % 2]
        f = {name: 0.0 for name in FEATURE_NAMES}
        f.update({"log_macs": np.log1p(macs), "log_out_elems": np.log1p(outs), f"variant={v}": 1.0,
                  "family=conv": 1.0, "log_analytical": np.log1p(macs * 5 + outs * 14)})
        feats.append(f)
        y.append(macs * (7.4 if v == "ref" else 2.4) + 14 * outs)
        sigs.append(f"g{i // 2}")
    return feats, np.array(y), sigs


def test_model_ranks_held_out_kernels_and_is_deterministic():
    feats, y, sigs = _synthetic()
    test = holdout_split(sigs, 0.25, seed=1)
    assert test.sum() == 30 and (holdout_split(sigs, 0.25, seed=1) == test).all()
    m1 = fit([f for f, t in zip(feats, test) if not t], y[~test])
    m2 = fit([f for f, t in zip(feats, test) if not t], y[~test])
    pred = m1.predict([f for f, t in zip(feats, test) if t])
    assert np.array_equal(pred, m2.predict([f for f, t in zip(feats, test) if t]))
    assert spearman(pred, y[test]) > 0.9
    m3 = CostModel.from_json(m1.to_json())
    assert np.allclose(m3.predict(feats[:5]), m1.predict(feats[:5]))


def test_spearman_basics():
    assert spearman([1, 2, 3], [10, 20, 30]) == 1.0
    assert spearman([1, 2, 3], [3, 2, 1]) == -1.0
    assert abs(spearman([1, 1, 2], [1, 2, 3]) - 0.866) < 1e-3      # ties: average ranks


def _build(key, arena, stack, instructions, changes=()):
    return {"kind": "model", "model_hash": "h", "target": "cortex-m4", "config_key": key,
            "config": {"global": {"order": "ir"}} if changes else {}, "arena_bytes": arena, "ram_stack": stack,
            "instructions": instructions, "changes": list(changes)}


def test_records_choose_the_fastest_build_that_fits_whatever_the_order(tmp_path):
    """--ram-limit picks the fewest instructions among measured builds with arena + stack <= limit; the
    choice record is the default; too small a limit names the smallest reachable arena + stack."""
    recs = [_build("a", 8000, 200, 900), _build("b", 16000, 200, 600, ["x"]), _build("c", 16000, 200, 600, ["y"]),
            {"kind": "choice", "model_hash": "h", "target": "cortex-m4",
             "knobs": {"poly_fuse": False, "scratch_bytes": 4096}}]
    for order in (recs, recs[::-1]):
        p = tmp_path / "r.jsonl"
        p.write_text("".join(json.dumps(r) + "\n" for r in order))
        r = load_records(p)
        assert r.config_for("h", "cortex-m4", 8200)["global"]["order"] == "memory"       # only "a" fits
        assert r.config_for("h", "cortex-m4", 16200)["global"]["order"] == "ir"          # b/c tie: key "b"
        g = r.config_for("h", "cortex-m4")["global"]                                    # earlier-format choice
        assert (g["poly_fuse"], g["scratch_bytes"]) == (False, 4096)
        assert apply_global(r.config_for("h", "cortex-m4"), ("poly_fuse",), None) == (("poly_fuse",), 4096)
        with pytest.raises(TinyfuseError, match="smallest reachable is arena 8000 B [+] stack 200 B = 8200 B"):
            r.config_for("h", "cortex-m4", 8199)
    with pytest.warns(UserWarning, match="no tuned choice for model other on cortex-m4"):     # nothing applies
        assert TuningRecords([]).config_for("other", "cortex-m4") is None


def test_parse_ram_limit_and_pareto_front():
    assert (parse_bytes("24K"), parse_bytes("1M"), parse_bytes("8000"), parse_bytes("6k")) == (24576, 1 << 20, 8000,
                                                                                               6144)
    with pytest.raises(TinyfuseError, match="--ram-limit 2X"):
        parse_bytes("2X")
    builds = [_build("a", 100, 0, 50), _build("b", 200, 0, 40, ["x"]), _build("c", 200, 0, 60, ["y"]),
              _build("d", 300, 0, 40, ["z"]), _build("e", 50, 0, 90, ["w"])]
    assert [r.config_key for r in front(builds)] == ["e", "a", "b"]


def test_compile_with_records_is_deterministic(tmp_path):
    """The same records give the same build; a recorded configuration forcing one kernel's variant
    (cost.knobs) reaches its lowering; the empty configuration is the default build byte for byte."""
    path = _conv_model(tmp_path / "m.onnx")
    base = compile_model(path, target="cortex-m4")
    sig = group_signature(base.steps[0].call.op, "cortex-m4")
    other = "ref" if base.steps[0].kernel.variant != "ref" else "arm_dsp"
    recs = [{"kind": "choice", "model_hash": base.model_hash, "target": "cortex-m4",
             "config": {"kernels": {sig: {"variant": other}}}}]
    a = compile_model(path, target="cortex-m4", tuning_records=recs)
    b = compile_model(path, target="cortex-m4", tuning_records=list(recs))
    assert a.files == b.files
    assert a.steps[0].kernel.variant == other or other == "arm_dsp"   # arm_dsp may decline a group: then ref
    empty = [{"kind": "choice", "model_hash": base.model_hash, "target": "cortex-m4", "config": {}}]
    assert compile_model(path, target="cortex-m4", tuning_records=empty).files == base.files


def _unfused_by_hand(call, simd: bool):
    """The cost table applied by hand to the members of a poly-fused group: MACs x instructions per
    MAC of (family, the unfused kernel: the portable conv, or on a DSP core the SMLAD conv / the
    depthwise quads) + 14 instructions per output element (cost.analytical's module doc)."""
    from tinyfuse.cost.analytical import IPM
    from tinyfuse.ops.conv_geom import conv_group
    total = 0.0
    for m in post_order(call.op.body):
        if isinstance(m, Call) and isinstance(m.op, Function):
            g = conv_group(m.op)[2]
            fam = "pw" if g.KH == g.KW == 1 else "dw" if g.depthwise else "conv"
            kind = ("depthwise.arm_dsp" if fam == "dw" else "conv2d.arm_dsp") if simd else "conv2d.ref"
            total += g.macs * IPM[fam, kind] + g.out_bytes * 14
    return round(total)


def test_kernels_ref_makes_poly_fuse_cost_the_ref_variant():
    """--target cortex-m4 --kernels ref: poly_fuse's estimate costs the members as the portable
    kernels that will run (not arm_dsp) and the fused chain is emitted without SIMD stages."""
    from tests.builders import MBV2_BLOCK, qdq_chain
    model, _ = qdq_chain((1, 12, 12, 8), MBV2_BLOCK, seed=0)
    for kernels, simd in (("ref", False), ("auto", True)):
        r = compile_model(model, target="cortex-m4", kernels=kernels)
        assert r.options.allows("arm_dsp") == simd
        fused = [s for s in r.steps if s.call.op.attrs.get("poly")]
        assert fused, kernels
        for s in fused:
            est = s.call.op.attrs["poly"]["estimate"]
            assert est["instructions_unfused"] == _unfused_by_hand(s.call, simd), kernels
            assert ("tinyfuse_simd.h" in s.kernel.headers) == simd, kernels
        assert any(k.variant.startswith("arm_") for k in r.kernels) == simd, kernels
