"""sparse_weights: choose, per kernel, the ``sparse`` variant for int8 convs and fully-connected layers
whose constant weights have enough zeros (``--sparse auto``, the default; ``--sparse off`` chooses
none, ``--sparse on`` every candidate, whatever the estimate: for measurements).

For every kernel Function whose anchor is an int8 ``qnn.conv2d`` (NHWC/OHWI, read in NHWC) or a
``qnn.matmul`` with a constant 2-D weight matrix, the pass counts the nonzero weights and asks the
cost model (``cost.analytical.sparse_decision``) whether the sparse kernel (lower/conv/sparse.py:
compile-time lists of the nonzero weights, zero channels reduced to their bias) beats the dense
kernel lowering would otherwise pick (``strategy.choose``). Chosen weights are
recorded on ``options.context.sparse_kernels`` (id → (Constant, reason, layout)); the IR is unchanged.
On arm_dsp targets groups-1 convs and fully connected layers take the SMLAD pair layout (``pairs``:
ops/sparse_pairs.py, lower/conv/sparse_dsp.py), costed by ``cost.analytical.sparse_pair_instructions``.
Poly-fused chains (lowered by fused_chain) are left as they are.
"""
from __future__ import annotations

import logging

import numpy as np

from ..cost.analytical import sparse_decision, sparse_instructions, sparse_pair_instructions
from ..ir import Call, Constant, Function, IRModule, post_order
from ..ir.group import MalformedGroup, split_group
from ..ops.conv_geom import ConvGeom
from ..ops.sparse_geom import BLOCK, pixel_kinds
from ..ops.sparse_pairs import pair_cover
from ..strategy import by_name, choose

log = logging.getLogger("tinyfuse.sparse")


def _pairs_estimate(pixels: int, w2d: np.ndarray, channels_in: int) -> float:
    """Estimated instructions of the SMLAD pair layout (lower/conv/sparse_dsp.py) for weights [K, R]."""
    pc = pair_cover(w2d)
    return sparse_pair_instructions(pixels, w2d.shape[1], w2d.shape[0], pc["pairs"], pc["ncross"],
                                    channels_in % 4 == 0)


def _candidate(anchor, dense_isa: str, force: bool = False) -> tuple | None:
    """(family, dense MACs, outputs, zero fraction, estimated sparse instructions, layout) of an anchor
    the sparse kernel can run, else None. ``dense_isa``: the variant class of the dense kernel it replaces; on arm_dsp a groups-1
    conv or a fully connected layer (output rank >= 2) may take the SMLAD ``pairs`` layout: the one of
    ``pairs`` and ``lists`` with the lower estimate is chosen (``force``, --sparse on: ``pairs``),
    elsewhere ``lists``."""
    if anchor is None or anchor.op not in ("qnn.conv2d", "qnn.matmul"):
        return None
    x, w = anchor.args[:2]
    if not isinstance(w, Constant) or w.ty.dtype != "int8" or x.ty.dtype != "int8" or not w.value.size:
        return None
    wv = w.value
    zeros = 1 - np.count_nonzero(wv) / wv.size
    outputs = int(np.prod(anchor.ty.shape))
    if anchor.op == "qnn.matmul":
        if w.ty.ndim != 2:
            return None
        n = w.ty.shape[1]
        est = sparse_instructions((0, outputs // n, 0), n, np.count_nonzero(wv) / n, 0.0, BLOCK)
        if dense_isa == "arm_dsp" and anchor.ty.ndim >= 2 and sum(d > 1 for d in anchor.ty.shape[:-1]) <= 1:
            pairs = _pairs_estimate(outputs // n, np.ascontiguousarray(wv.T), w.ty.shape[0])
            if force or pairs < est:
                return "pw", outputs * w.ty.shape[0], outputs, zeros, pairs, "pairs"
        return "pw", outputs * w.ty.shape[0], outputs, zeros, est, "lists"
    a = anchor.attrs
    if a["data_layout"] != "NHWC" or a["kernel_layout"] != "OHWI" or a["input_layout"] is not None:
        return None
    g = ConvGeom.of_call(anchor)
    pairs = _pairs_estimate(g.N * g.P, wv.reshape(g.K, -1), g.C) if dense_isa == "arm_dsp" and g.G == 1 else None
    taps = np.count_nonzero(np.abs(wv.astype(np.int32)).sum(axis=3)) / g.K
    # a depthwise conv usually runs in place through a padded plane (dw_plane_sparse): no border windows
    kinds = (g.OW // BLOCK * BLOCK * g.OH, g.OW % BLOCK * g.OH, 0) if g.depthwise else pixel_kinds(g)
    est = sparse_instructions(tuple(g.N * p for p in kinds), g.K, np.count_nonzero(wv) / g.K, taps, BLOCK)
    if pairs is not None and (force or pairs < est):
        return g.family, g.N * g.macs, outputs, zeros, pairs, "pairs"
    return g.family, g.N * g.macs, outputs, zeros, est, "lists"


def sparse_weights(mod: IRModule, options) -> IRModule:
    """Record the sparse kernels of ``mod`` on ``options.context`` (module doc); returns ``mod``.
    With step fission (``--max-step-instructions``) ``auto`` keeps every kernel dense: the sparse
    kernels are not sliced, so one of them could run far beyond the step budget."""
    if options.sparse == "off" or (options.sparse == "auto" and options.max_step_instructions):
        return mod
    for node in post_order(mod.main.body):
        if not (isinstance(node, Call) and isinstance(node.op, Function)) or node.op.attrs.get("poly"):
            continue
        try:
            anchor, _ = split_group(node.op)
        except MalformedGroup:
            continue
        if anchor is None:
            continue
        dense = choose(node.op, options).kind
        cand = _candidate(anchor, by_name(dense).isa, options.sparse == "on")
        if cand is None:
            continue
        fam, macs, outputs, zeros, est, layout = cand
        decision = sparse_decision(fam, macs, outputs, zeros, dense, est)
        log.info("%s: sparse %s %s (%s)", anchor.span, layout, "chosen" if decision.fuse else "not chosen",
                 decision.reason)
        if decision.fuse or options.sparse == "on":
            options.context.sparse_kernels[id(anchor.args[1])] = (anchor.args[1], decision.reason, layout)
    return mod
