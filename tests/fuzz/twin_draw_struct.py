"""The TFLM twin fuzzer's draws of reductions, indexing, data movement and shape ops (tinyfuse's
ops/reduction.py, ops/indexing.py, ops/logsoftmax.py, ops/l2norm.py): SUM, REDUCE_MAX, REDUCE_MIN,
REDUCE_ALL, ARG_MAX, ARG_MIN, CUMSUM, LOG_SOFTMAX, L2_NORMALIZATION, L2_POOL_2D, BATCH_MATMUL, SLICE,
PACK, UNPACK, REVERSE_V2, BROADCAST_TO, EXPAND_DIMS, DEPTH_TO_SPACE, SPACE_TO_DEPTH, SPACE_TO_BATCH_ND,
BATCH_TO_SPACE_ND, MIRROR_PAD, GATHER_ND, EMBEDDING_LOOKUP, DYNAMIC_UPDATE_SLICE and FILL.

Each draw picks the element type TFLM has a kernel for: int8 (byte-exact), float32 (byte-exact where
TFLM and tinyfuse do the same float operations in the same order: data movement, max/min, sums along
TFLM's order; within a bound of a few float32 ulps where libm's exp/log/sqrt take part) and int32
where TFLM moves int32 data. The int8 data ops keep one quantization in and out (TFLM's check)."""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_twin_models import Net
from tests.fuzz.twin_draw import Draw, act_q, dim, int8_data, pick, rescaled
from tests.fuzz.twin_draw_ops import shape_of

F32_ULPS = 2.0 ** -20          # relative bound of the libm-based float draws (a few float32 ulps)


def typed(net: Net, shape, dtype: str, q=None, name: str = "t"):
    """A non-constant tensor of ``dtype`` (int8 with q, float32, int32, bool)."""
    if dtype in ("int8", "float32"):
        return net.act(shape, q if dtype == "int8" else None, name)
    code = {"int32": net.S.TensorType.INT32, "bool": net.S.TensorType.BOOL}[dtype]
    return net.o.me.Tensor(shape=tuple(int(d) for d in shape), dtype=code, name=net._name(name))


def data(rng, shape, dtype: str, q=None) -> np.ndarray:
    if dtype == "int8":
        return int8_data(rng, shape, q[1])
    if dtype == "int32":
        return rng.integers(-1000, 1000, shape).astype(np.int32)
    if dtype == "bool":
        return rng.random(shape) < 0.7
    return (rng.standard_normal(shape) * 2.0 ** rng.uniform(-3, 3)).astype(np.float32)


def _dtype(rng, allowed=("int8", "float32")) -> str:
    return pick(rng, list(allowed))


def _one(name, rng, x_shape, dtype, build, params, q=None, tol=None) -> Draw:
    """A one-input model: ``build(net, x)`` returns its output tensor(s)."""
    net = Net()
    x = typed(net, x_shape, dtype, q, "x")
    net.inputs.append(x)
    y = build(net, x)
    outs = y if isinstance(y, list) else [y]
    xs = [data(rng, x_shape, dtype, q)]
    return Draw(name, net.build(outs), xs, dict(x=list(x_shape), dtype=dtype, q=list(q) if q else None, **params),
                tol=tol)


def _axes(rng, rank: int) -> list[int]:
    k = int(rng.integers(1, rank + 1))
    axes = sorted(rng.choice(rank, k, replace=False).tolist())
    return [a - rank if rng.random() < 0.3 else a for a in axes]


# ----------------------------------------------------------------------------- reductions
def draw_reduce(rng, opcode: str) -> Draw:
    """SUM / REDUCE_MAX / REDUCE_MIN / REDUCE_ALL over random axes, keep_dims or not."""
    dtype = "bool" if opcode == "REDUCE_ALL" else _dtype(rng)
    x_shape = shape_of(rng, 1, 4, 6)
    axes = _axes(rng, len(x_shape))
    keep = bool(rng.random() < 0.5)
    norm = {a % len(x_shape) for a in axes}
    out = [1 if i in norm else d for i, d in enumerate(x_shape) if keep or i not in norm]
    q = act_q(rng) if dtype == "int8" else None
    out_q = (rescaled(rng, q, -1, 5) if opcode == "SUM" else q) if q else None

    def build(net, x):
        return net.op(opcode, [x, net.const(np.array(axes, np.int32))], typed(net, out, dtype, out_q), "ReducerOptions",
                      keepDims=keep)
    return _one(opcode, rng, x_shape, dtype, build, dict(axes=axes, keep=keep, out_q=out_q), q)


