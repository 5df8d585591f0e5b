"""TFLM's streaming signal ops (CUSTOM ``SignalFramer``, ``SignalStacker``, ``SignalOverlapAdd``,
``SignalDelay``) → ``signal.framer`` / ``signal.stacker`` / ``signal.overlap_add`` / ``signal.delay`` and
``signal.stream_count`` (compiler/ops/signal_stream.py), their buffers model state (signal.py's
module docstring). TFLM's kernels run on every row of the outer dimensions with a buffer each."""
from __future__ import annotations

import math

import numpy as np

from ...ir import Expr, call
from ...ops.signal_stream import framer_hold
from .registry import Graph, Op, converter, reshape
from .signal import INT, _assign, _check, _split, _state, _type_option, options


def _valid(g: Graph, op: Op, count: Expr, span: str) -> Expr:
    """The bool scalar ``valid`` from a stream_count result (new count, valid); the count is stored."""
    _assign(g, op, "count", call("slice_view", count, offset=0, newshape=(1,), span=span))
    valid = call("slice_view", count, offset=1, newshape=(1,), span=span)
    return reshape(call("cast", valid, dtype="bool", span=span), (), span)


@converter("CUSTOM 'SignalFramer'", max_version=1, types=INT, raw_int8=True)
def convert_framer(g: Graph, op: Op):
    o = options(op, ("frame_size", "frame_step", "prefill"))
    x, out = op.inputs[0], op.outputs[0]
    f, s = o["frame_size"], o["frame_step"]
    ok = len(op.outputs) == 2 and x.dtype == out.dtype == "int16" and len(x.shape) >= 1 and s >= 1 and f >= s
    last = x.shape[-1] if x.shape else 0
    _check(op, ok and last % s == 0 and out.shape == x.shape[:-1] + (last // s, f) and op.outputs[1].shape == ()
           and op.outputs[1].dtype == "bool", f"needs int16 [..., n * {s}] → int16 [..., n, {f}], bool [] "
           f"(frame_size {f} >= frame_step {s})")
    outer, n, hold = math.prod(x.shape[:-1]), last // s, framer_hold(f, s, o["prefill"])
    xs = reshape(g.value(x), (outer, last), op.span)
    if hold:
        buf = _state(g, op, "samples", (outer, hold), "int16")
        packed = call("signal.framer", xs, buf, frame_size=f, frame_step=s, span=op.span)
        new, frames = _split(packed, outer * hold, ((outer, hold), out.shape), op.span)
        _assign(g, op, "samples", new)
    else:                    # frame_size == frame_step: every frame is a row of the input
        frames = reshape(call("copy", xs, span=op.span), out.shape, op.span)
    start = f - s if o["prefill"] else 0
    count = call("signal.stream_count", _state(g, op, "count", (1,), "int32", np.array([start], np.int32)),
                 kind="framer", step=n * s, limit=hold, threshold=f - s, span=op.span)
    return [frames, _valid(g, op, count, op.span)]


@converter("CUSTOM 'SignalStacker'", max_version=1, types=INT, raw_int8=True)
def convert_stacker(g: Graph, op: Op):
    o = options(op, ("num_channels", "stacker_left_context", "stacker_right_context", "stacker_step"))
    x, out = op.inputs[0], op.outputs[0]
    c, left, right, step = (o[k] for k in ("num_channels", "stacker_left_context", "stacker_right_context",
                                           "stacker_step"))
    size = c * (left + right + 1)
    _check(op, len(op.outputs) == 2 and x.shape == (c,) and out.shape == (size,) and x.dtype == out.dtype == "int16"
           and c >= 1 and min(left, right) >= 0 and 1 <= step <= left + right + 1 and op.outputs[1].shape == (),
           f"needs int16 [{c}] → int16 [{size}], bool [] (1 <= stacker_step <= left + right + 1)")
    count = _state(g, op, "count", (1,), "int32", np.array([-1], np.int32))
    buf = _state(g, op, "samples", (size,), "int16")
    packed = call("signal.stacker", g.value(x), buf, count, left=left, discard=c * step, span=op.span)
    new, frame = _split(packed, size, ((size,), (size,)), op.span)
    _assign(g, op, "samples", new)
    counted = call("signal.stream_count", count, kind="stacker", step=c, first=c * (1 + left), threshold=size,
                   discard=c * step, span=op.span)
    return [frame, _valid(g, op, counted, op.span)]


@converter("CUSTOM 'SignalOverlapAdd'", max_version=1, types=INT, raw_int8=True)
def convert_overlap_add(g: Graph, op: Op):
    o = options(op, ("T", "frame_step"))
    x, out = op.inputs[0], op.outputs[0]
    _type_option(op, o, x.dtype)
    s = o["frame_step"]
    ok = len(x.shape) >= 2 and x.dtype in ("int16", "float32") and out.dtype == x.dtype
    n, f = x.shape[-2:] if ok else (0, 0)
    _check(op, ok and out.shape == x.shape[:-2] + (n * s,) and 1 <= s <= f,
           f"needs int16 or float32 [..., n, F] → [..., n * {s}] with frame_step {s} <= F")
    outer = math.prod(x.shape[:-2])
    buf = _state(g, op, "samples", (outer, f), x.dtype)
    packed = call("signal.overlap_add", reshape(g.value(x), (outer, n, f), op.span), buf, frame_step=s, span=op.span)
    new, y = _split(packed, outer * f, ((outer, f), out.shape), op.span)
    _assign(g, op, "samples", new)
    return y


@converter("CUSTOM 'SignalDelay'", max_version=1, types=INT, raw_int8=True)
def convert_delay(g: Graph, op: Op):
    o = options(op, ("delay_length",))
    x, out = op.inputs[0], op.outputs[0]
    d = o["delay_length"]
    _check(op, x.dtype == out.dtype == "int16" and out.shape == x.shape and len(x.shape) >= 1 and d >= 0,
           "needs int16 [..., F] → int16 [..., F] and delay_length >= 0")
    f = x.shape[-1]
    outer = math.prod(x.shape[:-1])
    xs = reshape(g.value(x), (outer, f), op.span)
    if d == 0:
        return reshape(call("copy", xs, span=op.span), out.shape, op.span)
    buf = _state(g, op, "samples", (outer, d), "int16")
    packed = call("signal.delay", xs, buf, span=op.span)
    new, y = _split(packed, outer * d, ((outer, d), out.shape), op.span)
    _assign(g, op, "samples", new)
    return y

