"""Decomposed layers recognised by the ONNX frontend (frontend/onnx/patterns.py): each spelling becomes
its fused op, the numpy interpreter of the converted IR equals onnx's reference evaluator and
onnxruntime on the original graph, and where every decomposed op converts on its own the IR with
the recognition disabled (--disable-pass) gives the same values."""
from __future__ import annotations

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

from tests.builders.graph_models import DECOMPOSED_CASES as CASES, FUSED, decomposed
from tests.conftest import assert_close_to, ort_run
from tinyfuse.frontend.onnx.patterns import FRONTEND_PASSES, recognize
from tinyfuse.frontend.onnx.reader import from_onnx
from tinyfuse.ir import Call, post_order
from tinyfuse.ir.interpreter import run_module

# every op of these spellings has its own converter: the IR without the recognition runs too
UNFUSED_CONVERTS = {("gelu", "erf_torch"), ("gelu", "erf_hf"), ("gelu", "erf_div2"), ("gelu", "tanh_products"),
                    ("gelu", "tanh_factored"), ("silu", "x_sig"), ("silu", "sig_x"), ("silu", "sig_shared")}


def ops_of(mod) -> list[str]:
    return [n.op for n in post_order(mod.main.body) if isinstance(n, Call) and isinstance(n.op, str)]


@pytest.mark.parametrize("kind,form", CASES, ids=[f"{k}-{f}" for k, f in CASES])
def test_recognised_and_equal_before_after(kind, form):
    model = decomposed(kind, form)
    x = np.random.default_rng(3).standard_normal((1, 5, 8)).astype(np.float32)
    _, counts = recognize(model)
    assert counts[f"recognize_{kind}"] == 1, counts
    ir = from_onnx(model)
    ops = ops_of(ir)
    assert FUSED[kind] in ops and not {"erf", "tanh"} & set(ops) - ({"tanh"} if kind == "silu" else set())
    after = run_module(ir, [x])[0]
    assert_close_to(after, ReferenceEvaluator(model).run(None, {"inp": x})[0])
    assert_close_to(after, ort_run(model, {"inp": x})[0])
    if (kind, form) in UNFUSED_CONVERTS:
        before_ir = from_onnx(model, disabled=[f"recognize_{kind}"])
        assert FUSED[kind] not in ops_of(before_ir)
        assert_close_to(after, run_module(before_ir, [x])[0])


@pytest.mark.parametrize("kind,form", [("gelu", "wrong_constant"), ("softmax", "two_axes")])
def test_near_misses_are_left_alone(kind, form):
    _, counts = recognize(decomposed(kind, form))
    assert not any(counts.values()), counts


def test_an_intermediate_used_elsewhere_blocks_the_match():
    """The mean of the LayerNorm is also a graph output: rewriting would lose it."""
    from onnx import helper
    model = decomposed("layer_norm", "pow_div_affine")
    model.graph.output.append(helper.make_tensor_value_info("m", 1, None))
    assert recognize(model)[1]["recognize_layer_norm"] == 0
    model = decomposed("gelu", "erf_torch")
    model.graph.output.append(helper.make_tensor_value_info("act", 1, None))
    assert recognize(model)[1]["recognize_gelu"] == 0


def test_each_recognition_can_be_disabled():
    model = decomposed("silu", "x_sig")
    assert recognize(model, disabled=FRONTEND_PASSES) == (model, {})
    assert recognize(model, disabled=["recognize_silu"]) == (model, dict.fromkeys(set(FRONTEND_PASSES) - {"recognize_silu"}, 0))
    from tinyfuse.driver import PASS_CHOICES, compile_model
    assert set(FRONTEND_PASSES) <= set(PASS_CHOICES)
    kernels = compile_model(model, disabled_passes=["recognize_silu", "fuse_ops"]).kernels
    assert "nn.silu" not in {op for k in kernels for op in k.ops}


def test_subgraphs_are_recognised():
    """A SiLU inside an If branch (the branch compiled after --bind) is fused too."""
    from tests.builders import graph_models as gm
    from onnx import helper
    model = gm.vad_stub()
    then = next(a.g for a in model.graph.node[1].attribute if a.name == "then_branch")
    last = then.node[-1]
    then.node.remove(last)
    then.node.extend([helper.make_node("Sigmoid", ["k16_a"], ["k16_s"]), helper.make_node("Mul", ["k16_a", "k16_s"],
                                                                                              ["k16_p"])])
    from tinyfuse.driver import compile_model
    ops = [op for k in compile_model(model, bind=["sr=16000"]).kernels for op in k.ops]
    assert "nn.silu" in ops and "sigmoid" not in ops
