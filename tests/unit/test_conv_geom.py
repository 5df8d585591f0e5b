"""ops.conv_geom: the kernel-shape notions of hand-built NHWC/OHWI convs (sizes worked out by hand
from the conv output formula floor((H + pt + pb - dh*(KH-1) - 1) / sh) + 1) and the group
recognition the lowerings, proofs and cost model share."""
import numpy as np
import pytest

from tinyfuse.ir import Constant, Function, TensorType, Var, call
from tinyfuse.ir.group import MalformedGroup, split_group
from tinyfuse.ops.conv_geom import ConvGeom, conv_group


def qconv(H, W, C, K, k, s=1, pad=0, groups=1, zp=-5, N=1):
    """(input Var, int8 qnn.conv2d call) with a k x k kernel, stride s and padding pad on every side."""
    x = Var("x", TensorType((N, H, W, C), "int8"))
    w = Constant(np.ones((K, k, k, C // groups), np.int8))
    return x, call("qnn.conv2d", x, w, strides=(s, s), padding=(pad,) * 4, groups=groups, data_layout="NHWC",
                   kernel_layout="OHWI", input_zero_point=zp)


def geom(*args, **kw) -> ConvGeom:
    return ConvGeom.of_call(qconv(*args, **kw)[1])


def test_1x1_stride_1_is_pointwise():
    g = geom(8, 6, 16, 32, k=1)
    assert (g.OH, g.OW, g.K, g.G, g.M, g.Cg) == (8, 6, 32, 1, 32, 16)
    assert g.is_1x1 and g.unpadded and g.is_pointwise and not g.depthwise
    assert g.family == "pw"
    assert g.reduction == 16 and g.macs == 8 * 6 * 32 * 16 and g.P == 48
    assert g.zp == -5 and g.offset == 5 and g.N == 1


def test_1x1_stride_2_is_1x1_but_not_pointwise():
    g = geom(8, 6, 16, 32, k=1, s=2)
    assert (g.OH, g.OW) == (4, 3)                 # floor((8 - 1) / 2) + 1, floor((6 - 1) / 2) + 1
    assert g.is_1x1 and g.unpadded and not g.is_pointwise
    assert g.family == "pw"                      # the cost model groups every 1x1 together


def test_1x1_padded_is_not_pointwise():
    g = geom(4, 4, 8, 8, k=1, pad=1)
    assert (g.OH, g.OW) == (6, 6)
    assert g.is_1x1 and not g.unpadded and not g.is_pointwise and g.family == "pw"


def test_3x3_depthwise():
    g = geom(10, 10, 24, 24, k=3, pad=1, groups=24)
    assert (g.OH, g.OW, g.G, g.M, g.Cg) == (10, 10, 24, 1, 1)
    assert g.depthwise and not g.is_1x1 and not g.is_pointwise
    assert g.family == "dw"
    assert g.reduction == 9 and g.macs == 10 * 10 * 24 * 9
    assert g.plane == (12, 12)                    # (OH - 1) * sh + (KH - 1) * dh + 1


def test_first_conv_one_input_channel_is_a_plain_conv():
    g = geom(32, 32, 1, 8, k=3, s=2, pad=1)       # groups = C = 1, but 8 outputs per group
    assert (g.OH, g.OW, g.G, g.M, g.Cg) == (16, 16, 1, 8, 1)
    assert not g.depthwise and not g.is_1x1
    assert g.family == "conv"


def test_taps_in_image_cuts_the_padding():
    g = geom(5, 5, 4, 4, k=3, pad=1)
    assert g.taps_in_image("h", "w") == ("0 <= r < 3 and 0 <= s < 3 and 0 <= 1h + 1r - 1 < 5 and "
                                         "0 <= 1w + 1s - 1 < 5")


def test_of_call_needs_nhwc():
    x = Var("x", TensorType((1, 4, 8, 8), "float32"))
    conv = call("nn.conv2d", x, Constant(np.ones((4, 4, 3, 3), np.float32)))
    with pytest.raises(ValueError, match="NCHW/OIHW"):
        ConvGeom.of_call(conv)


def _int8_group(conv, x):
    mult = Constant(np.array([1 << 30], np.int32))
    shift = Constant(np.array([-1], np.int32))
    return Function((x,), call("qnn.requantize", conv, mult, shift))


def test_conv_group_of_an_int8_conv_group():
    x, conv = qconv(6, 6, 8, 8, k=3, pad=1)
    anchor, epi, g = conv_group(_int8_group(conv, x))
    assert anchor is conv and [c.op for c in epi] == ["qnn.requantize"]
    assert g == ConvGeom.of_call(conv)


def test_conv_group_declines_other_groups():
    x, conv = qconv(6, 6, 8, 8, k=3, pad=1)
    assert conv_group(Function((x,), conv)) is None             # int32 result
    x2, conv2 = qconv(6, 6, 8, 8, k=3, pad=1, N=2)
    assert conv_group(_int8_group(conv2, x2)) is None           # batch 2


def test_split_group_rejects_two_anchors():
    x, conv = qconv(6, 6, 8, 8, k=1)
    y = call("qnn.requantize", conv, Constant(np.array([1 << 30], np.int32)), Constant(np.array([-1], np.int32)))
    w2 = Constant(np.ones((8, 1, 1, 8), np.int8))
    twice = call("qnn.conv2d", y, w2, data_layout="NHWC", kernel_layout="OHWI")
    fn = Function((x,), twice)
    with pytest.raises(MalformedGroup, match="qnn.conv2d"):
        split_group(fn)
    assert conv_group(fn) is None
