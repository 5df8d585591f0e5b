"""In-place rules: which kernels may write their output over a dying input, each proven with isl.

A rule looks at one fused group (its IR Function) and returns :class:`InPlace` options; the order
search (``schedule.best_schedule``) applies one only where that input dies at the kernel. Every
output starts at the input's offset. Rules and their proofs (``tinyfuse.poly.deps``; "Mem" is the
byte space the two tensors share):

- ``elementwise``: an element-wise group over an input of the output's shape whose elements are at
  least as wide (int8 over int8, int8 over float32). Proof: the kernel's loop nest (row-major, one
  statement per element) has no write to a byte that a later instance reads (``clobbered_reads``).
- ``transpose``: a transpose group with an element-wise epilogue whose output is smaller than its
  input (a float NCHW image quantized into int8 NHWC), the output at the input's end (``rel``).
  Proof: no clobbered read in the lowering's loop nest (descending over the output).
- ``residual_add``: a conv/matmul/pool group whose epilogue reads a same-shape tensor at the output
  index (the skip of a residual add, read then written by the instance of that output element).
  Proof, valid for any loop order and any kernel variant that writes each output element once:
  every (write, read) pair on a shared byte is an instance with itself (``only_self_conflicts``).
- ``dw_plane``: depthwise conv (multiplier 1), channel by channel through one padded plane of
  scratch (TinyEngine). Proof: no clobbered read of X, and ``compute_flow`` on the plane equals the
  intended producers (the copy of the same channel, or the border fill).
- ``pixel_buffer``: any int8 conv through a K-byte pixel buffer, ascending or descending pixel order
  (the first that proves). Proof: no clobbered read of X; the pixel buffer's flow is intended; both
  one pixel at a time and in pairs of flattened pixels (the blocking of the SIMD variants that
  the strategies run in the pixel_buffer mode).

- ``conv_offset``: an int8 conv with groups 1 run by its normal kernel (pixels ascending) with its
  input ``R`` bytes above its output's start (``rel`` = -R; R the smallest multiple of REL_ALIGN that
  proves, at least out - in: the input at the output's end when the output is larger). Proof: no
  clobbered read of X in a model where every output of a block of pixels is written before any input
  of a flattened block of 4 pixels is read (any order inside a block); the memory plan proves it again
  for the kernel the group lowers to (``conv_offset_form``: the portable conv pixel by pixel, the SIMD
  im2col kernels reading a pair before writing it) and drops it for any other kernel. Offered when the union of the two buffers
  is smaller than both apart; cost 1, so the schedule takes it only where it lowers the peak. The
  memory plan offers it over a model input only (the first convs; ``arena.kernel_graph``).

``options(fn, cost, cache)`` caches per Function in ``cache`` (proofs are ~5-50 ms each): the
compilation's ``CompileContext.inplace_options``, so no state outlives one compile.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Call, Function, OpPattern, Var, get_op, post_order
from ..ir.group import MalformedGroup, split_group
from ..ops.conv_geom import ConvGeom, conv_group
from ..poly.deps import Access, Layout, Model, clobbered_reads, flow_mismatch, intended_flow, only_self_conflicts
from ..poly.inplace_models import conv_offset_models, dw_plane_model, dw_plane_scratch, pixel_buffer_model
from .schedule import InPlace

def options(fn: Function, cost=None, cache: dict | None = None) -> list[InPlace]:
    """In-place options of a fused group. ``cost(rule, fn)`` gives the estimated extra instructions
    of rules that need their own kernel (default 0). ``cache``: id(fn) -> (fn, options), read and
    filled when given (the Function is kept so a reused id cannot hit)."""
    cache = {} if cache is None else cache
    hit = cache.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    out: list[InPlace] = []
    for rule in (_elementwise, _transpose, _residual_add, _dw_plane, _pixel_buffer, _conv_offset):
        out += rule(fn)
    if cost is not None:
        out = [replace(o, cost=max(o.cost, cost(o, fn))) for o in out]
    cache[id(fn)] = (fn, out)
    return out


def _elementwise(fn: Function) -> list[InPlace]:
    calls = [n for n in post_order(fn.body) if isinstance(n, Call)]
    if not calls or any(get_op(c.op).pattern > OpPattern.BROADCAST for c in calls):
        return []
    out_t = fn.body.ty
    opts = []
    for i, p in enumerate(fn.params):
        if p.ty.shape != out_t.shape or np.dtype(p.ty.dtype).itemsize < np.dtype(out_t.dtype).itemsize:
            continue
        if _elementwise_proof(out_t.shape, np.dtype(p.ty.dtype).itemsize, np.dtype(out_t.dtype).itemsize):
            opts.append(InPlace(i, "elementwise", proof="isl: no clobbered read (row-major element loop)"))
    return opts


def _elementwise_proof(shape, in_size: int, out_size: int) -> bool:
    shape = tuple(shape) or (1,)
    dims = tuple(f"i{d}" for d in range(len(shape)))
    idx = ", ".join(dims)
    dom = " and ".join(f"0 <= {d} < {n}" for d, n in zip(dims, shape))
    model = Model([Access("S", dims, dom, dims, reads=(f"X[{idx}]",), writes=(f"Y[{idx}]",))])
    layout = Layout({"X": (shape, in_size, 0), "Y": (shape, out_size, 0)})
    return clobbered_reads(model, layout, ("X",)).is_empty()


REL_ALIGN = 64     # a rel offset every arena alignment divides


def _transpose(fn: Function) -> list[InPlace]:
    """A transpose group (element-wise epilogue of one operand: the quantize of a float image) whose
    output is smaller than its input: the output ends where the input ends (``rel``, rounded down to
    REL_ALIGN) and the loop runs descending over the output (lower/elemwise.py), so float32 NCHW →
    int8 NHWC writes pixel p's bytes only after every read of pixels ≥ p."""
    try:
        anchor, epi = split_group(fn)
    except MalformedGroup:
        return []
    if anchor is None or anchor.op != "transpose" or any(len(c.args) != 1 for c in epi):
        return []
    (x,), out_t, axes = anchor.args, fn.body.ty, anchor.attrs["axes"]
    in_b, out_b = (int(np.prod(t.shape)) * np.dtype(t.dtype).itemsize for t in (x.ty, out_t))
    if not any(x is p for p in fn.params) or in_b <= out_b:
        return []
    rel = (in_b - out_b) // REL_ALIGN * REL_ALIGN
    dims = tuple(f"i{d}" for d in range(len(axes)))
    dom = " and ".join(f"0 <= {d} < {n}" for d, n in zip(dims, out_t.shape))
    src = ", ".join(dims[axes.index(a)] for a in range(len(axes)))
    model = Model([Access("S", dims, dom, tuple(f"-{d}" for d in dims), reads=(f"X[{src}]",),
                          writes=(f"Y[{', '.join(dims)}]",))])
    layout = Layout({"X": (tuple(x.ty.shape), np.dtype(x.ty.dtype).itemsize, 0),
                     "Y": (tuple(out_t.shape), np.dtype(out_t.dtype).itemsize, rel)})
    if not clobbered_reads(model, layout, ("X",)).is_empty():
        return []
    return [InPlace(fn.params.index(x), "transpose", order="descending", rel=rel,
                    proof="isl: no clobbered read (descending output loop, output at the input's end)")]


