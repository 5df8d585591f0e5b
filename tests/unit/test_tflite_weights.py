"""Weight formats of .tflite files (compiler/frontend/tflite_weights.py): TFLite sparse tensors
densified, float16 constants behind DEQUANTIZE folded to float32 constants.

Oracles: hand-written sparse encodings of small matrices (the dense matrix is written out beside its
encoding), the dense float16 array itself, and LiteRT (``ai-edge-litert``: it runs DENSIFY and
float16 DEQUANTIZE) on models built with the TFLite object API.
"""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.frontend.tflite.reader import from_tflite
from tinyfuse.frontend.tflite.schema import Table
from tinyfuse.frontend.tflite.weights import densify
from tinyfuse.ir import Constant
from tinyfuse.ir.expr import iter_calls, post_order
from tinyfuse.ir.interpreter import run_module
from tests.builders.tflite_weights import conv_fp16_model, fc_weights_model
from tests.conftest import skip_or_fail

# row0: 6 0 9 8 / row1: 0 0 0 0 / row2: 5 0 0 7
M34 = np.array([[6, 0, 9, 8], [0, 0, 0, 0], [5, 0, 0, 7]], np.float32)
# 4x4 in 2x2 blocks: block (1, 0) is all zero
M44 = np.array([[1, 0, 2, 3], [0, 4, 0, 0], [0, 0, 5, 0], [0, 0, 0, 6]], np.float32)


def _dense(size):
    return Table("DimensionMetadata", {"format": 0, "denseSize": size, "arraySegments": None, "arrayIndices": None})


def _csr(segments, indices):
    vec = lambda v: Table("Int32Vector", {"values": np.asarray(v, np.int32)})   # noqa: E731
    return Table("DimensionMetadata", {"format": 1, "denseSize": 0, "arraySegments": vec(segments),
                                       "arrayIndices": vec(indices)})


def _sparsity(order, meta, block_map=None):
    return Table("SparsityParameters", {"traversalOrder": np.asarray(order, np.int32),
                                        "blockMap": None if block_map is None else np.asarray(block_map, np.int32),
                                        "dimMetadata": meta})


def test_csr_rows():
    """Row-major CSR (dense rows, sparse columns): segments per row, column indices."""
    sp = _sparsity([0, 1], [_dense(3), _csr([0, 3, 3, 5], [0, 2, 3, 0, 3])])
    got = densify(np.array([6, 9, 8, 5, 7], np.float32), (3, 4), sp)
    assert got.dtype == np.float32 and np.array_equal(got, M34)


def test_csc_traversal_order():
    """Traversal order (1, 0): columns first (dense), rows sparse within each column."""
    sp = _sparsity([1, 0], [_dense(4), _csr([0, 2, 2, 3, 5], [0, 2, 0, 0, 2])])
    assert np.array_equal(densify(np.array([6, 5, 9, 8, 7], np.float32), (3, 4), sp), M34)


def test_block_sparse_2x2():
    """2x2 blocks (block map (0, 1)): block rows dense, block columns CSR, each block stored densely."""
    sp = _sparsity([0, 1, 2, 3], [_dense(2), _csr([0, 2, 3], [0, 1, 1]), _dense(2), _dense(2)], block_map=[0, 1])
    values = np.array([1, 0, 0, 4, 2, 3, 0, 0, 5, 0, 0, 6], np.float16)
    got = densify(values, (4, 4), sp)
    assert got.dtype == np.float16 and np.array_equal(got, M44)


def test_two_csr_levels():
    """Both dimensions CSR: only non-empty rows are listed, then their columns."""
    sp = _sparsity([0, 1], [_csr([0, 2], [0, 2]), _csr([0, 3, 5], [0, 2, 3, 0, 3])])
    assert np.array_equal(densify(np.array([6, 9, 8, 5, 7], np.float32), (3, 4), sp), M34)


