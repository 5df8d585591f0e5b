"""The TFLM twin fuzzer's draws of data-movement ops (TFLM's int8 kernels copy bytes, one q in and
out): CONCATENATION, PAD, PADV2, RESHAPE, SQUEEZE, TRANSPOSE, STRIDED_SLICE, SPLIT, SPLIT_V, GATHER."""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_twin_models import Net
from tests.fuzz.twin_draw import Draw, act_q, dim, int8_data, pick
from tests.fuzz.twin_draw_ops import shape_of


def _one(opcode, x_shape, q, rng, build, params) -> Draw:
    """A one-input op: ``build(net, x_tensor)`` returns its output tensor(s)."""
    net = Net()
    y = build(net, net.input(x_shape, q))
    outs = y if isinstance(y, list) else [y]
    return Draw(opcode, net.build(outs), [int8_data(rng, x_shape, q[1])], dict(x=list(x_shape), q=list(q), **params))


def draw_concat(rng) -> Draw:
    base = shape_of(rng, 1, 4)
    rank = len(base)
    axis = int(rng.integers(-rank, rank))
    shapes = [tuple(dim(rng, 4) if i == axis % rank else d for i, d in enumerate(base)) for _ in range(int(rng.integers(2, 5)))]
    q = act_q(rng)
    qs = [q if rng.random() < 0.95 else act_q(rng) for _ in shapes]      # TFLM refuses unequal ones
    out_shape = list(base)
    out_shape[axis % rank] = sum(s[axis % rank] for s in shapes)
    net = Net()
    ins = [net.input(s, qi) for s, qi in zip(shapes, qs)]
    y = net.op("CONCATENATION", ins, net.act(out_shape, q), "ConcatenationOptions", axis=axis, fusedActivationFunction=0)
    return Draw("CONCATENATION", net.build([y]), [int8_data(rng, s, qi[1]) for s, qi in zip(shapes, qs)],
                dict(shapes=[list(s) for s in shapes], axis=axis, q=list(q), in_qs=[list(qi) for qi in qs]))


def draw_pad(rng, opcode: str) -> Draw:
    x_shape, q = shape_of(rng, 1, 4), act_q(rng)
    pads = rng.integers(0, 4, (len(x_shape), 2)) * (rng.random((len(x_shape), 1)) < 0.7)
    out = [d + int(p.sum()) for d, p in zip(x_shape, pads)]
    value = int(rng.integers(-128, 128))

    def build(net, x):
        ins = [x, net.const(pads.astype(np.int32))] + ([net.const(np.array([value], np.int8), q)] if opcode == "PADV2" else [])
        return net.op(opcode, ins, net.act(out, q), "PadV2Options" if opcode == "PADV2" else "PadOptions")
    return _one(opcode, x_shape, q, rng, build, dict(pads=pads.tolist(), value=value if opcode == "PADV2" else None))


def _factor(rng, n: int) -> tuple:
    """A random shape of n elements, rank 1..4."""
    dims = []
    for _ in range(int(rng.integers(0, 3))):
        divs = [d for d in range(1, n + 1) if n % d == 0]
        d = pick(rng, divs)
        dims.append(d)
        n //= d
    dims.append(n)
    return tuple(int(d) for d in rng.permutation(dims))


def draw_reshape(rng, opcode: str) -> Draw:
    x_shape, q = shape_of(rng, 1, 4), act_q(rng)
    if opcode == "SQUEEZE":
        x_shape = tuple(int(d) for d in rng.permutation(list(x_shape) + [1] * int(rng.integers(1, 3))))
        ones = [i for i, d in enumerate(x_shape) if d == 1]
        dims = [] if rng.random() < 0.4 else sorted(rng.choice(ones, int(rng.integers(1, len(ones) + 1)), replace=False).tolist())
        out = [d for i, d in enumerate(x_shape) if not (d == 1 and (not dims or i in dims))]
        return _one(opcode, x_shape, q, rng, lambda net, x: net.op("SQUEEZE", [x], net.act(out, q), "SqueezeOptions",
                                                                 squeezeDims=[int(d) for d in dims]), dict(dims=dims))
    out = _factor(rng, int(np.prod(x_shape)))
    return _one(opcode, x_shape, q, rng, lambda net, x: net.op("RESHAPE", [x, net.const(np.array(out, np.int32))],
                                                             net.act(out, q), "ReshapeOptions", newShape=list(out)),
                dict(new_shape=list(out)))