def _residual_add(fn: Function) -> list[InPlace]:
    try:
        anchor, epi = split_group(fn)
    except MalformedGroup:
        return []
    if anchor is None:
        return []
    out_t = fn.body.ty
    data = {id(a) for a in anchor.args}
    opts = []
    for i, p in enumerate(fn.params):
        if id(p) in data or p.ty != out_t:
            continue
        readers = [c for c in epi if any(a is p for a in c.args)]
        if not readers or sum(a is p for c in epi for a in c.args) != 1:
            continue
        if _same_index_proof(out_t.shape):
            opts.append(InPlace(i, "residual_add", proof="isl: write/read byte conflicts only within one "
                                "instance (any loop order)"))
    return opts


def _same_index_proof(shape) -> bool:
    dims = tuple(f"i{d}" for d in range(len(shape)))
    idx = ", ".join(dims)
    dom = " and ".join(f"0 <= {d} < {n}" for d, n in zip(dims, shape))
    model = Model([Access("S_out", dims, dom, dims, reads=(f"P[{idx}]",), writes=(f"Y[{idx}]",))])
    layout = Layout({"P": (tuple(shape), 1, 0), "Y": (tuple(shape), 1, 0)})
    return only_self_conflicts(model, layout, "Y", "P")


def _conv(fn: Function):
    got = conv_group(fn)
    if got is None:
        return None
    anchor, _, g = got
    if not isinstance(anchor.args[0], Var) or g.nchw_input:     # the access models read X as NHWC
        return None
    return fn.params.index(anchor.args[0]), g


def _dw_plane(fn: Function) -> list[InPlace]:
    got = _conv(fn)
    if got is None or not got[1].depthwise:
        return []
    i, g = got
    if g.out_bytes > g.in_bytes or not prove_dw_plane(g):
        return []
    return [InPlace(i, "dw_plane", scratch=dw_plane_scratch(g),
                    proof="isl: no clobbered read of X; plane flow = copy of the same channel or border fill")]


