"""Batched matmul of two activations (attention's Q·Kᵀ and P·V), with the data movement around it
as index maps instead of copy kernels:

    nn.batch_matmul(a, b, a_view, b_view, out_axes)
        A = view(a, a_view)    [..., M, K]          B = view(b, b_view)    [..., K, N]
        y = transpose(A @ B, out_axes)              batch dims broadcast (numpy rules)

A view (``tinyfuse.ops.view``) reads the logical operand from the operand's flat buffer; None reads the
operand as it is; ``out_axes`` None is the identity. ``fold_views`` builds views from the reshape /
transpose / slice_axis chains that split heads (and from the transpose that merges them back), so
multi-head attention runs without transpose kernels.

``qnn.batch_matmul``: int8 A and B, int32 acc = Σ_k (A − a_zero_point)(B − b_zero_point) (TFLM
BATCH_MATMUL without its output stage; ``legalize_qdq`` adds the requantize with
double(s_a)·double(s_b)/double(s_out)).
"""
from __future__ import annotations

import numpy as np

from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType
from .view import check_view, read_view


def logical_shapes(args: list[TensorType], attrs) -> tuple[tuple, tuple, tuple]:
    """(A shape, B shape, A @ B shape before out_axes); raises TinyfuseError when they do not match."""
    a = check_view(attrs["a_view"], args[0], "batch_matmul operand a")
    b = check_view(attrs["b_view"], args[1], "batch_matmul operand b")
    try:
        if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
            raise ValueError
        batch = tuple(np.broadcast_shapes(a[:-2], b[:-2]))
    except ValueError:
        raise TinyfuseError(f"batch_matmul: shapes {list(a)} x {list(b)} do not match "
                            "(need [..., M, K] x [..., K, N] with broadcastable batch dims)") from None
    return a, b, batch + (a[-2], b[-1])


class _BatchMatMul(OpDef):
    pattern, num_inputs = OpPattern.OUT_ELEMWISE_FUSABLE, 2
    reads_views, cost_family = True, "dense"
    out_dtype = None

    def infer(self, args, attrs):
        _, _, shape = logical_shapes(args, attrs)
        axes = attrs["out_axes"]
        if axes is not None:
            if sorted(axes) != list(range(len(shape))):
                raise TinyfuseError(f"batch_matmul: out_axes {list(axes)} is not a permutation of {len(shape)} axes")
            shape = tuple(shape[i] for i in axes)
        return TensorType(shape, self.out_dtype or args[0].dtype)

    def product(self, a, b, a_view, b_view, out_axes):
        y = np.matmul(read_view(a, a_view), read_view(b, b_view))
        return np.ascontiguousarray(y if out_axes is None else y.transpose(out_axes))


@register_op
class BatchMatMul(_BatchMatMul):
    name = "nn.batch_matmul"
    attrs = {"a_view": None, "b_view": None, "out_axes": None}

    def compute(self, a, b, **attrs):
        return self.product(a.astype(np.float64), b.astype(np.float64), **attrs).astype(a.dtype)


@register_op
class QBatchMatMul(_BatchMatMul):
    name, out_dtype = "qnn.batch_matmul", "int32"
    attrs = {"a_view": None, "b_view": None, "out_axes": None, "a_zero_point": 0, "b_zero_point": 0}

    def infer(self, args, attrs):
        if args[0].dtype != "int8" or args[1].dtype != "int8":
            raise TinyfuseError(f"qnn.batch_matmul: needs int8 operands, got {args[0].dtype}, {args[1].dtype}")
        return super().infer(args, attrs)

    def compute(self, a, b, a_zero_point, b_zero_point, **attrs):
        y = self.product(a.astype(np.int64) - a_zero_point, b.astype(np.int64) - b_zero_point, **attrs)
        return y.astype(np.int32)
