"""The TFLM twin fuzzer's draws of the data-movement and shape ops tinyfuse builds from reshapes,
transposes, slices and copies (frontend/tflite/movement.py, fold.py): SLICE, PACK, UNPACK, REVERSE_V2,
BROADCAST_TO, EXPAND_DIMS, DEPTH_TO_SPACE, SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND,
MIRROR_PAD, GATHER_ND, EMBEDDING_LOOKUP, DYNAMIC_UPDATE_SLICE, FILL. Every output is byte-exact (no
arithmetic), int8 with one quantization in and out, float32, or int32 where TFLM moves int32."""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_twin_models import Net
from tests.fuzz.twin_draw import Draw, act_q, dim, pick
from tests.fuzz.twin_draw_ops import shape_of
from tests.fuzz.twin_draw_struct import _dtype, _one, data, typed

MOVE_TYPES = ("int8", "float32", "int32")


def _q(rng, dtype):
    return act_q(rng) if dtype == "int8" else None


def draw_slice(rng) -> Draw:
    dtype = _dtype(rng, MOVE_TYPES)
    x_shape = shape_of(rng, 1, 5, 7)
    begin = [int(rng.integers(0, n)) for n in x_shape]
    size = [-1 if rng.random() < 0.2 else int(rng.integers(1, n - b + 1)) for b, n in zip(begin, x_shape)]
    out = [n - b if s == -1 else s for b, s, n in zip(begin, size, x_shape)]
    q = _q(rng, dtype)

    def build(net, x):
        return net.op("SLICE", [x, net.const(np.array(begin, np.int32)), net.const(np.array(size, np.int32))],
                      typed(net, out, dtype, q), "SliceOptions")
    return _one("SLICE", rng, x_shape, dtype, build, dict(begin=begin, size=size), q)


def draw_pack(rng) -> Draw:
    dtype = _dtype(rng, MOVE_TYPES)
    x_shape = shape_of(rng, 1, 3, 5)
    n = int(rng.integers(1, 5))
    axis = int(rng.integers(-len(x_shape) - 1, len(x_shape) + 1))
    a = axis % (len(x_shape) + 1)
    out = list(x_shape[:a]) + [n] + list(x_shape[a:])
    q = _q(rng, dtype)
    net = Net()
    xs = [typed(net, x_shape, dtype, q, "x") for _ in range(n)]
    net.inputs += xs
    y = net.op("PACK", xs, typed(net, out, dtype, q), "PackOptions", valuesCount=n, axis=axis)
    return Draw("PACK", net.build([y]), [data(rng, x_shape, dtype, q) for _ in range(n)],
                dict(x=list(x_shape), n=n, axis=axis, dtype=dtype))


def draw_unpack(rng) -> Draw:
    dtype = _dtype(rng, MOVE_TYPES)
    x_shape = shape_of(rng, 2, 4, 5)
    axis = int(rng.integers(-len(x_shape), len(x_shape)))
    a = axis % len(x_shape)
    out = [d for i, d in enumerate(x_shape) if i != a]
    q = _q(rng, dtype)

    def build(net, x):
        return net.op("UNPACK", [x], [typed(net, out, dtype, q) for _ in range(x_shape[a])], "UnpackOptions",
                      num=x_shape[a], axis=axis)
    return _one("UNPACK", rng, x_shape, dtype, build, dict(axis=axis), q)


def draw_reverse(rng) -> Draw:
    dtype = _dtype(rng, MOVE_TYPES)
    x_shape = shape_of(rng, 1, 5, 6)
    axis = int(rng.integers(-len(x_shape), len(x_shape)))       # TFLM reverses along one axis
    q = _q(rng, dtype)

    def build(net, x):
        return net.op("REVERSE_V2", [x, net.const(np.array([axis], np.int32))], typed(net, x_shape, dtype, q),
                      "ReverseV2Options")
    return _one("REVERSE_V2", rng, x_shape, dtype, build, dict(axis=axis), q)


