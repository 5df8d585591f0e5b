"""--input-shape and --bind (frontend/onnx/specialize.py) and the errors of compile-time control flow
(frontend/onnx/control_flow.py): one line naming the input, dim, node, trip count and the flag."""
from __future__ import annotations

import json
import warnings

import numpy as np

import pytest
from onnx import TensorProto, helper

from tests.builders import graph_models as gm
from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.frontend.onnx.specialize import InputShape, parse_input_shape


def test_parse_input_shape():
    assert parse_input_shape("x=1x3x224x224") == InputShape("x", dims=(1, 3, 224, 224))
    assert parse_input_shape("x=1,3,8") == InputShape("x", dims=(1, 3, 8))
    assert parse_input_shape("x=") == InputShape("x", dims=())
    assert parse_input_shape("x=batch=4") == InputShape("x", dim="batch", value=4)
    for bad in ("x", "x=1xa", "=1x2", "x=b=c", "x=b=-1"):
        with pytest.raises(TinyfuseError, match="--input-shape"):
            parse_input_shape(bad)


def test_symbolic_batch_alone_defaults_to_one_with_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = compile_model(gm.dynamic_conv(("batch", 3, 8, 8)))
    assert r.inputs[0].shape == (1, 3, 8, 8)
    msgs = [str(w.message) for w in caught if "batch" in str(w.message)]
    assert len(msgs) == 1 and "'x' ('batch')" in msgs[0] and "--input-shape" in msgs[0]
    meta = json.loads(r.files["metadata.json"])["specialization"]
    assert meta["input_shapes"] == {"x": [1, 3, 8, 8]} and meta["batch_default"]


def test_other_dynamic_dims_are_one_error_naming_input_dim_and_flag():
    with pytest.raises(TinyfuseError) as e:
        compile_model(gm.dynamic_conv())
    msg = str(e.value)
    assert "\n" not in msg and "input 'x'" in msg and "dim 2 ('H')" in msg and "--input-shape x=H=SIZE" in msg


@pytest.mark.parametrize("shapes,want", [
    (["x=2x3x5x6"], (2, 3, 5, 6)),
    (["x=H=5", "x=W=6", "x=N=2"], (2, 3, 5, 6)),
    (["*=H=5", "x=3=6", "x=0=1"], (1, 3, 5, 6)),
])
def test_input_shape_fixes_the_dims_and_is_recorded(shapes, want):
    r = compile_model(gm.dynamic_conv(), input_shapes=shapes)
    assert r.inputs[0].shape == want and r.outputs[0].shape == (want[0], 4, *want[2:])
    assert json.loads(r.files["metadata.json"])["specialization"]["input_shapes"] == {"x": list(want)}
    assert f" *   --input-shape x={'x'.join(map(str, want))}\n" in r.files[f"{r.name}.h"]


@pytest.mark.parametrize("shapes,words", [
    (["x=1x4x8x8"], ["input 'x' dim 1 is 3", "gives 4"]),
    (["x=1x3x8"], ["rank 4", "gives 3 dims"]),
    (["y=1x3x8x8"], ["no input 'y'", "'x'"]),
    (["x=depth=3"], ["no symbolic dim 'depth'"]),
])
def test_input_shape_errors(shapes, words):
    with pytest.raises(TinyfuseError) as e:
        compile_model(gm.dynamic_conv(), input_shapes=shapes)
    assert all(w in str(e.value) for w in words), str(e.value)


def test_static_model_is_unchanged_by_specialization():
    """No flag and static shapes: the same model hash, no metadata key, no header line."""
    m = gm.dynamic_conv((1, 3, 8, 8))
    r = compile_model(m)
    import hashlib
    assert r.model_hash == hashlib.sha256(m.SerializeToString()).hexdigest()[:16]
    assert "specialization" not in json.loads(r.files["metadata.json"]) and "--input-shape" not in r.files[f"{r.name}.h"]


def test_bind_makes_the_input_a_constant(tmp_path):
    r = compile_model(gm.vad_stub(), bind=["sr=8000"])
    assert [t.name for t in r.inputs] == ["x"]
    assert r.bound_inputs["sr"].dtype == np.int64 and r.bound_inputs["sr"].shape == ()
    np.save(tmp_path / "sr.npy", np.array(16000, np.int64))
    r2 = compile_model(gm.vad_stub(), bind=[f"sr={tmp_path / 'sr.npy'}"])
    assert r2.bound_inputs["sr"].item() == 16000
    assert json.loads(r2.files["metadata.json"])["specialization"]["bound"] == {
        "sr": {"dtype": "int64", "shape": [], "value": [16000]}}


@pytest.mark.parametrize("bind,words", [
    (["rate=16000"], ["--bind rate", "no input 'rate'"]),
    (["sr=fast"], ["--bind sr=fast", "not a number"]),
    (["sr=16000.5"], ["int64", "not an integer"]),
])
def test_bind_errors(bind, words):
    with pytest.raises(TinyfuseError) as e:
        compile_model(gm.vad_stub(), bind=bind)
    assert all(w in str(e.value) for w in words), str(e.value)


