"""Shape arithmetic on static shapes folds to constants (frontend/tflite/fold.py): the chains Keras
and the TF converter emit (SHAPE → STRIDED_SLICE → PACK → RESHAPE, FILL of a computed shape,
BROADCAST_ARGS → BROADCAST_TO) take no kernel, and the model's outputs equal TensorFlow Lite Micro's
running every operator, or LiteRT's reference kernels where TFLM refuses a shape that is not a
constant tensor (FILL's dims), or numpy's broadcast for BROADCAST_TO of a computed shape (a copy neither runs),
int8 and float32."""
from __future__ import annotations

import numpy as np
import pytest

from tests.builders.real_models import litert_run
from tests.builders.tflm_twin_models import Net
from tests.conftest import compile_and_run, require_programs, tflm_run

SHAPE_OPS = ("SHAPE", "STRIDED_SLICE", "PACK", "FILL", "BROADCAST_ARGS", "RANK")


def _i32(net: Net, shape):
    return net.act(shape, None, "s", "int32")


def reshape_chain(dtype: str, fill: bool = False):
    """y = RESHAPE(x, PACK(STRIDED_SLICE(SHAPE(x), [0], [1], shrink), STRIDED_SLICE(SHAPE(x), [1], [2],
    shrink) · W, C)), plus (``fill``) FILL(SHAPE(y), 0.5 / stored 3)."""
    rng = np.random.default_rng(7)
    q = (0.1, -4) if dtype == "int8" else None
    shape = (1, 4, 6, 3)
    net = Net()
    x = net.input(shape, q, dtype)
    s = net.op("SHAPE", [x], _i32(net, (4,)), "ShapeOptions", outType=net.S.TensorType.INT32)
    dims = [net.op("STRIDED_SLICE", [s, net.const(np.array([a], np.int32)), net.const(np.array([a + 1], np.int32)),
                                     net.const(np.array([1], np.int32))], _i32(net, ()), "StridedSliceOptions",
                   shrinkAxisMask=1) for a in range(4)]
    hw = net.op("MUL", [dims[1], dims[2]], _i32(net, ()), "MulOptions")
    p = net.op("PACK", [dims[0], hw, dims[3]], _i32(net, (3,)), "PackOptions", valuesCount=3, axis=0)
    r = net.op("RESHAPE", [x, p], net.act((1, 24, 3), q, "r", dtype), "ReshapeOptions")
    if not fill:
        xs = rng.integers(-128, 128, shape).astype(np.int8) if q else rng.standard_normal(shape).astype(np.float32)
        return net.build([r]), [xs]
    s2 = net.op("SHAPE", [r], _i32(net, (3,)), "ShapeOptions", outType=net.S.TensorType.INT32)
    v1 = net.input((1,), q, dtype)
    fill_value = net.op("RESHAPE", [v1, net.const(np.zeros((0,), np.int32))], net.act((), q, "v", dtype), "ReshapeOptions")
    f = net.op("FILL", [s2, fill_value], net.act((1, 24, 3), q, "f", dtype), "FillOptions")
    y = net.op("ADD", [r, f], net.act((1, 24, 3), q, "y", dtype), "AddOptions")
    xs = rng.integers(-128, 128, shape).astype(np.int8) if q else rng.standard_normal(shape).astype(np.float32)
    v = np.array([37], np.int8) if q else np.array([0.5], np.float32)
    return net.build([y]), [xs, v]


def broadcast_chain(dtype: str):
    """y = BROADCAST_TO(x [1, 1, 5], BROADCAST_ARGS(SHAPE(x), [3, 1, 1]))."""
    rng = np.random.default_rng(8)
    q = (0.05, 2) if dtype == "int8" else None
    net = Net()
    x = net.input((1, 1, 5), q, dtype)
    s = net.op("SHAPE", [x], _i32(net, (3,)), "ShapeOptions", outType=net.S.TensorType.INT32)
    t = net.op("BROADCAST_ARGS", [s, net.const(np.array([3, 1, 1], np.int32))], _i32(net, (3,)))
    y = net.op("BROADCAST_TO", [x, t], net.act((3, 1, 5), q, "y", dtype))
    xs = rng.integers(-128, 128, (1, 1, 5)).astype(np.int8) if q else rng.standard_normal((1, 1, 5)).astype(np.float32)
    return net.build([y]), [xs]


def fill_chain(dtype: str):
    return reshape_chain(dtype, fill=True)


# case -> (builder, dtype, oracle): TFLM; LiteRT's reference kernels where TFLM needs FILL's dims
# constant; numpy's broadcast (a pure copy) where neither runs BROADCAST_TO of a computed shape
ORACLE = {reshape_chain: "tflm", fill_chain: "litert", broadcast_chain: "numpy"}
CASES = {f"{b.__name__}-{d}": (b, d, ORACLE[b]) for b in ORACLE for d in ("int8", "float32")}


def _oracle(name: str, model: bytes, path, xs):
    if name == "tflm":
        return tflm_run(model, xs)[0]
    if name == "litert":
        return litert_run(path, xs)[0]
    return np.broadcast_to(xs[0], (3, 1, 5))


@pytest.mark.parametrize("case_id", list(CASES))
def test_shape_chain_folds_and_matches_tflm(case_id, tmp_path):
    require_programs("gcc")
    build, dtype, oracle = CASES[case_id]
    model, xs = build(dtype)
    path = tmp_path / f"{case_id}.tflite"
    path.write_bytes(model)
    want = _oracle(oracle, model, path, xs)
    (got,), result = compile_and_run(str(path), xs, tmp_path)
    ops = {op for k in result.kernels for op in k.ops}
    assert not {"shape_of", "stack", "concatenate", "full", "strided_slice"} & ops, f"{case_id}: shape math ran: {ops}"
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    assert np.array_equal(got, want), f"{case_id}: {got} != TFLM {want}"