@pytest.mark.parametrize("values, sp, match", [
    (np.ones(4, np.float32), _sparsity([0, 1], [_dense(3), _csr([0, 3, 3, 5], [0, 2, 3, 0, 3])]), "addresses 5 values"),
    (np.ones(5, np.float32), _sparsity([0, 1], [_dense(3), _csr([0, 3, 3, 5], [0, 2, 9, 0, 3])]), "out of range"),
    (np.ones(5, np.float32), _sparsity([0, 0], [_dense(3), _dense(4)]), "do not describe"),
    (np.ones(5, np.float32), _sparsity([0, 1], [_dense(3), _csr([0, 3], [0, 2, 3])]), "segments shorter"),
])
def test_damaged_sparsity_is_one_line_error(values, sp, match):
    with pytest.raises(TinyfuseError, match=match):
        densify(values, (3, 4), sp)


def _weights_constant(module) -> np.ndarray:
    """The 2-D constant of a one-FC module (the weights, in whatever layout the frontend keeps)."""
    found = [e.value for e in post_order(module.main.outputs) if isinstance(e, Constant) and e.value.ndim == 2]
    assert len(found) == 1, found
    return found[0]


SPARSE_FORMATS = {
    "dense": None,
    "csr": dict(order=(0, 1), formats=("DENSE", "CSR")),
    "csc": dict(order=(1, 0), formats=("DENSE", "CSR")),
    "csr_uint8": dict(order=(0, 1), formats=("DENSE", "CSR"), index_type="Uint8Vector"),
    "csr_uint16": dict(order=(0, 1), formats=("DENSE", "CSR"), index_type="Uint16Vector"),
    "block2x4": dict(order=(0, 1, 2, 3), formats=("DENSE", "CSR", "DENSE", "DENSE"), block_map=(0, 1), block_size=(2, 4)),
    "block1x4": dict(order=(0, 1, 2), formats=("DENSE", "CSR", "DENSE"), block_map=(1,), block_size=(4,)),
}


def _fc_case(seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((8, 12)).astype(np.float32)
    w[rng.random(w.shape) < 0.6] = 0
    w[2:4, 4:8] = 0                         # an all-zero block for the block formats
    return w, rng.standard_normal(8).astype(np.float32), rng.standard_normal((2, 12)).astype(np.float32)


@pytest.mark.parametrize("fmt", list(SPARSE_FORMATS))
def test_fp16_sparse_weights_fold_to_the_dense_float32_array(fmt):
    """DENSIFY and DEQUANTIZE are gone; the weights are one float32 constant equal to float16(W)."""
    w, bias, _ = _fc_case()
    module = from_tflite(fc_weights_model(w, bias, sparse=SPARSE_FORMATS[fmt]))
    got = _weights_constant(module)
    want = w.astype(np.float16).astype(np.float32)
    assert got.dtype == np.float32
    assert np.array_equal(got, want) or np.array_equal(got, want.T)
    assert "qnn.dequantize" not in [c.op for c in iter_calls(module.main)]


def _litert(model: bytes, inputs, tmp_path):
    if importlib.util.find_spec("ai_edge_litert") is None:
        skip_or_fail("ai-edge-litert is not installed (pip install ai-edge-litert)")
    from tinyfuse.harness.litert import litert_outputs
    from tinyfuse.harness.oracles import OracleUnavailable
    path = tmp_path / "m.tflite"
    path.write_bytes(model)
    return litert_outputs(path, inputs, OracleUnavailable)


@pytest.mark.parametrize("fmt", list(SPARSE_FORMATS))
def test_fp16_sparse_fc_matches_litert(fmt, tmp_path):
    w, bias, x = _fc_case(1)
    model = fc_weights_model(w, bias, sparse=SPARSE_FORMATS[fmt])
    (want,) = _litert(model, [x], tmp_path)
    (got,) = run_module(compile_model(model).module, [x])
    assert np.max(np.abs(got - want)) <= 1e-5 * np.max(np.abs(want))


def test_fp16_conv_matches_litert(tmp_path):
    rng = np.random.default_rng(2)
    w, bias = rng.standard_normal((4, 3, 3, 3)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    x = rng.standard_normal((1, 6, 6, 3)).astype(np.float32)
    model = conv_fp16_model(x.shape, w, bias)
    (want,) = _litert(model, [x], tmp_path)
    result = compile_model(model)
    assert [k for k in result.kernels if any(op in ("qnn.dequantize", "cast") for op in k.ops)] == []
    (got,) = run_module(result.module, [x])
    assert np.max(np.abs(got - want)) <= 1e-5 * np.max(np.abs(want))
