"""The int8 and 16x8 convolution family (anchor ``qnn.conv2d``): its implementations, best first, per mode.

normal / pixel_buffer (the kernel may also run in place through a pixel buffer, in ``Group.order``):
  ``conv2d.skip_zero_dsp``, ``conv2d.skip_zero``  --skip-zero-activations: a batch-1 pointwise conv
      that skips the input groups at the zero point (lower/conv/skip_zero.py);
  ``conv2d.sparse_pairs``, ``conv2d.sparse``  the weights' zeros left out, where the cost decision of
      passes/sparse_weights.py chose it (CompileContext.sparse_kernels: the SMLAD pair layout or lists);
  ``conv2d.arm_mve_quads``  Helium, groups 1, 4 channels requantized as one vector (the
      ``quad_epilogue`` form); ``conv2d.arm_mve``  Helium 2 x 2 blocks, scalar epilogue;
      ``depthwise.arm_mve``  Helium depthwise (multiplier 1, the ``epilogue_constants`` form);
  ``conv2d.arm_dsp``  SMLAD blocks, groups 1; ``depthwise.arm_dsp``  SXTAB16 channel quads;
  ``conv2d.arm_mve_s16``  16x8 (int16 input) Helium VMLADAVA.S16 blocks, groups 1 (lower/conv/mve_s16.py);
  ``depthwise.arm_mve_s16``  16x8 Helium depthwise, 4 input channels per VMUL.S32, any multiplier
      (lower/conv/depthwise_mve_s16.py);
  ``conv2d.arm_dsp_s16``  16x8 (int16 input) SMLAD blocks, groups 1 (lower/conv/dsp_s16.py);
  ``depthwise.arm_dsp_s16``  16x8 depthwise, SMLAD on pairs of taps (lower/conv/depthwise_dsp_s16.py);
  ``conv2d.ref`` (normal) / ``conv2d.pixel_buffer`` (pixel_buffer)  portable C.
dw_plane (in-place depthwise, multiplier 1: the memory plan offers it only for such groups):
  ``depthwise.dw_plane_sparse``, ``depthwise.dw_plane_arm_mve``, ``depthwise.dw_rows_arm_dsp`` (a
  three-row ring, 3x3 stride 1/2, proven in place by isl), ``depthwise.dw_plane`` (portable).
chain_stage (a stage of a poly-fused chain, lower/conv/chain.py):
  ``chain.conv_arm_mve`` (groups 1), ``chain.conv_arm_dsp`` (groups 1), ``chain.dw_arm_dsp``
  (depthwise, K a multiple of 4), ``chain.ref``; an input read through its NCHW layout: portable.

Unrolled windows: the SIMD forms built on the tap table (lower/conv/depthwise_common.py: the arm_dsp and
arm_mve depthwise kernels, the Helium dw_plane kernel, every SIMD chain stage) unroll the window, one
pointer and one multiply-accumulate block per tap, so their C grows with KH x KW (about 11 lines a tap
per channel quad on arm_dsp). Past ``MAX_UNROLLED_TAPS`` taps they decline and the portable kernel
loops: an int8 average pool that rescales becomes a depthwise conv of ones (legalize_qdq), and a global
pool over a 30 x 60 map became an 1800-tap kernel of 21,000 lines that gcc -O1 did not compile in half
an hour (graph fuzzer, cortex-m4, seed 1049). The largest window of the reference models has 23 taps.
"""
from __future__ import annotations

import numpy as np

from ..ir import Constant, Var
from ..ops.conv_geom import ConvGeom
from ..poly.inplace_dw_rows import prove_dw_rows
from .core import Group, implementation
from .epilogue import epilogue_constants, flat_operands_reason, quad_epilogue, short_requant

QCONV = "qnn.conv2d"
MAX_UNROLLED_TAPS = 128           # an 11 x 11 window; more: the portable kernel (module doc)
BOTH = ("normal", "pixel_buffer")
I32 = 2 ** 31