def test_bind_npy_of_the_wrong_shape(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((1, 1, 8), np.float32))
    with pytest.raises(TinyfuseError, match=r"shape \[1, 1, 8\], input 'x' is declared \[1, 1, 16\]"):
        compile_model(gm.vad_stub(), bind=[f"x={tmp_path / 'x.npy'}", "sr=1"])


def test_if_on_a_runtime_condition_with_branches_of_different_shapes_names_node_and_output():
    with pytest.raises(TinyfuseError) as e:
        compile_model(gm.if_runtime_condition("ReduceMax"))
    msg = str(e.value)
    assert msg.startswith("node 'branchy' (If, opset 17): the condition 'c' is computed at run time and output 'y' "
                          "differs between the branches (float32 [1, 1] and float32 [1, 8])") and \
        "--bind NAME=VALUE" in msg and "\n" not in msg


def test_if_on_a_runtime_condition_with_a_branch_that_stops_names_the_input_to_bind():
    """A branch that converts only for other inputs (a VAD's 8 kHz branch at 16 kHz shapes): one error naming
    the If, the input, the branch and the branch's own error, and --bind."""
    with pytest.raises(TinyfuseError) as e:
        compile_model(gm.if_runtime_condition("Unique"))
    msg = str(e.value)
    assert msg.startswith("node 'branchy' (If, opset 17): the condition 'c' is computed at run time (it depends on "
                          "input 'use_relu'), so both branches are converted, and the then branch stops: "), msg
    assert "Unique" in msg and "--bind NAME=VALUE" in msg and "\n" not in msg


def test_if_on_a_runtime_condition_selects_between_both_branches():
    with pytest.warns(UserWarning, match="If 'branchy': its condition is computed at run time"):
        r = compile_model(gm.if_runtime_condition())
    assert [t.name for t in r.inputs] == ["x", "use_relu"]
    assert {"select", "nn.relu", "sigmoid"} <= {op for k in r.kernels for op in k.ops}
    for flag, op in (("true", "nn.relu"), ("false", "sigmoid")):
        r = compile_model(gm.if_runtime_condition(), bind=[f"use_relu={flag}"])
        assert [t.name for t in r.inputs] == ["x"] and r.kernels[0].ops == [op]


def test_loop_over_the_unroll_bound_names_node_and_trip_count():
    with pytest.raises(TinyfuseError) as e:
        compile_model(gm.rnn_loop(trip=100))
    assert str(e.value).startswith("node 'recur' (Loop, opset 17): trip count 100 is over the unroll bound of 64")


def test_loop_with_a_runtime_trip_count():
    m = gm.rnn_loop()
    g = m.graph
    del g.initializer[[i.name for i in g.initializer].index("M")]
    g.input.append(helper.make_tensor_value_info("M", TensorProto.INT64, []))
    with pytest.raises(TinyfuseError, match=r"node 'recur' \(Loop.*trip count 'M' is computed at run time.*input 'M'"):
        compile_model(m)
    assert compile_model(m, bind=["M=2"]).outputs[1].shape == (2, 1, 6)


def test_loop_whose_condition_never_turns_false():
    m = gm.rnn_loop(with_cond=True)
    m.graph.node[0].input[0] = ""               # no trip count: runs while the (constant true) condition holds
    with pytest.raises(TinyfuseError, match=r"node 'recur' \(Loop.*still true after 64 iterations"):
        compile_model(m)


def test_scan8_is_refused():
    m = gm.scan_sum(reverse=False, axis=0)
    m.opset_import[0].version = 8
    m.graph.node[0].input.insert(0, "")
    for a in list(m.graph.node[0].attribute):
        if a.name.startswith("scan_"):
            m.graph.node[0].attribute.remove(a)
    with pytest.raises(TinyfuseError, match=r"Scan-8 .* not supported"):
        compile_model(m)


def test_tflite_refuses_the_flags(tmp_path):
    tflite = tmp_path / "m.tflite"
    tflite.write_bytes(b"\x1c\x00\x00\x00TFL3" + b"\x00" * 64)
    with pytest.raises(TinyfuseError, match="apply to ONNX models"):
        compile_model(str(tflite), input_shapes=["x=1"])


def test_unbound_sample_rate_names_the_input_to_bind():
    """The VAD's condition is Equal(sr, 16000): unbound, both branches run (a select), with one warning
    naming the If and the input to bind."""
    with pytest.warns(UserWarning) as w:
        r = compile_model(gm.vad_stub())
    msg = str(w[0].message)
    assert msg.startswith("If 'p': its condition is computed at run time from input 'sr'"), msg
    assert "--bind NAME=VALUE" in msg and "\n" not in msg and len(w) == 1
    assert any("select" in k.ops for k in r.kernels)
