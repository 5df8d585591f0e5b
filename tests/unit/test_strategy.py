"""One answer to "which kernel runs here" (tinyfuse.strategy.choose), and the kernels agree with it.

For every model of ../shared/models on host, cortex-m4 (arm_dsp), cortex-m55 (arm_mve) and cortex-m55
with --kernels arm_dsp: each kernel's implementation (Kernel.kind) is what the strategy chooses for its
group in the mode the memory plan gave it (normal, pixel_buffer, dw_plane), and each stage of a
poly-fused kernel is what the cost model priced it as (cost.analytical.chain_kinds, the pricing of
poly_fuse's chain estimate). A lowering that declines a group its strategy accepted is logged as a
warning and fails here. Plus the cases where the cost model once priced a stage as a SIMD kernel that
the lowering then built in portable C: a grouped (not depthwise) chain stage on a Helium core, and a
depthwise stage whose channels are not a multiple of 4 on a DSP core."""
from __future__ import annotations

import logging

import pytest

from tinyfuse.cost.analytical import chain_kinds, ipm
from tinyfuse.ir import Call, Function, post_order
from tinyfuse.options import CompileOptions
from tinyfuse.ops.conv_geom import ConvGeom
from tinyfuse.strategy import by_name, choose
from tests.conftest import shared_or_skip
from tests.golden.sources import compiled, model_paths

CASES = [("host", None), ("cortex-m4", None), ("cortex-m55", None), ("cortex-m55", "arm_dsp")]


def _members(fn: Function) -> list[Function]:
    return [c.op for c in post_order(fn.body) if isinstance(c, Call) and isinstance(c.op, Function)]


def _disagreements(result) -> list[str]:
    bad = []
    for i, step in enumerate(result.steps):
        fn, k = step.call.op, step.kernel
        if fn.attrs.get("poly"):
            priced = chain_kinds(_members(fn), result.options)[0]
            if k.kind != "fused_chain" or k.stage_kinds != priced:
                bad.append(f"{k.name}: stages priced {priced}, emitted {k.kind} {k.stage_kinds}")
            continue
        opt = result.memory.inplace.get(i)
        mode = opt.rule if opt is not None and opt.rule in ("dw_plane", "pixel_buffer") else "normal"
        choice = choose(fn, result.options, mode, opt.order if mode == "pixel_buffer" else None)
        if choice is None or choice.kind != k.kind:
            bad.append(f"{k.name} ({mode}): chosen {choice and choice.kind}, emitted {k.kind}")
    return bad


@pytest.mark.parametrize("target, kernels", CASES)
def test_every_kernel_is_the_implementation_its_strategy_chose(target, kernels, caplog):
    shared_or_skip("models")
    bad, kinds = [], set()
    with caplog.at_level(logging.WARNING, logger="tinyfuse.lower"):
        for path in model_paths():
            result = compiled(path, target) if kernels is None else _compile(path, target, kernels)
            if isinstance(result, str):
                continue
            bad += [f"{path.name}: {b}" for b in _disagreements(result)]
            kinds |= {k.kind for k in result.kernels}
    assert not bad, "\n".join(bad)
    assert not [m for m in caplog.messages if "its lowering declined" in m]
    assert all(k for k in kinds)
    if target != "host":                  # the SIMD implementations were exercised
        assert any(by_name(k).isa.startswith("arm_") for k in kinds if "." in k and k != "fused_chain"), kinds


def _compile(path, target, kernels):
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError
    try:
        return compile_model(str(path), target=target, kernels=kernels)
    except TinyfuseError as e:
        return str(e)


def _chain_member(K: int, groups: int, C: int):
    """A one-op int8 conv group (a chain member) of K outputs over C channels in ``groups`` groups."""
    import numpy as np
    from tinyfuse.ir import Constant, TensorType, Var, call
    x = Var("x", TensorType((1, 8, 8, C), "int8"))
    w = Constant(np.ones((K, 3, 3, C // groups), np.int8))
    y = call("qnn.conv2d", x, w, strides=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1), groups=groups,
             data_layout="NHWC", kernel_layout="OHWI", input_zero_point=0)
    return Function((x,), y, {"Primitive": True})


@pytest.mark.parametrize("target, K, groups, C, want", [
    ("cortex-m55", 8, 2, 8, "chain.ref"),             # grouped stage: no Helium or DSP stage kernel
    ("cortex-m55", 16, 1, 8, "chain.conv_arm_mve"),
    ("cortex-m4", 6, 6, 6, "chain.ref"),              # depthwise, K % 4 != 0: portable stage
    ("cortex-m4", 8, 8, 8, "chain.dw_arm_dsp"),
    ("cortex-m55", 8, 8, 8, "chain.dw_arm_dsp"),      # a Helium core runs the DSP depthwise stage
])
def test_chain_stages_are_priced_as_what_the_lowering_builds(target, K, groups, C, want):
    options = CompileOptions.resolve(target)
    member = _chain_member(K, groups, C)
    stage, _ = chain_kinds([member], options)
    assert stage == [want]
    fam = ConvGeom.of_call(member.body).family
    assert ipm(fam, stage[0]) == ipm(fam, want)