def int8_conv_reason(anchor) -> str | None:
    """Why the SIMD conv kernels cannot take ``anchor`` (int8 input, constant int8 OHWI weights, an
    NHWC input stored as NHWC), or None."""
    x, w = anchor.args
    if x.ty.dtype != "int8":
        return f"input dtype {x.ty.dtype}, not int8"
    if not (isinstance(w, Constant) and w.ty.dtype == "int8"):
        return "weights are not a constant int8 tensor"
    a = anchor.attrs
    if a["data_layout"] != "NHWC" or a["kernel_layout"] != "OHWI":
        return f"layout {a['data_layout']}/{a['kernel_layout']}, not NHWC/OHWI"
    if a["input_layout"] is not None:
        return "input read through its NCHW layout (im2col reads NHWC pixels): portable C"
    return None


def in_place_reason(g: Group, geo: ConvGeom) -> str | None:
    """Why a pixel-buffer kernel cannot run in place (batch 1, int8 output), or None."""
    if g.mode == "pixel_buffer" and (geo.N != 1 or g.out.dtype != "int8"):
        return "in place: batch 1, int8 output only"
    return None


def groups1(g: Group) -> bool:
    """A conv with one group (the blocked SIMD conv kernels), as opposed to a depthwise / grouped one."""
    return g.anchor.attrs["groups"] == 1


def grouped(g: Group) -> bool:
    return not groups1(g)


def unroll_reason(geo: ConvGeom) -> str | None:
    """Why the SIMD forms that unroll the window's taps decline ``geo`` (module doc), or None."""
    taps = geo.KH * geo.KW
    return f"a {geo.KH}x{geo.KW} window: {taps} taps, more than {MAX_UNROLLED_TAPS} to unroll" if taps > MAX_UNROLLED_TAPS else None


def _first(*reasons) -> str | None:
    return next((r for r in reasons if r is not None), None)


def _geo(g: Group) -> ConvGeom:
    return ConvGeom.of_call(g.anchor)


def sparse_entry(g: Group):
    """The sparse decision recorded for the anchor's weights (weights, reason, layout), or None."""
    w = g.anchor.args[1]
    entry = g.options.context.sparse_kernels.get(id(w))
    return entry if entry is not None and entry[0] is w else None


# ---------------------------------------------------------------------------------------------- skip zero
def skip_zero_reason(g: Group) -> str | None:
    """lower/conv/skip_zero.py's groups: --skip-zero-activations, an int8 batch-1 pointwise conv (NHWC) whose
    epilogue flattens over the pixels, in place only through a pixel buffer."""
    if not g.options.skip_zero_activations:
        return "--skip-zero-activations is off"
    if not isinstance(g.anchor.args[0], Var):
        return "the data input is not a tensor parameter"
    geo = _geo(g)
    return _first(int8_conv_reason(g.anchor),
                  None if geo.G == 1 and geo.is_pointwise and geo.N == 1 else "not a batch-1 pointwise conv",
                  flat_operands_reason(g.epi_ops, g.anchor.ty.shape, (1, 2)))


@implementation(QCONV, "conv2d.skip_zero_dsp", needs="arm_dsp", modes=BOTH, isa="skip_zero")
def _skip_zero_dsp(g: Group) -> str | None:
    return skip_zero_reason(g)


@implementation(QCONV, "conv2d.skip_zero", modes=BOTH, isa="skip_zero")
def _skip_zero(g: Group) -> str | None:
    return skip_zero_reason(g)


# ---------------------------------------------------------------------------------------------- sparse
def sparse_layout_reason(g: Group, layout: str) -> str | None:
    """Why the sparse kernel of ``layout`` (pairs, lists) does not take ``g``'s int8 anchor: no sparse
    decision for its weights, another layout chosen, or not int8; None when it may."""
    entry = sparse_entry(g)
    if entry is None:
        return "dense weights, or the dense kernel is cheaper (--sparse)"
    if (entry[2] if len(entry) > 2 else "lists") != layout:
        return f"the cost decision chose the {entry[2]} layout"
    x, w = g.anchor.args
    if x.ty.dtype != "int8" or w.ty.dtype != "int8":
        return "not int8"
    return None


