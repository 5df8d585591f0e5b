"""nn.pad: constant padding (ONNX Pad-13/18/19 with mode='constant'); nn.border_pad: modes edge,
reflect and wrap (a copy through per-axis source index tables).

``pad_width`` is one (before, after) pair per axis. A negative amount crops, as ONNX allows, so an
output element either copies the input element at ``out - before`` or is ``pad_value``.
"""
import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


@register_op
class Pad(OpDef):
    name, pattern, num_inputs = "nn.pad", OpPattern.INJECTIVE, 1
    attrs = {"pad_width": (), "pad_value": 0.0}

    def infer(self, args, attrs):
        (x,) = args
        pw = attrs["pad_width"]
        if len(pw) != x.ndim:
            raise TinyfuseError(f"nn.pad: {len(pw)} (before, after) pairs for a rank-{x.ndim} input")
        shape = tuple(d + b + a for d, (b, a) in zip(x.shape, pw))
        if min(shape, default=1) <= 0:
            raise TinyfuseError(f"nn.pad: pads {[list(p) for p in pw]} leave an empty output {list(shape)} "
                                f"from input {list(x.shape)}")
        return TensorType(shape, x.dtype)

    def compute(self, x, pad_width, pad_value):
        crop = tuple(slice(max(-b, 0), d - max(-a, 0)) for d, (b, a) in zip(x.shape, pad_width))
        grow = [(max(b, 0), max(a, 0)) for b, a in pad_width]
        return np.pad(x[crop], grow, constant_values=np.asarray(pad_value).astype(x.dtype))


BORDER_MODES = ("edge", "reflect", "wrap", "symmetric")


def border_source(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """Source index (int32 [before + n + after]) of every output position of one axis: numpy.pad's
    ``edge`` (clamp), ``reflect`` (mirror without repeating the border element) or ``wrap``
    (periodic), which ONNX Pad-13..25 modes follow, or ``symmetric`` (mirror repeating it: TFLite
    MIRROR_PAD SYMMETRIC)."""
    return np.pad(np.arange(n, dtype=np.int32), (before, after), mode=mode)


@register_op
class BorderPad(OpDef):
    """nn.border_pad: ONNX Pad-13..25 with mode edge, reflect or wrap (TFLite MIRROR_PAD: reflect,
    symmetric). ``pad_width`` one
    (before, after) pair per axis, non-negative; ``reflect`` needs pads < the axis size when the
    size is 1 (nothing to mirror). Output element ``o`` copies ``x[src_0[o_0], src_1[o_1], ...]``
    with ``src_a = border_source(...)`` (a pure copy, any dtype)."""

    name, pattern, num_inputs = "nn.border_pad", OpPattern.INJECTIVE, 1
    moves_data = True
    attrs = {"pad_width": (), "mode": "edge"}

    def infer(self, args, attrs):
        (x,) = args
        pw, mode = attrs["pad_width"], attrs["mode"]
        if len(pw) != x.ndim or mode not in BORDER_MODES or min((v for p in pw for v in p), default=0) < 0:
            raise TinyfuseError(f"nn.border_pad: pads {[list(p) for p in pw]} (mode {mode}) do not fit a rank-{x.ndim} "
                                f"input, or are negative")
        if mode == "reflect" and any(d == 1 and (b or a) for d, (b, a) in zip(x.shape, pw)):
            raise TinyfuseError(f"nn.border_pad: reflect pads {[list(p) for p in pw]} an axis of size 1 of "
                                f"{list(x.shape)}")
        return TensorType(tuple(d + b + a for d, (b, a) in zip(x.shape, pw)), x.dtype)

    def sources(self, shape, attrs) -> list:
        """Per axis: the source index table, or None where the axis is not padded."""
        return [border_source(d, b, a, attrs["mode"]) if (b or a) else None
                for d, (b, a) in zip(shape, attrs["pad_width"])]

    def compute(self, x, pad_width, mode):
        src = self.sources(x.shape, {"pad_width": pad_width, "mode": mode})
        return x[np.ix_(*[s if s is not None else np.arange(d) for s, d in zip(src, x.shape)])]