def prove_dw_plane(g: ConvGeom) -> bool:
    model = Model(dw_plane_model(g))
    layout = Layout({"X": ((g.H, g.W, g.C), 1, 0), "Y": ((g.OH, g.OW, g.K), 1, 0)})
    if not clobbered_reads(model, layout, ("X",)).is_empty():
        return False
    # a plane cell read by S_dw comes from the copy of the same channel or from the border fill
    intended = intended_flow(model, "{ S_copy[k, h, w] -> S_dw[k2, oh, ow] : k2 = k; "
                                    "S_fill[a, b] -> S_dw[k, oh, ow] }", same_cell=True)
    return flow_mismatch(model, (("P", 2),), intended).is_empty()


def _pixel_buffer(fn: Function) -> list[InPlace]:
    got = _conv(fn)
    if got is None:
        return []
    i, g = got
    order = prove_pixel_buffer(g)
    if order is None:
        return []
    return [InPlace(i, "pixel_buffer", scratch=g.K, order=order,
                    proof=f"isl: no clobbered read of X ({order} pixels); pixel-buffer flow intended")]


def prove_pixel_buffer(g: ConvGeom) -> str | None:
    """The first pixel order ('ascending', 'descending') in which a pixel-buffer kernel may write
    over its input at the same offset, one pixel at a time and in pairs of flattened pixels (the
    SIMD variants' blocking) alike, or None."""
    first = ("descending", "ascending") if g.out_bytes > g.in_bytes else ("ascending", "descending")
    layout = Layout({"X": ((g.H, g.W, g.C), 1, 0), "Y": ((g.OH, g.OW, g.K), 1, 0)})
    for order in first:
        ok = True
        for block in (1, 2):
            model = Model(pixel_buffer_model(g, order, block))
            intended = intended_flow(model, "{ S_px[oh, ow, k] -> S_store[oh, ow, k] }")
            if not clobbered_reads(model, layout, ("X",)).is_empty() or \
                    not flow_mismatch(model, (("T", 3),), intended).is_empty():
                ok = False
                break
        if ok:
            return order
    return None


def _conv_offset(fn: Function) -> list[InPlace]:
    got = _conv(fn)
    if got is None or got[1].G != 1:
        return []
    i, g = got
    R = prove_conv_offset(g)
    if R is None:
        return []
    return [InPlace(i, "conv_offset", cost=1.0, rel=-R,
                    proof=f"isl: no clobbered read of X (input {R} bytes above the output; pixels ascending, "
                          "blocks written before read)")]


def prove_conv_offset(g: ConvGeom, form: str = "any", step: int = REL_ALIGN) -> int | None:
    """The smallest offset R (a multiple of ``step`` bytes) of the input above the output at which the
    normal conv kernel whose blocks order reads and writes as ``form`` says (``poly.inplace_models.
    conv_offset_models``) may write over it, or None when none saves bytes."""
    def ok(R: int) -> bool:
        layout = Layout({"X": ((g.H, g.W, g.C), 1, R), "Y": ((g.OH, g.OW, g.K), 1, 0)})
        return all(clobbered_reads(Model(m), layout, ("X",)).is_empty() for m in conv_offset_models(g, form))
    lo = max(0, (g.out_bytes - g.in_bytes) // step * step)
    hi = -(-g.out_bytes // step) * step                   # no overlap: legal, saves nothing
    if max(g.out_bytes, g.in_bytes + lo) >= g.in_bytes + g.out_bytes:
        return None
    if ok(lo):
        return lo
    while hi - lo > step:                                 # legality grows with R: the least R that proves
        mid = (lo + hi) // 2 // step * step
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi if max(g.out_bytes, g.in_bytes + hi) < g.in_bytes + g.out_bytes and hi < g.out_bytes else None


def conv_offset_form(kind: str, g: ConvGeom) -> str | None:
    """The read/write order (``conv_offset_models`` form) of the normal kernel ``kind`` (a strategy
    name) of a conv, or None for a kernel whose order no model states (sparse, skip-zero, quads)."""
    if kind == "conv2d.ref":
        return "pixel"
    if kind in ("conv2d.arm_dsp", "conv2d.arm_mve"):
        return "direct" if g.is_pointwise else "im2col"
    return None


__all__ = ["conv_offset_form", "options", "prove_conv_offset", "prove_dw_plane", "prove_pixel_buffer"]
