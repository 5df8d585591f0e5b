"""horizontal: sibling ops that read the same tensor, run as one kernel (made by ``fuse_horizontal``).

``horizontal(x, extra..., branches=Branches(fn))``: ``fn`` is a Function whose params bind to the
call's operands and whose body is a Tuple of the branch outputs, e.g. the Q/K/V projections

    fn(%x) {
      %0 = nn.matmul(%x, meta[W_q | W_k | W_v])       one anchor over the concatenated weights
      %1 = add(slice_axis(%0, axis=2, begin=0, end=64), meta[b_q])          branch epilogues
      ...
      (%1, %3, %5)
    }

The result is *packed*: the branch outputs flattened one after the other (1-D, common dtype), so
branch j is the contiguous range [offset_j, offset_j + size_j) — ``slice_axis`` + ``reshape`` of it
gives the branch back, and a consumer that reads views (``fold_views``) reads it in place.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TinyfuseError
from ..ir.expr import Function, Tuple
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType


@dataclass(frozen=True, eq=False)
class Branches:
    """The branch Function of a ``horizontal`` call (an attribute value; prints as a nested fn).

    ``parts`` (anchor kinds only): per branch, the same computation unfused, ``fn(params) {
    anchor(x, W_j) → epilogue }`` over the same params, for kernel variants that run each branch
    with the target's kernel of its anchor (lower/horizontal_arm.py)."""

    fn: Function
    parts: tuple[Function, ...] | None = None

    @property
    def outputs(self):
        return self.fn.outputs

    def segments(self) -> list[tuple[int, tuple[int, ...]]]:
        """(offset, shape) of each branch in the packed result."""
        out, offset = [], 0
        for o in self.outputs:
            out.append((offset, o.ty.shape))
            offset += o.ty.size
        return out

    def __str__(self) -> str:
        from ..ir.printer import astext
        return astext(self.fn, "    ").strip()


@register_op
class Horizontal(OpDef):
    name, pattern, num_inputs = "horizontal", OpPattern.OPAQUE, None
    attrs = {"branches": None}

    def infer(self, args, attrs):
        br = attrs["branches"]
        if not isinstance(br, Branches) or not isinstance(br.fn.body, Tuple) or len(br.fn.params) != len(args):
            raise TinyfuseError("horizontal: needs branches=Branches(fn) with one param per operand and a Tuple body")
        for p, a in zip(br.fn.params, args):
            if p.ty != a:
                raise TinyfuseError(f"horizontal: operand {a} bound to param of type {p.ty}")
        dtypes = {o.ty.dtype for o in br.outputs}
        if len(dtypes) != 1:
            raise TinyfuseError(f"horizontal: branch outputs have different dtypes {sorted(dtypes)}")
        return TensorType((sum(o.ty.size for o in br.outputs),), dtypes.pop())

    def compute(self, *args, branches):
        from ..ir.interpreter import evaluate
        return np.concatenate([np.asarray(o).reshape(-1) for o in evaluate(branches.fn, list(args))])
