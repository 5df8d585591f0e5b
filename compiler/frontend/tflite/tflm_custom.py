"""TFLM's own custom operators (registered by micro_mutable_op_resolver.h's AddCustom, not TFLite builtins):

- ``CIRCULAR_BUFFER`` (kernels/circular_buffer.cc, _common.cc): the strided streaming buffer. Its output
  [1, N, H, D] int8 is its state: each invocation it drops the oldest slot and appends the input
  [1, 1, H, D] (bytes as they are), then counts down from ``cycles_max``; before the count reaches 0
  the op returns kTfLiteAbort and the interpreter runs nothing after it (the model's later outputs
  keep their bytes, later state is not written: state.py's gate). ``cycles_max`` comes from the
  custom options (a flexbuffer whose first element, by key order, is ``cycles_max``); a value <= 0
  takes Prepare's fallback: 1 for N in {5, 13, 25}, else 2, except the case Prepare decides with a
  process-wide counter (H 2, D 96), which is refused. The buffer starts as zeros (TFLM's is whatever
  the arena holds).
- ``BasicClassifier`` (kernels/basic_classifier.cc): ``posteriors[i] = input[target_indices[i]]``,
  ``detected[i] = posteriors[i] >= thresholds[i]`` on int32 scores [N] or [1, N]; the indices must be
  constants (TFLM fails the invocation on an index out of range; here that is a compile-time error).
"""
from __future__ import annotations

import math

import numpy as np
from flatbuffers import flexbuffers

from ...ir import Constant, call
from .registry import MULTI_OUTPUTS, Graph, Op, constant, converter, reshape

MULTI = "CUSTOM 'BasicClassifier'"
MULTI_OUTPUTS.add(MULTI)


def _first_option(op: Op) -> int:
    """Element 0 of the custom options flexbuffer (a map: its first key's value), 0 without options."""
    raw = op.options if isinstance(op.options, (bytes, bytearray)) else b""
    if not raw:
        return 0
    try:
        v = flexbuffers.Loads(bytes(raw))
        first = [v[k] for k in sorted(v)][0] if isinstance(v, dict) else v[0]
        return int(first)
    except Exception:  # noqa: BLE001 - damaged options: one error line
        raise op.error("custom options are not a flexbuffer with cycles_max first") from None


def _cycles_max(op: Op, slots: int, h: int, d: int) -> int:
    """cycles_max from the options, or circular_buffer_common.cc's fallback (module doc)."""
    cycles = _first_option(op)
    if cycles > 0:
        return cycles
    if slots in (5, 13, 25):
        return 1
    if (h, d) == (2, 96):
        raise op.error("cycles_max is unset and the buffer is [*, *, 2, 96]: TFLM's Prepare picks 1 or 2 by a "
                       "process-wide count of such buffers; give cycles_max in the custom options")
    return 2


@converter("CUSTOM 'CIRCULAR_BUFFER'", max_version=1, types=("int8",), raw_int8=True)
def convert_circular_buffer(g: Graph, op: Op):
    x, out = op.inputs[0], op.outputs[0]
    ok = len(x.shape) == len(out.shape) == 4 and x.dtype == out.dtype == "int8" and x.shape[0] == out.shape[0] == 1 \
        and x.shape[1] == 1 and x.shape[2:] == out.shape[2:] and out.shape[1] >= 1
    if not ok:
        raise op.error(f"needs int8 [1, 1, H, D] -> int8 [1, N, H, D], got {x} -> {out} (TFLM's kernel shifts "
                       "one batch)")
    n, h, d = out.shape[1:]
    cycles = _cycles_max(op, n, h, d)
    key = ("kernel", op.index)
    buf = g.states.kernel_state((*key, "buffer"), f"{op.span}_buffer", out.shape, "int8", op)
    cat = call("concatenate", buf, g.value(x), axis=1, span=op.span)
    new = call("slice_view", cat, offset=h * d, newshape=out.shape, span=op.span)
    g.states.assign_kernel_state((*key, "buffer"), new, op)
    if cycles > 1:                       # every invocation runs on when cycles_max is 1
        count = g.states.kernel_state((*key, "count"), f"{op.span}_count", (1,), "int32", op,
                                      np.array([cycles], np.int32))
        left = call("subtract", count, Constant(np.array([1], np.int32), f"{op.span}_one"), span=op.span)
        fired = call("equal", left, Constant(np.array([0], np.int32), f"{op.span}_zero"), span=op.span)
        g.states.assign_kernel_state((*key, "count"), call(
            "select", fired, Constant(np.array([cycles], np.int32), f"{op.span}_cycles"), left, span=op.span), op)
        g.states.end_unless(fired)
    return new


@converter(MULTI, max_version=1, types=("int32", "bool"), raw_int8=True)
def convert_basic_classifier(g: Graph, op: Op):
    if len(op.inputs) != 3 or any(t is None for t in op.inputs) or len(op.outputs) != 2:
        raise op.error(f"expects 3 inputs and 2 outputs, got {len(op.inputs)} and {len(op.outputs)}")
    x, idx, thr = op.inputs
    det, post = op.outputs
    k = idx.shape[0] if len(idx.shape) == 1 else -1
    ok = len(x.shape) in (1, 2) and k >= 0 and all(t.shape == (k,) for t in (thr, det, post)) and \
        (x.dtype, idx.dtype, thr.dtype, det.dtype, post.dtype) == ("int32", "int32", "int32", "bool", "int32")
    if not ok:
        raise op.error("needs int32 scores [N] or [1, N], int32 target_indices [K], int32 thresholds [K] -> "
                       f"bool detected [K], int32 posteriors [K]; got outputs {det}, {post}")
    indices = constant(op, idx, "target_indices").astype(np.int64)
    size = math.prod(x.shape)
    if indices.size and (indices.min() < 0 or indices.max() >= size):
        raise op.error(f"target_indices {indices.tolist()} leave the {size} scores (TFLM fails the invocation)")
    scores = reshape(g.value(x), (size,), op.span)
    picked = call("take", scores, indices=tuple(int(i) for i in indices), indices_shape=indices.shape, axis=0,
                  span=op.span)
    return [call("greater_equal", picked, g.value(thr), span=op.span), picked]
