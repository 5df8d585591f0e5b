"""Kernel signatures and features: what the learned cost model and the tuning records know of a kernel.

``group_signature(fn, target, rule)`` is a stable hash (sha256, 16 hex digits) of a fused group: its
ops in post order (poly-fused groups recursively), every tensor's shape and dtype, the attributes
(arrays by their bytes), the poly-fuse strategy in ``fn.attrs['poly']``, the in-place rule the memory
plan chose for it (another kernel runs) and the target. It does not depend on Python object ids,
kernel names or the weights' values (only their shapes), so the same layer in two models, or two
compiles of one model, hash equal. ``record_key(sig, knobs)`` adds the knob values (variant ...).

``kernel_features(fn, kernel, options)`` gives a fixed-length vector (``FEATURE_NAMES``): loop extents
of a conv (output rows, columns, channels, taps, input channels per group), MACs, bytes per tensor
(inputs, weights, output), reuse (MACs per byte), scratch, recompute / tile width / ring rows of a
poly-fused chain, the variant and family as one-hot columns, the analytical model's instruction
estimate (``cost.analytical``), an estimate of live registers, the op kinds of the group and the
lowering knobs it was built with (``Kernel.knobs``: int16 weights, channels per block, unroll limit).
"""
from __future__ import annotations

import hashlib
import json
import math

import numpy as np

from ..ir import Call, Constant, Function, Var, get_op, post_order
from ..ops import ops_where
from ..ops.conv_geom import conv_group

VARIANTS = ("ref", "arm_dsp", "arm_mve", "fused_chain", "inplace_dw_plane", "inplace_pixel")
FAMILIES = ("conv", "dw", "pw", "dense", "pool", "softmax", "elemwise", "other")
FAMILY_PRIORITY = ("dense", "pool", "softmax")   # a group holding an op of one of these families is of it
OP_KINDS = ops_where(lambda d: d.cost_feature) + ("other",)   # OpDef.cost_feature, sorted; then the rest
NUMERIC = ("log_macs", "log_out_elems", "log_in_bytes", "log_w_bytes", "log_out_bytes", "log_reuse",
           "log_scratch", "recompute", "log_tile_w", "ntiles", "stages", "log_oh", "log_ow", "log_k", "log_taps",
           "log_cg", "stride", "log_analytical", "live_regs", "n_ops", "weights16", "block_channels", "log_unroll")
# int16 pre-widened weights (``lower.group_knobs``) drop the SXTB16 pair of every weight word: measured on
# cortex-m4, KWS pointwise 685,107 -> 555,295 instructions (0.81), ResNet-8 chains 0.84 to 0.87
W16_FACTOR = 0.85
FEATURE_NAMES = NUMERIC + tuple(f"variant={v}" for v in VARIANTS) + tuple(f"family={f}" for f in FAMILIES) \
    + tuple(f"op={o}" for o in OP_KINDS)