def draw_broadcast_to(rng) -> Draw:
    dtype = _dtype(rng, MOVE_TYPES)
    out = shape_of(rng, 1, 5, 5)
    x_shape = tuple(1 if rng.random() < 0.5 else d for d in out[int(rng.integers(0, len(out))):]) or (1,)
    q = _q(rng, dtype)

    def build(net, x):
        return net.op("BROADCAST_TO", [x, net.const(np.array(out, np.int32))], typed(net, out, dtype, q),
                      "BroadcastToOptions")
    return _one("BROADCAST_TO", rng, x_shape, dtype, build, dict(shape=list(out)), q)


def draw_expand_dims(rng) -> Draw:
    dtype = _dtype(rng)
    x_shape = shape_of(rng, 1, 4, 6)
    axis = int(rng.integers(-len(x_shape) - 1, len(x_shape) + 1))
    a = axis % (len(x_shape) + 1)
    out = list(x_shape[:a]) + [1] + list(x_shape[a:])
    q = _q(rng, dtype)

    def build(net, x):
        return net.op("EXPAND_DIMS", [x, net.const(np.array([axis], np.int32))], typed(net, out, dtype, q),
                      "ExpandDimsOptions")
    return _one("EXPAND_DIMS", rng, x_shape, dtype, build, dict(axis=axis), q)


def draw_depth_space(rng, opcode: str) -> Draw:
    dtype = _dtype(rng)
    b = int(rng.integers(1, 4))
    n, h, w, c = dim(rng, 2), dim(rng, 4), dim(rng, 4), dim(rng, 4)
    if opcode == "DEPTH_TO_SPACE":
        x_shape, out = (n, h, w, c * b * b), (n, h * b, w * b, c)
        options = "DepthToSpaceOptions"
    else:
        x_shape, out = (n, h * b, w * b, c), (n, h, w, c * b * b)
        options = "SpaceToDepthOptions"
    q = _q(rng, dtype)

    def build(net, x):
        return net.op(opcode, [x], typed(net, out, dtype, q), options, blockSize=b)
    return _one(opcode, rng, x_shape, dtype, build, dict(block=b), q)