def _sparse_reason(g: Group, layout: str) -> str | None:
    reason = sparse_layout_reason(g, layout)
    if reason is not None:
        return reason
    a = g.anchor.attrs
    if a["data_layout"] != "NHWC" or a["kernel_layout"] != "OHWI" or a["input_layout"] is not None:
        return f"layout {a['data_layout']}/{a['kernel_layout']} (input {a['input_layout']}), not NHWC/OHWI"
    return in_place_reason(g, _geo(g))


@implementation(QCONV, "conv2d.sparse_pairs", needs="sparse", modes=BOTH, isa="sparse")
def _sparse_pairs(g: Group) -> str | None:
    reason = _sparse_reason(g, "pairs")
    if reason is not None:
        return reason
    geo = _geo(g)
    if geo.G != 1:
        return "grouped / depthwise conv: the portable sparse layout"
    if geo.OH > 1 and geo.OW > 1:
        return flat_operands_reason(g.epi_ops, g.anchor.ty.shape, (1, 2))
    return None


@implementation(QCONV, "conv2d.sparse", needs="sparse", modes=BOTH, isa="sparse")
def _sparse_lists(g: Group) -> str | None:
    return _sparse_reason(g, "lists")


# ---------------------------------------------------------------------------------------------- Helium, DSP
def _groups1(g: Group) -> str | None:
    """The checks of every groups-1 SIMD conv kernel (flattened pixel pairs)."""
    return _first(int8_conv_reason(g.anchor), flat_operands_reason(g.epi_ops, g.anchor.ty.shape, (1, 2)),
                  in_place_reason(g, _geo(g)))


@implementation(QCONV, "conv2d.arm_mve_quads", needs="arm_mve", modes=BOTH, applies=groups1)
def _mve_quads(g: Group) -> str | None:
    reason = _groups1(g)
    if reason is not None:
        return reason
    geo = _geo(g)
    if g.out.dtype != "int8" or geo.K < 4:
        return "int8 output with 4 or more channels only"
    if quad_epilogue(g.anchor, g.epi_ops, geo.K, g.anchor.ty.shape) is None:
        return "epilogue is not bias + requantize (+ residual add, + clip) with right shifts"
    return None


@implementation(QCONV, "conv2d.arm_mve", needs="arm_mve", modes=BOTH, applies=groups1)
def _mve(g: Group) -> str | None:
    return _groups1(g)


@implementation(QCONV, "depthwise.arm_mve", needs="arm_mve", modes=BOTH, applies=grouped)
def _dw_mve(g: Group) -> str | None:
    reason = int8_conv_reason(g.anchor)
    if reason is not None:
        return reason
    geo = _geo(g)
    if geo.M != 1 or geo.C != geo.G or g.out.dtype != "int8":
        return "Helium depthwise: multiplier 1, int8 output only"
    if unroll_reason(geo):
        return unroll_reason(geo)
    if g.mode == "pixel_buffer" and geo.N != 1:
        return "in place: batch 1 only"
    if epilogue_constants(g.anchor, g.epi_ops, geo.K) is None:
        return "epilogue is not bias + requantize (+ clip) with right shifts"
    return None


@implementation(QCONV, "conv2d.arm_dsp", needs="arm_dsp", modes=BOTH, applies=groups1)
def _dsp(g: Group) -> str | None:
    return _groups1(g)


@implementation(QCONV, "depthwise.arm_dsp", needs="arm_dsp", modes=BOTH, applies=grouped)
def _dw_dsp(g: Group) -> str | None:
    geo = _geo(g)
    return _first(int8_conv_reason(g.anchor), f"grouped conv with {geo.Cg} channels per group" if geo.C != geo.G else None,
                  unroll_reason(geo), in_place_reason(g, geo))


def s16_accumulator_reason(w2d: np.ndarray) -> str | None:
    """Why the 16x8 SMLAD kernels' int32 accumulators could differ from TFLM's int64 sum of [O][K]
    weights ``w2d`` (32768 · Σ_k |w[o, k]| reaches 2^31 for some channel o), or None: then every partial
    sum of int16 inputs fits int32 and equals the int64 one."""
    bound = 32768 * np.abs(w2d.astype(np.int64)).sum(axis=1)
    if np.any(bound >= I32):
        return f"32768 · Σ|w| of a channel reaches {int(bound.max())} >= 2^31: the int64 portable kernel"
    return None