def draw_transpose(rng) -> Draw:
    x_shape, q = shape_of(rng, 1, 5 if rng.random() < 0.9 else 6, 5), act_q(rng)
    perm = [int(p) for p in rng.permutation(len(x_shape))]
    out = [x_shape[p] for p in perm]
    return _one("TRANSPOSE", x_shape, q, rng, lambda net, x: net.op("TRANSPOSE", [x, net.const(np.array(perm, np.int32))],
                                                                  net.act(out, q), "TransposeOptions"), dict(perm=perm))


def _slice_axis(rng, n: int):
    """(begin, end, stride, begin_mask, end_mask, shrink, python index) for one axis of size n."""
    if rng.random() < 0.15:
        b = int(rng.integers(-n, n))
        return b, b + 1, 1, 0, 0, 1, b
    s = pick(rng, [1, 1, 2, 3, -1, -2])
    b, e = int(rng.integers(-n - 1, n + 2)), int(rng.integers(-n - 1, n + 2))
    bm, em = int(rng.random() < 0.25), int(rng.integers(0, 2) if rng.random() < 0.25 else 0)
    return b, e, s, bm, em, 0, slice(None if bm else b, None if em else e, s)


def draw_strided_slice(rng) -> Draw:
    x_shape, q = shape_of(rng, 1, 4, 7), act_q(rng)
    for _ in range(50):
        axes = [_slice_axis(rng, n) for n in x_shape]
        out = np.empty(x_shape)[tuple(a[6] for a in axes)].shape
        if all(out):
            break
    else:
        axes = [(0, n, 1, 0, 0, 0, slice(0, n, 1)) for n in x_shape]
        out = x_shape
    cols = list(zip(*axes))
    masks = {k: sum(v << i for i, v in enumerate(cols[j])) for k, j in (("beginMask", 3), ("endMask", 4), ("shrinkAxisMask", 5))}

    def build(net, x):
        ins = [x] + [net.const(np.array(cols[j], np.int32)) for j in range(3)]
        return net.op("STRIDED_SLICE", ins, net.act(out, q), "StridedSliceOptions", **masks)
    return _one("STRIDED_SLICE", x_shape, q, rng, build, dict(begin=list(cols[0]), end=list(cols[1]), strides=list(cols[2]), **masks))


def draw_split(rng, opcode: str) -> Draw:
    x_shape, q = shape_of(rng, 1, 4, 8), act_q(rng)
    rank = len(x_shape)
    axis = int(rng.integers(-rank, rank))
    n = x_shape[axis % rank]
    if opcode == "SPLIT":
        num = pick(rng, [d for d in range(1, n + 1) if n % d == 0])
        sizes = [n // num] * num
    else:
        cuts = sorted(rng.choice(np.arange(1, n), int(rng.integers(0, n)), replace=False).tolist()) if n > 1 else []
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    written = list(sizes)
    if opcode == "SPLIT_V" and rng.random() < 0.3:
        written[int(rng.integers(len(sizes)))] = -1
    outs_shapes = [tuple(s if i == axis % rank else d for i, d in enumerate(x_shape)) for s in sizes]

    def build(net, x):
        outs = [net.act(s, q) for s in outs_shapes]
        if opcode == "SPLIT":
            return net.op("SPLIT", [net.const(np.array(axis, np.int32)), x], outs, "SplitOptions", numSplits=len(sizes))
        return net.op("SPLIT_V", [x, net.const(np.array(written, np.int32)), net.const(np.array(axis, np.int32))], outs,
                      "SplitVOptions", numSplits=len(sizes))
    return _one(opcode, x_shape, q, rng, build, dict(axis=axis, sizes=written))


def draw_gather(rng) -> Draw:
    x_shape, q = shape_of(rng, 1, 4, 7), act_q(rng)
    rank = len(x_shape)
    axis = int(rng.integers(-rank, rank))
    idx_shape = shape_of(rng, 1, 2, 4)             # rank >= 1: the model editor writes a scalar's shape as [1]
    idx = rng.integers(0, x_shape[axis % rank], idx_shape).astype(np.int32)
    a = axis % rank
    out = tuple(x_shape[:a]) + idx.shape + tuple(x_shape[a + 1:])
    return _one("GATHER", x_shape, q, rng, lambda net, x: net.op("GATHER", [x, net.const(idx)], net.act(out, q),
                                                               "GatherOptions", axis=axis), dict(axis=axis, indices=idx.tolist()))
