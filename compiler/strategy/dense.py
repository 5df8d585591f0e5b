"""The other families with target implementations: int8 fully connected (``qnn.matmul``), the float
conv and fully connected layers (``nn.conv2d``, ``nn.matmul``: the FPU kernels), horizontal groups
(sibling layers sharing an input) and the int8 average pool.

``qnn.matmul`` (normal mode only: no in-place matmul kernel), best first: ``matmul.skip_zero_dsp`` /
``matmul.skip_zero`` (--skip-zero-activations), ``matmul.sparse_pairs`` / ``matmul.sparse`` (the
sparse decision), ``matmul.arm_mve``, ``matmul.arm_dsp``, ``matmul.arm_mve_s16`` / ``matmul.arm_dsp_s16`` (16x8), ``matmul.ref``.
``nn.conv2d``: ``conv2d_f32.arm_fpu`` (groups 1 or depthwise), ``conv2d_f32.ref``;
``nn.matmul``: ``matmul_f32.arm_fpu``, ``matmul_f32.ref``.
``horizontal``: ``horizontal.arm_mve`` / ``horizontal.arm_dsp`` (each branch runs that variant's
kernel of its own anchor), ``horizontal.ref`` (one loop nest over the concatenated weights).
``qnn.avg_pool2d``: ``avg_pool.arm_mve``, ``avg_pool.ref``.
"""
from __future__ import annotations

from ..ir import Constant, Var
from ..ir.group import split_group
from ..ops.conv_geom import ConvGeom
from .conv import s16_accumulator_reason, sparse_layout_reason
from .core import Group, choose_isa, implementation
from .epilogue import flat_operands_reason

QMATMUL = "qnn.matmul"


def fc_reason(g: Group) -> str | None:
    """Why the int8 fully connected SIMD kernels cannot take the group (int8 input, constant int8 [K][N]
    weights, an epilogue that flattens over every leading axis), or None."""
    a, b = g.anchor.args
    if a.ty.dtype != "int8":
        return f"input dtype {a.ty.dtype}, not int8"
    if not (isinstance(b, Constant) and b.ty.dtype == "int8" and b.ty.ndim == 2):
        return "weights are not a constant int8 matrix"
    out_shape = g.anchor.ty.shape
    if len(out_shape) >= 2:
        return flat_operands_reason(g.epi_ops, out_shape, tuple(range(len(out_shape) - 1)))
    return None


def _skip_zero(g: Group) -> str | None:
    if not g.options.skip_zero_activations:
        return "--skip-zero-activations is off"
    if not isinstance(g.anchor.args[0], Var):
        return "the data input is not a tensor parameter"
    return fc_reason(g)


@implementation(QMATMUL, "matmul.skip_zero_dsp", needs="arm_dsp", isa="skip_zero")
def _skip_zero_dsp(g: Group) -> str | None:
    return _skip_zero(g)


@implementation(QMATMUL, "matmul.skip_zero", isa="skip_zero")
def _skip_zero_ref(g: Group) -> str | None:
    return _skip_zero(g)


def _sparse(g: Group, layout: str) -> str | None:
    reason = sparse_layout_reason(g, layout)
    if reason is not None:
        return reason
    x, b = g.anchor.args
    if b.ty.ndim != 2 or x.ty.ndim < 1:
        return f"weights of shape {b.ty.shape}: only a 2-D constant matrix"
    return None


@implementation(QMATMUL, "matmul.sparse_pairs", needs="sparse", isa="sparse")
def _sparse_pairs(g: Group) -> str | None:
    reason = _sparse(g, "pairs")
    if reason is not None:
        return reason
    shape = g.anchor.ty.shape
    if len(shape) < 2:
        return "a 1-D fully connected output: the portable sparse layout"
    if sum(1 for d in shape[:-1] if d > 1) > 1:
        return f"rows over several axes {shape[:-1]}: the portable sparse layout"
    return None


@implementation(QMATMUL, "matmul.sparse", needs="sparse", isa="sparse")
def _sparse_lists(g: Group) -> str | None:
    return _sparse(g, "lists")


@implementation(QMATMUL, "matmul.arm_mve", needs="arm_mve")
def _fc_mve(g: Group) -> str | None:
    return fc_reason(g)


@implementation(QMATMUL, "matmul.arm_dsp", needs="arm_dsp")
def _fc_dsp(g: Group) -> str | None:
    return fc_reason(g)


@implementation(QMATMUL, "matmul.arm_mve_s16", needs="arm_mve")
def _fc_mve_s16(g: Group) -> str | None:
    """16x8 fully connected on Helium (lower/conv/mve_s16.py): what ``matmul.arm_dsp_s16`` takes."""
    return _fc_dsp_s16(g)