def s16_conv_reason(anchor) -> str | None:
    """Why the 16x8 SIMD kernels (``*.arm_mve_s16``, ``*.arm_dsp_s16``) cannot take ``anchor`` (int16
    input with zero point 0, constant int8 OHWI weights, NHWC, the int32 accumulator bound), or None."""
    x, w = anchor.args
    if x.ty.dtype != "int16":
        return f"input dtype {x.ty.dtype}, not int16"
    if not (isinstance(w, Constant) and w.ty.dtype == "int8"):
        return "weights are not a constant int8 tensor"
    a = anchor.attrs
    if a["data_layout"] != "NHWC" or a["kernel_layout"] != "OHWI" or a["input_layout"] is not None:
        return f"layout {a['data_layout']}/{a['kernel_layout']} (input {a['input_layout']}), not NHWC/OHWI"
    if a["input_zero_point"]:
        return "an int16 input zero point (its offset does not fit the int16 lanes)"
    return s16_accumulator_reason(w.value.reshape(w.ty.shape[0], -1))


def _s16_reason(g: Group) -> str | None:
    """Why a 16x8 SIMD conv (arm_mve_s16 and arm_dsp_s16 take the same layers) declines ``g``."""
    return _first(s16_conv_reason(g.anchor), flat_operands_reason(g.epi_ops, g.anchor.ty.shape, (1, 2)))


def _dw_s16_reason(g: Group) -> str | None:
    """Why a 16x8 SIMD depthwise conv (Helium or DSP: the same layers) declines ``g``."""
    geo = _geo(g)
    return _first(s16_conv_reason(g.anchor), f"grouped conv with {geo.Cg} channels per group" if geo.C != geo.G else None,
                  unroll_reason(geo))


@implementation(QCONV, "conv2d.arm_mve_s16", needs="arm_mve", applies=groups1)
def _mve_s16(g: Group) -> str | None:
    return _s16_reason(g)


@implementation(QCONV, "depthwise.arm_mve_s16", needs="arm_mve", applies=grouped)
def _dw_mve_s16(g: Group) -> str | None:
    return _dw_s16_reason(g)


@implementation(QCONV, "conv2d.arm_dsp_s16", needs="arm_dsp", applies=groups1)
def _dsp_s16(g: Group) -> str | None:
    return _s16_reason(g)


@implementation(QCONV, "depthwise.arm_dsp_s16", needs="arm_dsp", applies=grouped)
def _dw_dsp_s16(g: Group) -> str | None:
    return _dw_s16_reason(g)


@implementation(QCONV, "conv2d.ref")
def _ref(g: Group) -> str | None:
    return None


@implementation(QCONV, "conv2d.pixel_buffer", modes=("pixel_buffer",), sliceable=False)
def _pixel_buffer(g: Group) -> str | None:
    return None


# ---------------------------------------------------------------------------------------------- dw_plane
@implementation(QCONV, "depthwise.dw_plane_sparse", needs="sparse", modes=("dw_plane",), isa="sparse", sliceable=False)
def _dw_plane_sparse(g: Group) -> str | None:
    return None if sparse_entry(g) is not None else "dense weights, or the dense kernel is cheaper (--sparse)"


@implementation(QCONV, "depthwise.dw_plane_arm_mve", needs="arm_mve", modes=("dw_plane",), sliceable=False)
def _dw_plane_mve(g: Group) -> str | None:
    geo = _geo(g)
    if not geo.depthwise or g.out.dtype != "int8":
        return "not an int8 depthwise conv with multiplier 1"
    if unroll_reason(geo):
        return unroll_reason(geo)
    consts = epilogue_constants(g.anchor, g.epi_ops, geo.K)
    if consts is None:
        return "epilogue is not bias + requantize (+ clip) with right shifts"
    wt = g.anchor.args[1].value.reshape(geo.K, -1).astype(np.int64)
    if np.any(np.abs(consts[0] + (-geo.zp) * wt.sum(axis=1)) >= I32):
        return "bias + folded offset overflows int32"
    return None


