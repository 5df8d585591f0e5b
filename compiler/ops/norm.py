"""Layer normalization (ONNX LayerNormalization-17), float and int8.

``nn.layer_norm(x, gamma, beta, axis, epsilon)``: each row of L = prod(x.shape[axis:]) elements is
normalized with its mean and biased variance, y = (x − mean) / sqrt(var + epsilon) · gamma + beta;
gamma and beta broadcast to x.shape[axis:] (stash_type=1: statistics in float).

``qnn.layer_norm(x, g, b, ...)``: int8 → int8. TFLM has no LAYER_NORM, so the arithmetic is ours,
chosen so that the C kernel and this numpy reference agree bit for bit: integer sums, one double
expression per row, then float32 per element; every step is one IEEE operation (correctly rounded,
the same in numpy and C; sqrt is the only libm call), in this order:

    d = x − in_zero_point                          (int32)     per row: S1 = Σ d, S2 = Σ d²  (int64)
    num = L·S2 − S1²                               (int64, exact: L²·var / scale²)
    r   = float32(scale / sqrt(num · scale² + epsilon · L²))                    (double, once per row)
    t   = float32(L·d − S1) · r;   y = t · g;   y = y + b                        (float32, per element)
          g = float32(gamma / out_scale), b = float32(beta / out_scale)
    q   = saturate(trunc(y ± 0.5f) + out_zero_point)   y clamped to ±1024 first (round half away)

``scale²`` and ``epsilon · L²`` are double constants computed once (attributes ``scale_sq`` and
``eps_l2``), so C and numpy use the same numbers. The C must not contract y·g + b into an FMA:
ISO C mode (-std=c99, GCC's -ffp-contract=off) and one operation per statement guarantee it.
"""
from __future__ import annotations

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op


def _rows(x: np.ndarray, axis: int) -> np.ndarray:
    return x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), -1)


@register_op
class LayerNorm(OpDef):
    name, pattern, num_inputs = "nn.layer_norm", OpPattern.OUT_ELEMWISE_FUSABLE, 3
    attrs = {"axis": -1, "epsilon": 1e-5}

    def infer(self, args, attrs):
        x, gamma, beta = args
        axis = attrs["axis"]
        if not 0 <= axis < x.ndim:
            raise TinyfuseError(f"nn.layer_norm: axis {axis} out of range for rank {x.ndim} (non-negative)")
        norm = x.shape[axis:]
        for what, p in (("scale", gamma), ("bias", beta)):
            try:
                ok = np.broadcast_shapes(p.shape, norm) == norm
            except ValueError:
                ok = False
            if not ok:
                raise TinyfuseError(f"nn.layer_norm: {what} {list(p.shape)} does not broadcast to the "
                                    f"normalized shape {list(norm)}")
        return x

    def compute(self, x, gamma, beta, axis, epsilon):
        r = _rows(x.astype(np.float64), axis)
        mean = r.mean(axis=1, keepdims=True)
        var = ((r - mean) ** 2).mean(axis=1, keepdims=True)
        y = ((r - mean) / np.sqrt(var + epsilon)).reshape(x.shape)
        return (y * gamma.astype(np.float64) + beta.astype(np.float64)).astype(x.dtype)


@register_op
class QLayerNorm(OpDef):
    """int8 layer norm (module docstring). g, b: float32 [L] (gamma, beta over out_scale)."""
    name, pattern, num_inputs = "qnn.layer_norm", OpPattern.OUT_ELEMWISE_FUSABLE, 3
    attrs = {"axis": -1, "scale": 1.0, "scale_sq": 1.0, "eps_l2": 0.0, "in_zero_point": 0, "out_zero_point": 0}

    def infer(self, args, attrs):
        x, g, b = args
        axis = attrs["axis"]
        length = int(np.prod(x.shape[axis:], dtype=np.int64)) if 0 <= axis < x.ndim else -1
        if x.dtype != "int8" or g.shape != (length,) or b.shape != (length,) or g.dtype != "float32" \
                or b.dtype != "float32":
            raise TinyfuseError(f"qnn.layer_norm: needs int8 x and float32 [L] g, b; got {x}, {g}, {b} "
                                f"(axis {axis})")
        return x

    def compute(self, x, g, b, axis, scale, scale_sq, eps_l2, in_zero_point, out_zero_point):
        d = _rows(x.astype(np.int64) - in_zero_point, axis)
        n = d.shape[1]
        s1 = d.sum(axis=1, keepdims=True)
        s2 = (d * d).sum(axis=1, keepdims=True)
        num = n * s2 - s1 * s1
        r = (np.float64(scale) / np.sqrt(num.astype(np.float64) * np.float64(scale_sq) + np.float64(eps_l2)))
        t = (n * d - s1).astype(np.float32) * r.astype(np.float32)
        y = np.clip(t * g.astype(np.float32) + b.astype(np.float32), np.float32(-1024), np.float32(1024))
        q = np.sign(y) * np.floor(np.abs(y) + np.float32(0.5))          # float32: C's trunc(y ± 0.5f)
        return quant.saturate(q.astype(np.int64) + out_zero_point).reshape(x.shape)