def padded_positions(x_shape, block, pads) -> np.ndarray:
    """True where SPACE_TO_BATCH_ND's output is padding (reference: pad, reshape, transpose in numpy)."""
    x4 = tuple(x_shape) if len(x_shape) == 4 else (x_shape[0], x_shape[1], 1, x_shape[2])
    bh, bw = (list(block) + [1])[:2]
    p = np.vstack([np.asarray(pads).reshape(-1, 2), [[0, 0]]])[:2]
    marker = np.pad(np.ones(x4, bool), ((0, 0), tuple(p[0]), tuple(p[1]), (0, 0)))
    n, h, w, c = marker.shape
    out = marker.reshape(n, h // bh, bh, w // bw, bw, c).transpose(2, 4, 0, 1, 3, 5).reshape(n * bh * bw, h // bh, w // bw, c)
    return ~(out if len(x_shape) == 4 else out[:, :, 0, :])


def draw_space_batch(rng, opcode: str) -> Draw:
    """SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND on 4-D (and 3-D) tensors. TFLM pads SPACE_TO_BATCH_ND with
    an uninitialised byte (its SpaceToBatchParams::output_offset is never set); tinyfuse pads as TFLite
    does (the zero point, 0.0), so the padded positions are not compared (``wrap`` / an infinite bound)."""
    dtype = _dtype(rng)
    rank4 = rng.random() < 0.8
    bh, bw = int(rng.integers(1, 4)), int(rng.integers(1, 4)) if rank4 else 1
    n, c = dim(rng, 2), dim(rng, 4)
    q = _q(rng, dtype)
    if q and rng.random() < 0.5:
        q = (q[0], 0)
    pads = rng.integers(0, 3, (2, 2)) * (rng.random((2, 1)) < 0.7)
    if not rank4:
        pads[1] = 0
    if opcode == "SPACE_TO_BATCH_ND":
        h = int(rng.integers(1, 4)) * bh - int(pads[0].sum())
        w = int(rng.integers(1, 4)) * bw - int(pads[1].sum())
        h, w = (h, w) if h > 0 and w > 0 else (bh * 2, bw * 2)
        pads = pads if (h + pads[0].sum()) % bh == 0 and (w + pads[1].sum()) % bw == 0 else np.zeros((2, 2), np.int64)
        x_shape = (n, h, w, c)
        out = (n * bh * bw, (h + int(pads[0].sum())) // bh, (w + int(pads[1].sum())) // bw, c)
    else:
        h, w = dim(rng, 4), dim(rng, 4)
        crops = np.array([[min(int(pads[0][0]), h * bh - 1), 0], [min(int(pads[1][0]), w * bw - 1), 0]])
        crops[0][1] = min(int(pads[0][1]), h * bh - crops[0][0] - 1)
        crops[1][1] = min(int(pads[1][1]), w * bw - crops[1][0] - 1)
        pads = crops
        x_shape = (n * bh * bw, h, w, c)
        out = (n, h * bh - int(pads[0].sum()), w * bw - int(pads[1].sum()), c)
    block, table = [bh, bw], pads
    if not rank4:
        x_shape, out, block, table = (x_shape[0], x_shape[1], x_shape[3]), (out[0], out[1], out[3]), [bh], pads[:1]
    options = "SpaceToBatchNDOptions" if opcode == "SPACE_TO_BATCH_ND" else "BatchToSpaceNDOptions"

    def build(net, x):
        return net.op(opcode, [x, net.const(np.array(block, np.int32)), net.const(np.asarray(table, np.int32))],
                      typed(net, out, dtype, q), options)
    d = _one(opcode, rng, x_shape, dtype, build, dict(block=block, pads=np.asarray(table).tolist()), q)
    if opcode == "SPACE_TO_BATCH_ND" and np.any(table):
        padded = padded_positions(x_shape, block, table)
        if dtype == "int8":
            d.wrap = padded
        else:
            d.tol = np.where(padded, np.inf, 0.0)
    return d


def draw_mirror_pad(rng) -> Draw:
    dtype = _dtype(rng)
    x_shape = shape_of(rng, 1, 4, 6)
    mode = int(rng.integers(0, 2))                       # 0 REFLECT, 1 SYMMETRIC
    pads = np.array([[int(rng.integers(0, n - (mode == 0) + 1)) for _ in range(2)] for n in x_shape], np.int32)
    out = [n + int(p.sum()) for n, p in zip(x_shape, pads)]
    q = _q(rng, dtype)

    def build(net, x):
        return net.op("MIRROR_PAD", [x, net.const(pads)], typed(net, out, dtype, q), "MirrorPadOptions", mode=mode)
    return _one("MIRROR_PAD", rng, x_shape, dtype, build, dict(pads=pads.tolist(), mode=mode), q)


def draw_gather_nd(rng) -> Draw:
    dtype = _dtype(rng)
    x_shape = shape_of(rng, 1, 4, 5)
    k = int(rng.integers(1, len(x_shape) + 1))
    idx_shape = tuple(shape_of(rng, 0, 2, 4)) + (k,)
    if len(idx_shape) == 1 and k == len(x_shape):      # a scalar result: TFLM gives rank 0, the model [1]
        idx_shape = (1, k)
    idx = np.stack([rng.integers(0, x_shape[j], idx_shape[:-1]) for j in range(k)], -1).astype(np.int32)
    out = idx_shape[:-1] + tuple(x_shape[k:])
    q = _q(rng, dtype)
    net = Net()
    x = typed(net, x_shape, dtype, q, "x")
    runtime = rng.random() < 0.6
    i = typed(net, idx_shape, "int32", None, "i") if runtime else net.const(idx)
    net.inputs += [x] + ([i] if runtime else [])
    y = net.op("GATHER_ND", [x, i], typed(net, out or (1,), dtype, q), "GatherNdOptions")
    xs = [data(rng, x_shape, dtype, q)] + ([idx] if runtime else [])
    return Draw("GATHER_ND", net.build([y]), xs, dict(x=list(x_shape), idx=idx.tolist(), runtime=runtime, dtype=dtype))


def draw_embedding_lookup(rng) -> Draw:
    rows, cols = dim(rng, 9), shape_of(rng, 1, 2, 5)
    kind = pick(rng, ["float32", "int8", "hybrid"])
    ids = rng.integers(0, rows, (dim(rng, 6),)).astype(np.int32)
    net = Net()
    i = typed(net, ids.shape, "int32", None, "ids")
    net.inputs.append(i)
    table = rng.integers(-128, 128, (rows, *cols)).astype(np.int8) if kind != "float32" else \
        rng.standard_normal((rows, *cols)).astype(np.float32)
    q = (float(np.float32(2.0 ** rng.uniform(-8, 0))), 0 if kind == "hybrid" else int(rng.integers(-20, 20)))
    t = net.const(table, q if kind != "float32" else None)
    out_dtype = "int8" if kind == "int8" else "float32"
    y = net.op("EMBEDDING_LOOKUP", [i, t], typed(net, (ids.size, *cols), out_dtype, q if kind == "int8" else None))
    return Draw("EMBEDDING_LOOKUP", net.build([y]), [ids], dict(rows=rows, cols=list(cols), kind=kind, ids=ids.tolist()))


def draw_update_slice(rng) -> Draw:
    dtype = _dtype(rng, MOVE_TYPES)
    x_shape = shape_of(rng, 1, 4, 6)
    u_shape = tuple(int(rng.integers(1, n + 1)) for n in x_shape)
    start = np.array([int(rng.integers(-2, n + 2)) for n in x_shape], np.int32)      # clamped by TFLM
    q = _q(rng, dtype)
    net = Net()
    x, u = typed(net, x_shape, dtype, q, "x"), typed(net, u_shape, dtype, q, "u")
    runtime = rng.random() < 0.6
    s = typed(net, start.shape, "int32", None, "s") if runtime else net.const(start)
    net.inputs += [x, u] + ([s] if runtime else [])
    y = net.op("DYNAMIC_UPDATE_SLICE", [x, u, s], typed(net, x_shape, dtype, q))
    xs = [data(rng, x_shape, dtype, q), data(rng, u_shape, dtype, q)] + ([start] if runtime else [])
    return Draw("DYNAMIC_UPDATE_SLICE", net.build([y]), xs, dict(x=list(x_shape), u=list(u_shape), start=start.tolist(),
                                                                  runtime=runtime, dtype=dtype))


def draw_fill(rng) -> Draw:
    """FILL with a run-time scalar value (a RESHAPE of a [1] input: TFLM needs a rank-0 value, which the
    harness cannot feed); a constant value folds and the output is a copied constant."""
    dtype = _dtype(rng, MOVE_TYPES)
    out = shape_of(rng, 1, 4, 6)
    q = _q(rng, dtype)

    def build(net, x):
        v = net.op("RESHAPE", [x, net.const(np.zeros((0,), np.int32))], typed(net, (), dtype, q), "ReshapeOptions",
                   newShape=[])
        return net.op("FILL", [net.const(np.array(out, np.int32)), v], typed(net, out, dtype, q), "FillOptions")
    return _one("FILL", rng, (1,), dtype, build, dict(shape=list(out)), q)


def draw_dilated_chain(rng) -> Draw:
    """int8 SPACE_TO_BATCH_ND → CONV_2D / DEPTHWISE_CONV_2D → BATCH_TO_SPACE_ND as TensorFlow writes a
    VALID dilated conv (tinyfuse folds it into one dilated conv, frontend/tflite/dilated.py). VALID only:
    the padded rows TFLM fills with an uninitialised byte reach only cropped outputs."""
    from tests.builders.tflm_dilated import dilated_case
    rate, k = int(rng.integers(2, 5)), int(pick(rng, [1, 2, 3]))
    hw = (int(rng.integers((k - 1) * rate + 1, 14)), int(rng.integers((k - 1) * rate + 1, 14)))
    params = dict(seed=int(rng.integers(0, 2 ** 31)), dtype="int8", depthwise=bool(rng.random() < 0.5), hw=hw,
                  c=int(rng.integers(1, 9)), k=k, rate=rate, padding="VALID", act=pick(rng, ["NONE", "RELU", "RELU6"]))
    case = dilated_case(**params)
    return Draw("S2B>CONV>B2S", case.chain, case.inputs, params)
