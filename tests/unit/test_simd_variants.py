"""Choosing SIMD kernel variants, without running them (pure Python; the kernels under qemu:
tests/target/test_simd_kernels.py): a forced variant, a declined variant's logged fallback, and the
epilogue operands the blocked kernels accept."""
import logging

import pytest

from tinyfuse.driver import compile_model
from tinyfuse.ir import Call, TensorType, Var
from tinyfuse.lower import Unsupported
from tinyfuse.lower.simd import check_flat_operands
from tests.builders import conv_case


def test_forced_variant_and_logged_fallback(caplog):
    """--kernels arm_dsp on the M55 uses the DSP conv; a variant that declines a group is logged and
    the next one (here ref) takes it; a variant the target lacks is an error."""
    from tinyfuse.errors import TinyfuseError
    case = conv_case("depthwise", 212, (1, 6, 5, 5), None, (3, 3), mult=3)     # CASES["dw3x3_mult3"] there
    conv = conv_case("conv", 205, (1, 6, 5, 6), 9, (1, 1))                      # CASES["conv1x1_c6_im2col"]
    assert compile_model(conv.model, target="cortex-m55", kernels="arm_dsp").kernels[0].variant == "arm_dsp"
    with caplog.at_level(logging.INFO, logger="tinyfuse.lower"):
        r = compile_model(case.model, target="cortex-m55", kernels="arm_mve")
    assert r.kernels[0].variant == "ref" and r.kernels[0].kind == "conv2d.ref"
    assert any("depthwise.arm_mve not used (Helium depthwise: multiplier 1" in m for m in caplog.messages)
    with pytest.raises(TinyfuseError, match="no dsp feature"):
        compile_model(conv.model, target="cortex-m0", kernels="arm_dsp")


def test_flattened_pixels_need_operands_full_or_broadcast_in_h_and_w():
    """The blocked kernels index the epilogue by flattened pixels: an operand broadcast along only one
    of H and W must send the group to the portable kernel."""
    out = (1, 4, 5, 8)

    class Epi:
        def __init__(self, shape):
            self.ops = [Call("add", [Var("a", TensorType(out, "int32")), Var("b", TensorType(shape, "int32"))], {})]
    for ok in [(1, 4, 5, 8), (1, 1, 1, 8), (8,), (4, 5, 1), (1, 4, 5, 1)]:
        check_flat_operands(Epi(ok), out, (1, 2))
    for bad in [(1, 1, 5, 8), (1, 4, 1, 8), (5, 8)]:
        with pytest.raises(Unsupported):
            check_flat_operands(Epi(bad), out, (1, 2))
