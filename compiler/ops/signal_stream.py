"""The streaming ops of TFLM's signal library (SignalFramer, SignalStacker, SignalOverlapAdd, SignalDelay):
what TFLM keeps in circular buffers between invocations is here a state operand (``ir.State``, the
converter's ``StateTable.internal``) holding the newest samples in order, oldest first, and the op's
output packs the new state before the result (the converter slices both).

- ``signal.framer(x int16 [O, n·S], buf int16 [O, M]; frame_size F, frame_step S)`` → int16
  [O·M + O·n·F]: with e = buf ‖ x per row, frame f is e[f·S, f·S + F) and the new buf the last M of e.
  M is the number of samples TFLM's buffer holds between frames once it produces them (prefill: F − S;
  else the first multiple of S >= F − S); before that TFLM's frames are not valid and not written.
- ``signal.stream_count(c int32 [1]; ...)`` → int32 [2]: the data-independent part of FRAMER and STACKER,
  (new count, valid 0/1). ``kind = "framer"``: c is TFLM's available samples, valid = c >= F − S, c' =
  min(c + n·S, M). ``kind = "stacker"``: c = −1 before the first frame, else the available samples a;
  a' = C·(1 + left) on the first frame, else a + C; valid = a' >= B (B = C·(left + right + 1)), c' = a' − C·step
  when valid, else a'.
- ``signal.stacker(x int16 [C], buf int16 [B], c int32 [1]; ...)`` → int16 [2B]: the new buf (last B of
  buf ‖ x, x written 1 + left times on the first frame), then the output, the oldest B of the a' newest
  samples (zeros when not valid: TFLM leaves the output unwritten).
- ``signal.overlap_add(x T [O, n, F], buf T [O, F]; frame_step S)`` → T [O·F + O·n·S], T int16
  (saturating adds) or float32: per frame buf += x, emit buf[0, S), shift buf left by S, zero its end.
- ``signal.delay(x int16 [O, F], buf int16 [O, D])`` → int16 [O·D + O·F]: e = buf ‖ x per row, output e[0, F),
  new buf the last D of e.
"""
from __future__ import annotations

import numpy as np

from ..ir.op import register_op
from ..ir.types import TensorType
from .signal import SignalOp


