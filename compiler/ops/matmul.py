"""nn.matmul: numpy/ONNX MatMul-13 semantics for a of rank >= 1 and b of rank >= 2:
a[..., M, K] x b[..., K, N] -> [..., M, N], batch dims broadcast (a 1-D a has no M axis; the
frontend turns a 1-D b into [K, 1]). Gemm is lowered onto it by the frontend."""
import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


def batch_shape(a: TensorType, b: TensorType) -> tuple[int, ...]:
    """The broadcast batch dims of a matmul (raises ValueError if they do not broadcast)."""
    return tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))


@register_op
class MatMul(OpDef):
    name, pattern, num_inputs = "nn.matmul", OpPattern.OUT_ELEMWISE_FUSABLE, 2
    horizontal, cost_family = "matmul", "dense"

    def infer(self, args, attrs):
        a, b = args
        try:
            if a.ndim < 1 or b.ndim < 2 or a.shape[-1] != b.shape[-2]:
                raise ValueError
            batch = batch_shape(a, b)
        except ValueError:
            raise TinyfuseError(f"nn.matmul: shapes {list(a.shape)} x {list(b.shape)} do not match "
                                "(need a[..., M, K] x b[..., K, N] with broadcastable batch dims)") from None
        return TensorType(batch + a.shape[-2:-1] + (b.shape[-1],), a.dtype)

    def compute(self, a, b):
        return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)