def dw_rows_applies(geo: ConvGeom) -> bool:
    """Geometry the line-buffered depthwise kernel covers: 3x3, stride 1 or 2 (equal), no dilation."""
    s = geo.sh
    return (geo.depthwise and geo.N == 1 and geo.KH == 3 and geo.KW == 3 and s in (1, 2) and geo.sw == s
            and geo.dh == 1 and geo.dw == 1 and geo.OW == (geo.W + geo.pl + geo.pr - 3) // s + 1
            and geo.OH == (geo.H + geo.pt + geo.pb - 3) // s + 1 and not geo.nchw_input)


def dw_rows_columns(geo: ConvGeom) -> bool | None:
    """Whether the ring's lines run along columns (the longer output axis first where the isl proof of
    ``poly.inplace_dw_rows`` allows), or None when neither orientation is proven in place."""
    return next((c for c in ((geo.OH > geo.OW), (geo.OH <= geo.OW)) if prove_dw_rows(geo, c)), None)


def dw_rows_requant(g: Group, geo: ConvGeom):
    """(short requantize or None, int32 fold of the input offset) of the line-buffered kernel; it needs
    one of the two (the short requantize, or a fold that fits int32)."""
    w = g.anchor.args[1].value.reshape(geo.K, 3, 3).astype(np.int64)
    fold = np.int64(geo.offset) * w.sum(axis=(1, 2))
    lo = np.minimum(w * -128, w * 127).sum(axis=(1, 2))
    hi = np.maximum(w * -128, w * 127).sum(axis=(1, 2))
    return short_requant(g.epi_ops, g.anchor, lo, hi, fold), fold


@implementation(QCONV, "depthwise.dw_rows_arm_dsp", needs="arm_dsp", modes=("dw_plane",), sliceable=False)
def _dw_rows(g: Group) -> str | None:
    geo = _geo(g)
    if not dw_rows_applies(geo) or g.out.dtype != "int8" or not isinstance(g.anchor.args[0], Var):
        return "not an int8 3x3 depthwise conv of stride 1 or 2"
    sr, fold = dw_rows_requant(g, geo)
    if sr is None and np.any(np.abs(fold) >= I32):
        return "neither the short requantize nor an int32 offset fold applies"
    if dw_rows_columns(geo) is None:
        return "the ring's in-place proof fails in both orientations"
    return None


@implementation(QCONV, "depthwise.dw_plane", modes=("dw_plane",), sliceable=False)
def _dw_plane(g: Group) -> str | None:
    return None


# ---------------------------------------------------------------------------------------------- chain stages
def _stage(g: Group, depthwise: bool = False) -> str | None:
    geo = _geo(g)
    if geo.nchw_input:
        return "the SIMD stages read NHWC pixel runs: portable C"
    if unroll_reason(geo):
        return unroll_reason(geo)
    if depthwise:
        return None if geo.depthwise and geo.K % 4 == 0 else "not a depthwise stage with K a multiple of 4"
    return None if geo.G == 1 else "not a groups-1 stage"


@implementation(QCONV, "chain.conv_arm_mve", needs="arm_mve", modes=("chain_stage",), applies=groups1)
def _chain_mve(g: Group) -> str | None:
    return _stage(g)


@implementation(QCONV, "chain.conv_arm_dsp", needs="arm_dsp", modes=("chain_stage",), applies=groups1)
def _chain_dsp(g: Group) -> str | None:
    return _stage(g)


@implementation(QCONV, "chain.dw_arm_dsp", needs="arm_dsp", modes=("chain_stage",), applies=grouped)
def _chain_dw_dsp(g: Group) -> str | None:
    return _stage(g, depthwise=True)


@implementation(QCONV, "chain.ref", modes=("chain_stage",))
def _chain_ref(g: Group) -> str | None:
    return None


__all__ = ["dw_rows_applies", "dw_rows_columns", "dw_rows_requant", "in_place_reason", "int8_conv_reason",
           "s16_accumulator_reason", "skip_zero_reason", "sparse_entry", "sparse_layout_reason", "unroll_reason", "MAX_UNROLLED_TAPS"]
