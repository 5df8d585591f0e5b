"""nn.matmul: a[..., M, K] x b[K, N] -> [..., M, N] (ONNX MatMul-13 with a 2-D right operand;
Gemm is lowered onto it by the frontend)."""
import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


@register_op
class MatMul(OpDef):
    name, pattern, num_inputs = "nn.matmul", OpPattern.OUT_ELEMWISE_FUSABLE, 2

    def infer(self, args, attrs):
        a, b = args
        if a.ndim < 1 or b.ndim != 2 or a.shape[-1] != b.shape[0]:
            raise TinyfuseError(f"nn.matmul: shapes {a.shape} x {b.shape} unsupported "
                                "(need a[..., K] x b[K, N])")
        return TensorType(a.shape[:-1] + (b.shape[1],), a.dtype)

    def compute(self, a, b):
        return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)
