"""Weight formats of .tflite files resolved at compile time: sparse tensors densified, float16
constants folded to float32.

- :func:`densify`: a tensor with a ``sparsity`` field (TFLite's ``SparsityParameters``, schema.fbs;
  the reference decoder is TFLite's ``FormatConverter::SparseToDense`` in
  ``tensorflow/lite/kernels/internal/utils/sparsity_format_converter.cc``) becomes the dense array
  of its ``shape``. The buffer holds only the stored values, in traversal order.
- :func:`fold_weights`: ``DEQUANTIZE`` of a float16 constant (MediaPipe's float16 weights) and
  ``DENSIFY`` of a constant become constants of their output tensor (float32 for the dequantize,
  TFLite's ``dequantize.cc`` widens each half exactly), and the operators go. ``Graph.value`` then
  gives the converters a float32 ``Constant`` wherever they ask for a constant filter or bias.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import TinyfuseError

DENSE, SPARSE_CSR = 0, 1          # schema.fbs DimensionType


def _index_vector(v, what: str) -> np.ndarray:
    """The values of a SparseIndexVector union member (Int32Vector, Uint16Vector, Uint8Vector)."""
    values = getattr(v, "values", None) if v is not None else None
    if values is None:
        raise TinyfuseError(f"sparse tensor: a CSR dimension has no {what} vector; the file is damaged")
    return np.asarray(values, np.int64).reshape(-1)


def _levels(sparsity, rank: int):
    """(traversal order, block map, block sizes, per-level metadata) of ``sparsity``, checked."""
    order = [int(d) for d in (sparsity.traversalOrder if sparsity.traversalOrder is not None else range(rank))]
    block_map = [int(d) for d in (sparsity.blockMap if sparsity.blockMap is not None else [])]
    meta = list(sparsity.dimMetadata or [])
    k = len(block_map)
    if len(order) != rank + k or sorted(order[:rank]) != list(range(rank)) \
            or sorted(order[rank:]) != list(range(rank, rank + k)) or len(meta) != rank + k \
            or any(not 0 <= b < rank for b in block_map):
        raise TinyfuseError(f"sparse tensor: traversal order {order}, block map {block_map} and {len(meta)} "
                            f"dimension metadata do not describe a rank-{rank} tensor; the file is damaged")
    levels = []
    for m in meta:
        if m.format == DENSE:
            levels.append((DENSE, int(m.denseSize), None, None))
        elif m.format == SPARSE_CSR:
            levels.append((SPARSE_CSR, 0, _index_vector(m.arraySegments, "segments"),
                           _index_vector(m.arrayIndices, "indices")))
        else:
            raise TinyfuseError(f"sparse tensor: dimension format {m.format} is not DENSE or SPARSE_CSR")
    # block dimension j (d_{n+j}) has the dense size of the level that traverses it (schema.fbs comment)
    block_size = [levels[order.index(rank + j)][1] for j in range(k)]
    return order, block_map, block_size, levels


def _coordinates(levels) -> np.ndarray:
    """[stored values, levels] int64: the level coordinates of every stored value, in storage order
    (the depth-first walk of FormatConverter::Populate: a dense level visits 0..dense_size-1, a CSR
    level the indices array_indices[segments[p]:segments[p+1]] of its parent position p)."""
    coords = np.zeros((1, 0), np.int64)                 # one empty prefix, at position 0
    pos = np.zeros(1, np.int64)                         # the position of each prefix in its level
    for fmt, size, segments, indices in levels:
        if fmt == DENSE:
            coords = np.concatenate([np.repeat(coords, size, axis=0),
                                     np.tile(np.arange(size), len(coords))[:, None]], axis=1)
            pos = (pos[:, None] * size + np.arange(size)).reshape(-1)
            continue
        if pos.size and (pos.max() + 1 >= len(segments)):
            raise TinyfuseError("sparse tensor: CSR segments shorter than the dimension above; the file is damaged")
        start, stop = segments[pos], segments[pos + 1]
        if np.any(stop < start) or (stop.size and (stop.max() > len(indices) or start.min() < 0)):
            raise TinyfuseError("sparse tensor: CSR segments out of order or past the indices; the file is damaged")
        counts = stop - start
        nxt = np.concatenate([np.arange(a, b) for a, b in zip(start, stop)]) if counts.sum() else np.zeros(0, np.int64)
        coords = np.concatenate([np.repeat(coords, counts, axis=0), indices[nxt][:, None]], axis=1)
        pos = nxt
    return coords


def densify(values: np.ndarray, shape: tuple[int, ...], sparsity) -> np.ndarray:
    """The dense ``shape`` array (dtype of ``values``) of a TFLite sparse tensor.

    ``values``: the buffer's stored elements, 1-D, in traversal order. ``sparsity``: the tensor's
    SparsityParameters (``traversalOrder``: a permutation of the n dimensions then of the k block
    dimensions; ``blockMap``: the dimension each block dimension splits; ``dimMetadata``: per level,
    DENSE with ``denseSize`` or SPARSE_CSR with ``arraySegments``/``arrayIndices``). A dimension d
    split by block dimension j has index ``outer * block_size[j] + inner``. Elements not stored are
    0. Raises :class:`TinyfuseError` when the metadata does not fit the shape or the value count.
    """
    rank = len(shape)
    order, block_map, block_size, levels = _levels(sparsity, rank)
    for j, d in enumerate(block_map):
        if block_size[j] <= 0 or shape[d] % block_size[j]:
            raise TinyfuseError(f"sparse tensor: block size {block_size[j]} does not divide dimension {d} of {list(shape)}")
    coords = _coordinates(levels)
    values = np.asarray(values).reshape(-1)
    if len(coords) != values.size:
        raise TinyfuseError(f"sparse tensor {list(shape)}: the metadata addresses {len(coords)} values, "
                            f"the buffer holds {values.size}; the file is damaged")
    index = [None] * rank
    for level, dim in enumerate(order[:rank]):
        index[dim] = coords[:, level]
    for level in range(rank, rank + len(block_map)):
        j = order[level] - rank
        d = block_map[j]
        index[d] = index[d] * block_size[j] + coords[:, level]
    for d in range(rank):
        if values.size and (index[d].min() < 0 or index[d].max() >= shape[d]):
            raise TinyfuseError(f"sparse tensor {list(shape)}: an index of dimension {d} is out of range; the file is damaged")
    dense = np.zeros(math.prod(shape), values.dtype)
    if values.size:
        dense[np.ravel_multi_index(tuple(index), shape)] = values
    return dense.reshape(shape)


def fold_weights(operators: list) -> list:
    """``operators`` without the DEQUANTIZE-of-float16-constant and DENSIFY-of-constant operators;
    their output tensors get the folded constant (``Tensor.data``) instead."""
    kept = []
    for op in operators:
        x = op.inputs[0] if op.inputs else None
        if x is not None and x.data is not None and len(op.outputs) == 1 and op.outputs[0].data is None:
            out = op.outputs[0]
            if op.name == "DEQUANTIZE" and x.dtype == "float16" and out.dtype == "float32":
                out.data = x.data.astype(np.float32).reshape(out.shape)
                continue
            if op.name == "DENSIFY" and x.dtype == out.dtype and x.data.size == math.prod(out.shape):
                out.data = x.data.reshape(out.shape).copy()
                continue
        kept.append(op)
    return kept