def draw_arg(rng, opcode: str) -> Draw:
    dtype = _dtype(rng)
    x_shape = shape_of(rng, 1, 4, 7)
    axis = int(rng.integers(-len(x_shape), len(x_shape)))
    out = [d for i, d in enumerate(x_shape) if i != axis % len(x_shape)] or [1]
    q = act_q(rng) if dtype == "int8" else None
    if len(x_shape) == 1:
        x_shape, axis, out = (1, x_shape[0]), 1, [1]
    options = "ArgMaxOptions" if opcode == "ARG_MAX" else "ArgMinOptions"

    def build(net, x):
        return net.op(opcode, [x, net.const(np.array([axis], np.int32))], typed(net, out, "int32"), options,
                      outputType=net.S.TensorType.INT32)
    d = _one(opcode, rng, x_shape, dtype, build, dict(axis=axis), q)
    if dtype == "int8" and rng.random() < 0.5:          # many ties: the first index wins
        d.inputs = [np.clip(d.inputs[0] // 32, -4, 3).astype(np.int8)]
    return d


def draw_cumsum(rng) -> Draw:
    dtype = _dtype(rng)
    x_shape = shape_of(rng, 1, 4, 9)
    axis = int(rng.integers(-len(x_shape), len(x_shape)))
    excl, rev = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
    q = act_q(rng) if dtype == "int8" else None
    out_q = rescaled(rng, q, 0, 4) if q else None

    def build(net, x):
        return net.op("CUMSUM", [x, net.const(np.array([axis], np.int32))], typed(net, x_shape, dtype, out_q),
                      "CumsumOptions", exclusive=excl, reverse=rev)
    return _one("CUMSUM", rng, x_shape, dtype, build, dict(axis=axis, exclusive=excl, reverse=rev, out_q=out_q), q)


def draw_log_softmax(rng) -> Draw:
    dtype = _dtype(rng)
    x_shape = shape_of(rng, 1, 4, 12)
    q = act_q(rng) if dtype == "int8" else None
    out_q = (16.0 / 256, 127) if q else None
    tol = None if q else "rel"

    def build(net, x):
        return net.op("LOG_SOFTMAX", [x], typed(net, x_shape, dtype, out_q), "LogSoftmaxOptions")
    d = _one("LOG_SOFTMAX", rng, x_shape, dtype, build, {}, q)
    if tol:
        d.tol = np.full(x_shape, 8 * F32_ULPS * (1 + float(np.max(np.abs(d.inputs[0])))), np.float64)
    return d


def draw_l2_norm(rng) -> Draw:
    dtype = _dtype(rng)
    x_shape = shape_of(rng, 1, 4, 12)
    q = act_q(rng) if dtype == "int8" else None

    def build(net, x):
        return net.op("L2_NORMALIZATION", [x], typed(net, x_shape, dtype, (1.0 / 128, 0) if q else None), "L2NormOptions")
    d = _one("L2_NORMALIZATION", rng, x_shape, dtype, build, {}, q)
    if not q:
        d.tol = np.full(x_shape, 4 * F32_ULPS, np.float64)
    return d


def draw_l2_pool(rng) -> Draw:
    x_shape = (dim(rng, 2), dim(rng, 9), dim(rng, 9), dim(rng, 5))
    for _ in range(20):
        k, s, pad = (int(rng.integers(1, 4)), int(rng.integers(1, 4))), (int(rng.integers(1, 3)), int(rng.integers(1, 3))), \
            pick(rng, ["SAME", "VALID"])
        from tests.builders.tflm_twin_models import out_size
        oh, ow = (out_size(n, kk, ss, 1, pad) for n, kk, ss in zip(x_shape[1:3], k, s))
        if oh > 0 and ow > 0:
            break
    else:
        k, s, pad, oh, ow = (1, 1), (1, 1), "VALID", x_shape[1], x_shape[2]

    def build(net, x):
        return net.op("L2_POOL_2D", [x], net.act((x_shape[0], oh, ow, x_shape[3])), "Pool2DOptions", padding=0 if pad == "SAME" else 1,
                      strideH=s[0], strideW=s[1], filterHeight=k[0], filterWidth=k[1])
    d = _one("L2_POOL_2D", rng, x_shape, "float32", build, dict(k=k, s=s, pad=pad))
    d.tol = np.full((x_shape[0], oh, ow, x_shape[3]), 4 * F32_ULPS * float(np.max(np.abs(d.inputs[0]))), np.float64)
    return d


def draw_batch_matmul(rng) -> Draw:
    dtype = _dtype(rng)
    batch = shape_of(rng, 0, 2, 3)
    m, k, n = dim(rng, 6), dim(rng, 8), dim(rng, 6)
    adj_x, adj_y = bool(rng.random() < 0.3), bool(rng.random() < 0.3)
    a_shape = tuple(batch) + ((k, m) if adj_x else (m, k))
    b_batch = tuple(1 if rng.random() < 0.3 else d for d in batch)
    b_shape = b_batch + ((n, k) if adj_y else (k, n))
    qa, qb = (act_q(rng), act_q(rng)) if dtype == "int8" else (None, None)
    out_q = (float(np.float32(qa[0] * qb[0] * 30 * np.sqrt(k) * 2.0 ** rng.uniform(-2, 2))), int(rng.integers(-20, 20))) \
        if qa else None
    net = Net()
    a, b = typed(net, a_shape, dtype, qa, "a"), typed(net, b_shape, dtype, qb, "b")
    net.inputs += [a, b]
    y = net.op("BATCH_MATMUL", [a, b], typed(net, tuple(batch) + (m, n), dtype, out_q), "BatchMatMulOptions",
               adjX=adj_x, adjY=adj_y)
    xs = [data(rng, a_shape, dtype, qa), data(rng, b_shape, dtype, qb)]
    d = Draw("BATCH_MATMUL", net.build([y]), xs, dict(a=list(a_shape), b=list(b_shape), adj=[adj_x, adj_y],
                                                       dtype=dtype, qa=qa, qb=qb, out_q=out_q))
    if dtype == "float32":
        s = np.abs(np.matmul(np.abs(xs[0]).astype(np.float64).swapaxes(-1, -2) if adj_x else np.abs(xs[0]).astype(np.float64),
                             np.abs(xs[1]).astype(np.float64).swapaxes(-1, -2) if adj_y else np.abs(xs[1]).astype(np.float64)))
        d.tol = 2 * (k + 1) * 2.0 ** -24 * s
    return d