@implementation(QMATMUL, "matmul.arm_dsp_s16", needs="arm_dsp")
def _fc_dsp_s16(g: Group) -> str | None:
    """16x8 fully connected (lower/conv/dsp_s16.py): int16 input with zero point 0, constant int8 [K][N]
    weights within the int32 accumulator bound, an epilogue that flattens over the leading axes."""
    a, b = g.anchor.args
    if a.ty.dtype != "int16" or g.anchor.attrs.get("input_zero_point", 0):
        return f"input dtype {a.ty.dtype} (zero point {g.anchor.attrs.get('input_zero_point', 0)}), not int16 with 0"
    if not (isinstance(b, Constant) and b.ty.dtype == "int8" and b.ty.ndim == 2):
        return "weights are not a constant int8 matrix"
    out_shape = g.anchor.ty.shape
    flat = flat_operands_reason(g.epi_ops, out_shape, tuple(range(len(out_shape) - 1))) if len(out_shape) >= 2 else None
    return flat or s16_accumulator_reason(b.value.T)


@implementation(QMATMUL, "matmul.ref")
def _fc_ref(g: Group) -> str | None:
    return None


# ---------------------------------------------------------------------------------------------- float (FPU)
def _float_reason(g: Group) -> str | None:
    x, w = g.anchor.args
    if x.ty.dtype != "float32" or g.anchor.ty.dtype != "float32":
        return f"dtype {x.ty.dtype}, not float32"
    if not (isinstance(w, Constant) and w.ty.dtype == "float32"):
        return "weights are not a constant float32 tensor"
    return None


@implementation("nn.conv2d", "conv2d_f32.arm_fpu", needs="arm_fpu")
def _conv_fpu(g: Group) -> str | None:
    reason = _float_reason(g)
    if reason is not None:
        return reason
    a = g.anchor.attrs
    if a["data_layout"] != "NHWC" or a["kernel_layout"] != "OHWI" or a["input_layout"] is not None:
        return "layout not NHWC/OHWI read as NHWC"
    geo = ConvGeom.of_call(g.anchor)
    if not (geo.G == 1 or (geo.G == geo.C and geo.M == 1)):
        return f"grouped conv ({geo.G} groups, multiplier {geo.M}): portable C"
    return flat_operands_reason(g.epi_ops, g.anchor.ty.shape, (1, 2))


@implementation("nn.conv2d", "conv2d_f32.ref")
def _conv_f32_ref(g: Group) -> str | None:
    return None


@implementation("nn.matmul", "matmul_f32.arm_fpu", needs="arm_fpu")
def _fc_fpu(g: Group) -> str | None:
    reason = _float_reason(g)
    if reason is not None:
        return reason
    if g.anchor.args[1].ty.ndim != 2:
        return "weights are not a matrix"
    out_shape = g.anchor.ty.shape
    if len(out_shape) >= 2:
        return flat_operands_reason(g.epi_ops, out_shape, tuple(range(len(out_shape) - 1)))
    return None


@implementation("nn.matmul", "matmul_f32.ref")
def _fc_f32_ref(g: Group) -> str | None:
    return None


# ---------------------------------------------------------------------------------------------- horizontal
def _horizontal(g: Group, isa: str) -> str | None:
    br = g.anchor.attrs["branches"]
    if br.parts is None:
        return "element-wise siblings run in the portable kernel"
    first = br.fn.params[0]
    arg = next((a for p, a in zip(br.fn.params, g.anchor.args) if p is first), None)
    if arg is not g.fn.params[0]:
        return "the shared input is not the kernel's first parameter"
    for part in br.parts:
        anchor, _ = split_group(part)
        if choose_isa(part, g.options, isa) is None:
            return f"no {isa} kernel for {anchor.op if anchor is not None else 'the branch'}"
    return None


@implementation("horizontal", "horizontal.arm_mve", needs="arm_mve")
def _hz_mve(g: Group) -> str | None:
    return _horizontal(g, "arm_mve")


@implementation("horizontal", "horizontal.arm_dsp", needs="arm_dsp")
def _hz_dsp(g: Group) -> str | None:
    return _horizontal(g, "arm_dsp")


@implementation("horizontal", "horizontal.ref")
def _hz_ref(g: Group) -> str | None:
    return None


# ---------------------------------------------------------------------------------------------- avg pool
@implementation("qnn.avg_pool2d", "avg_pool.arm_mve", needs="arm_mve")
def _avg_pool_mve(g: Group) -> str | None:
    (x,) = g.anchor.args
    a = g.anchor.attrs
    if a["layout"] != "NHWC" or (a["input_layout"] or "NHWC") != "NHWC":
        return "NHWC input and output only"
    if x.ty.dtype != "int8" or g.anchor.ty.dtype not in ("int8", "int32"):
        return f"dtype {x.ty.dtype}"
    if tuple(a.get("dilation", (1, 1))) != (1, 1):
        return "dilated window"
    return None


@implementation("qnn.avg_pool2d", "avg_pool.ref")
def _avg_pool_ref(g: Group) -> str | None:
    return None


__all__ = ["fc_reason"]