def framer_hold(frame_size: int, frame_step: int, prefill: bool) -> int:
    """M: the samples TFLM's framer buffer holds between valid frames (ceil to a multiple of the step
    from 0 without prefill)."""
    keep = frame_size - frame_step
    if prefill:
        return keep
    return -(-keep // frame_step) * frame_step


@register_op
class Framer(SignalOp):
    name, num_inputs = "signal.framer", 2
    attrs = {"frame_size": 0, "frame_step": 0}

    def infer(self, args, attrs):
        x, buf = args
        f, s = attrs["frame_size"], attrs["frame_step"]
        ok = x.dtype == buf.dtype == "int16" and x.ndim == 2 and buf.ndim == 2 and buf.shape[0] == x.shape[0]
        self.need(ok and s >= 1 and f >= s and x.shape[1] % s == 0 and buf.shape[1] + s >= f, args,
                  f"needs int16 [O, n * {s}] and a buffer [O, >= {f - s}] (frame_size {f}, frame_step {s})")
        o, n = x.shape[0], x.shape[1] // s
        return TensorType((o * buf.shape[1] + o * n * f,), "int16")

    def compute(self, x, buf, frame_size, frame_step):
        e = np.concatenate([buf, x], axis=1)
        n = x.shape[1] // frame_step
        frames = np.stack([e[:, i * frame_step:i * frame_step + frame_size] for i in range(n)], axis=1)
        return np.concatenate([e[:, e.shape[1] - buf.shape[1]:].reshape(-1), frames.reshape(-1)]).astype(np.int16)


@register_op
class StreamCount(SignalOp):
    name, num_inputs = "signal.stream_count", 1
    attrs = {"kind": "framer", "step": 0, "limit": 0, "threshold": 0, "first": 0, "discard": 0}

    def infer(self, args, attrs):
        (c,) = args
        self.need(c.dtype == "int32" and c.shape == (1,) and attrs["kind"] in ("framer", "stacker"), args,
                  "needs int32 [1] and kind framer or stacker")
        return TensorType((2,), "int32")

    def compute(self, c, kind, step, limit, threshold, first, discard):
        v = int(c[0])
        if kind == "framer":       # step n·S, limit M, threshold F − S
            return np.array([min(v + step, limit), int(v >= threshold)], np.int32)
        a = first if v < 0 else v + step      # step C, first C·(1 + left), threshold B, discard C·step
        valid = a >= threshold
        return np.array([a - discard if valid else a, int(valid)], np.int32)


@register_op
class Stacker(SignalOp):
    name, num_inputs = "signal.stacker", 3
    attrs = {"left": 0, "discard": 0}

    def infer(self, args, attrs):
        x, buf, c = args
        self.need(x.dtype == buf.dtype == "int16" and x.ndim == 1 and buf.ndim == 1 and c.dtype == "int32"
                  and c.shape == (1,) and buf.shape[0] >= x.shape[0] * (1 + attrs["left"]), args,
                  "needs int16 [C], an int16 buffer [B >= C * (1 + left)] and an int32 count")
        return TensorType((2 * buf.shape[0],), "int16")

    def compute(self, x, buf, c, left, discard):
        first = int(c[0]) < 0
        reps = 1 + left if first else 1
        e = np.concatenate([buf] + [x] * reps)
        b = buf.shape[0]
        avail = x.size * reps + (0 if first else int(c[0]))
        out = e[e.size - avail:e.size - avail + b] if avail >= b else np.zeros(b, np.int16)
        return np.concatenate([e[e.size - b:], out]).astype(np.int16)


@register_op
class OverlapAdd(SignalOp):
    name, num_inputs = "signal.overlap_add", 2
    attrs = {"frame_step": 0}

    def infer(self, args, attrs):
        x, buf = args
        s = attrs["frame_step"]
        self.need(x.dtype == buf.dtype and x.dtype in ("int16", "float32") and x.ndim == 3 and buf.ndim == 2
                  and buf.shape == (x.shape[0], x.shape[2]) and 1 <= s <= x.shape[2], args,
                  f"needs int16 or float32 [O, n, F], a buffer [O, F] and 1 <= frame_step {s} <= F")
        o, n, f = x.shape
        return TensorType((o * f + o * n * s,), x.dtype)

    def compute(self, x, buf, frame_step):
        o, n, f = x.shape
        b = buf.copy()
        out = np.zeros((o, n, frame_step), x.dtype)
        for i in range(n):
            if x.dtype == np.int16:
                b = np.clip(b.astype(np.int32) + x[:, i], -32768, 32767).astype(np.int16)
            else:
                b = (b + x[:, i]).astype(np.float32)
            out[:, i] = b[:, :frame_step]
            b = np.concatenate([b[:, frame_step:], np.zeros((o, frame_step), x.dtype)], axis=1)
        return np.concatenate([b.reshape(-1), out.reshape(-1)]).astype(x.dtype)


@register_op
class Delay(SignalOp):
    name, num_inputs = "signal.delay", 2

    def infer(self, args, attrs):
        x, buf = args
        self.need(x.dtype == buf.dtype == "int16" and x.ndim == 2 and buf.ndim == 2 and buf.shape[0] == x.shape[0],
                  args, "needs int16 [O, F] and an int16 buffer [O, D]")
        return TensorType((buf.size + x.size,), "int16")

    def compute(self, x, buf):
        e = np.concatenate([buf, x], axis=1)
        return np.concatenate([e[:, x.shape[1]:].reshape(-1), e[:, :x.shape[1]].reshape(-1)]).astype(np.int16)
