"""Tensor types of the IR: static shape + dtype (quantization parameters come with the int8 work)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: IR dtype name -> C type used in generated code.
C_TYPES = {"float32": "float", "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t",
           "int32": "int32_t", "int64": "int64_t", "bool": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
           "uint64": "uint64_t", "float64": "double"}
#: 16-bit float storage types of model inputs and outputs (uint16_t bit patterns; the graph computes float32).
STORAGE_TYPES = {"float16": "uint16_t", "bfloat16": "uint16_t"}


@dataclass(frozen=True)
class TensorType:
    """A tensor of static ``shape`` (tuple of ints >= 0) and ``dtype`` (numpy name, e.g. 'float32')."""

    shape: tuple[int, ...]
    dtype: str

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        """Bytes the tensor occupies in the arena."""
        return self.size * (2 if self.dtype in STORAGE_TYPES else np.dtype(self.dtype).itemsize)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def ctype(self) -> str:
        return C_TYPES.get(self.dtype) or STORAGE_TYPES[self.dtype]

    def __str__(self) -> str:
        dims = ", ".join(str(d) for d in self.shape) + ("," if len(self.shape) == 1 else "")
        return f"Tensor[({dims}), {self.dtype}]"


@dataclass(frozen=True)
class TupleType:
    """The type of a Tuple expression (several model outputs)."""

    fields: tuple[TensorType, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(f) for f in self.fields) + ")"