def _canon(v):
    """A JSON-able, order-stable form of an attribute value."""
    if isinstance(v, np.ndarray) or isinstance(v, np.generic):
        a = np.asarray(v)
        if a.size <= 8:
            return [str(a.dtype), list(a.shape), a.reshape(-1).tolist()]
        return [str(a.dtype), list(a.shape), hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]]
    if isinstance(v, dict):
        return {str(k): _canon(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
    if isinstance(v, (list, tuple)):
        return [_canon(x) for x in v]
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if hasattr(v, "__dataclass_fields__"):
        return {k: _canon(getattr(v, k)) for k in sorted(v.__dataclass_fields__)}
    return repr(v)


def _describe(fn: Function) -> list:
    """A canonical, id-free description of a group's body (poly-fused members recursively)."""
    index: dict[int, int] = {}
    out = []
    for i, p in enumerate(fn.params):
        index[id(p)] = i
        out.append(["param", list(p.ty.shape), p.ty.dtype])
    for node in post_order(fn.body):
        if id(node) in index:
            continue
        if isinstance(node, Constant):
            item = ["const", list(node.ty.shape), node.ty.dtype]
        elif isinstance(node, Call):
            op = ["fn", _describe(node.op)] if isinstance(node.op, Function) else node.op
            attrs = {k: v for k, v in node.attrs.items() if k not in ("name",)}
            item = ["call", op, [index.get(id(a), -1) for a in node.args], _canon(attrs),
                    list(node.ty.shape), node.ty.dtype]
        elif isinstance(node, Var):
            item = ["var", list(node.ty.shape), node.ty.dtype]
        else:
            item = [type(node).__name__]
        index[id(node)] = len(out)
        out.append(item)
    poly = {k: v for k, v in fn.attrs.get("poly", {}).items() if k not in ("decision", "estimate")}
    return [out, _canon(poly)]


def _hash(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def group_signature(fn: Function, target: str, rule: str | None = None) -> str:
    """Stable hash of a fused group as one kernel runs it (module doc)."""
    return _hash({"group": _describe(fn), "rule": rule, "target": target})


def record_key(sig: str, knobs: dict) -> str:
    """Stable hash of a group signature and its knob values: the key of a tuning record."""
    return _hash({"sig": sig, "knobs": _canon(knobs)})


def _family(fn: Function, ops: list[str]) -> str:
    if fn.attrs.get("poly"):             # a poly-fused chain: the family of its last stage
        geos = _geoms(fn)
        return geos[-1].family if geos else "conv"
    g = conv_group(fn)
    if g is not None:
        return g[2].family
    families = {get_op(op).cost_family for op in ops}      # OpDef.cost_family
    for fam in FAMILY_PRIORITY:
        if fam in families:
            return fam
    return "elemwise" if families == {"elemwise"} else "other"


def _geoms(fn: Function) -> list:
    if fn.attrs.get("poly"):
        return [g[2] for n in post_order(fn.body) if isinstance(n, Call) and isinstance(n.op, Function)
                for g in [conv_group(n.op)] if g is not None]
    g = conv_group(fn)
    return [g[2]] if g is not None else []


def _variant_column(variant: str) -> str:
    if variant.startswith("inplace_pixel"):
        return "inplace_pixel"
    return variant if variant in VARIANTS else "ref"


def kernel_features(fn: Function, kernel, options) -> dict[str, float]:
    """Features of one lowered kernel (module doc), by name; ``vector`` orders them. ``options`` (the
    CompileOptions it was compiled with) says whether its fused chain ran DSP stages and gives the
    target's roofline."""
    from ..cost.analytical import conv_bytes, ipm, kernel_estimate
    ops = [c.op if isinstance(c.op, str) else "fn" for c in post_order(fn.body) if isinstance(c, Call)]
    inner = [c.op for n in post_order(fn.body) if isinstance(n, Call) and isinstance(n.op, Function)
             for c in post_order(n.op.body) if isinstance(c, Call) and isinstance(c.op, str)]
    ops_all = [o for o in ops if o != "fn"] + inner
    consts = [n for n in post_order(fn.body) if isinstance(n, Constant)]
    if fn.attrs.get("poly"):
        consts += [n for c in post_order(fn.body) if isinstance(c, Call) and isinstance(c.op, Function)
                   for n in post_order(c.op.body) if isinstance(n, Constant)]
    w_bytes = sum(c.ty.nbytes for c in consts)
    in_bytes = sum(p.ty.nbytes for p in fn.params)
    out_t = fn.body.ty
    out_bytes, out_elems = out_t.nbytes, out_t.size
    macs = max(int(kernel.macs), 0)
    fam = _family(fn, ops_all)
    geoms = _geoms(fn)
    poly = fn.attrs.get("poly", {})
    variant = _variant_column(kernel.variant)
    if geoms:
        g = geoms[-1]
        kinds = getattr(kernel, "stage_kinds", None) or [getattr(kernel, "kind", "") or "conv2d.ref"] * len(geoms)
        analytical = sum(x.macs * ipm(x.family, k) for x, k in zip(geoms, kinds)) + out_elems * 14
        extents = (g.OH, g.OW, g.K, g.KH * g.KW, g.Cg, g.sh)
        moved = sum(conv_bytes(x) for x in geoms)
    else:
        analytical = kernel_estimate("pw", macs, in_bytes + out_bytes + w_bytes, out_elems, options.target,
                                     kind=getattr(kernel, "kind", "") or "conv2d.ref").instructions + out_elems * 2
        extents = (1, 1, out_t.shape[-1] if out_t.shape else 1, 1, 1, 1)
        moved = in_bytes + out_bytes + w_bytes
    if getattr(kernel, "knobs", {}).get("weights") == "int16":
        analytical *= W16_FACTOR
    regs = 11 + len(fn.params) + (2 if variant in ("arm_dsp", "arm_mve") else 0) + len(poly.get("rows", []))
    f = {"log_macs": math.log1p(macs), "log_out_elems": math.log1p(out_elems), "log_in_bytes": math.log1p(in_bytes),
         "log_w_bytes": math.log1p(w_bytes), "log_out_bytes": math.log1p(out_bytes),
         "log_reuse": math.log1p(macs / max(moved, 1)), "log_scratch": math.log1p(kernel.scratch_bytes),
         "recompute": float(poly.get("recompute", 1.0)), "log_tile_w": math.log1p(poly.get("tile_w", 0)),
         "ntiles": float(poly.get("ntiles", 1)), "stages": float(poly.get("stages", 1)),
         "log_oh": math.log1p(extents[0]), "log_ow": math.log1p(extents[1]), "log_k": math.log1p(extents[2]),
         "log_taps": math.log1p(extents[3]), "log_cg": math.log1p(extents[4]), "stride": float(extents[5]),
         "log_analytical": math.log1p(analytical), "live_regs": float(regs), "n_ops": float(len(ops_all)),
         **_knob_features(kernel)}
    for v in VARIANTS:
        f[f"variant={v}"] = float(v == variant)
    for fm in FAMILIES:
        f[f"family={fm}"] = float(fm == fam)
    for o in OP_KINDS:
        f[f"op={o}"] = float(sum(1 for x in ops_all if (x == o) or (o == "other" and x not in OP_KINDS)))
    return f


def _knob_features(kernel) -> dict[str, float]:
    """The lowering knobs a kernel was built with (``Kernel.knobs``; 0 where its family has none):
    int16 pre-widened weights, output channels per block, the unroll limit."""
    knobs, offered = getattr(kernel, "knobs", {}), getattr(kernel, "tunable", {})
    channels = knobs.get("channels", offered["channels"][0]) if "channels" in offered else 0
    return {"weights16": float(knobs.get("weights") == "int16"), "block_channels": float(channels),
            "log_unroll": math.log1p(knobs.get("unroll", 0))}


def analytical_instructions(features: dict[str, float]) -> float:
    """The analytical model's estimate carried in a feature dict (for comparisons)."""
    return math.expm1(features["log_analytical"])


def vector(features: dict[str, float]) -> np.ndarray:
    return np.array([features.get(n, 0.0) for n in FEATURE_NAMES], dtype=np.float64)   # older records: 0
