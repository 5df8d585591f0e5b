"""Layer kinds of the graph fuzzer for the ops of the operator and streaming issues, on rank-4 NCHW
values, each with onnxruntime as the float oracle: Resize (nearest/linear, up and down, several
coordinate transformations), ConvTranspose, PRelu, Slice (steps, negative bounds), Split (then Concat
of the parts in another order), Gather (constant indices), Expand and Tile.

``random_new_layer`` draws one (plain data, like generator._random_layer); ``build_new_layer``
appends it to a generator._Builder, or nothing when it does not fit the shape it reads.
"""
from __future__ import annotations

import numpy as np
from onnx import helper

NEW_OPS = ["resize", "convt", "prelu", "slice", "split", "gather", "expand", "tile"]
COORD = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"]
NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
MAX_ELEMENTS = 4096


def random_new_layer(rng, i: int) -> dict:
    op = str(rng.choice(NEW_OPS))
    src = 1 if rng.random() < 0.8 else int(rng.integers(2, 4))
    layer = {"op": op, "src": src, "wseed": 300 + i}
    if op == "resize":
        layer.update(mode=str(rng.choice(["nearest", "linear"])), coord=str(rng.choice(COORD)),
                     nearest=str(rng.choice(NEAREST)),
                     scales=[float(v) for v in rng.choice([0.5, 1.0, 1.5, 2.0, 3.0], 2)])
    elif op == "convt":
        k = [int(v) for v in rng.integers(1, 4, 2)]
        s = [int(v) for v in rng.integers(1, 3, 2)]
        layer.update(out=int(rng.integers(1, 6)), k=k, stride=s, pads=[int(rng.integers(0, k[j % 2])) for j in range(4)],
                     out_pad=[int(rng.integers(0, s[j])) for j in range(2)], bias=bool(rng.random() < 0.7))
    elif op == "slice":
        layer.update(axis=int(rng.choice([1, 2, 3])), start=int(rng.integers(-4, 4)), end=int(rng.integers(-3, 9)),
                     step=int(rng.choice([1, 1, 2, -1, 3])))
    elif op == "split":
        layer.update(axis=int(rng.choice([1, 2, 3])), parts=int(rng.integers(2, 4)), order=[int(v) for v in
                                                                                          rng.permutation(3)])
    elif op == "gather":
        layer.update(axis=int(rng.choice([1, 2, 3])), indices=[int(v) for v in rng.integers(-3, 6, int(rng.integers(1, 5)))])
    elif op in ("expand", "tile"):
        layer.update(reps=[1] + [int(v) for v in rng.integers(1, 4, 3)])
    return layer


def _resize(b, x, shape, layer):
    n, c, h, w = shape
    sh, sw = layer["scales"]
    oh, ow = int(np.floor(h * np.float32(sh))), int(np.floor(w * np.float32(sw)))
    if oh < 1 or ow < 1:
        return
    if layer["coord"] == "align_corners" and (oh != h * sh or ow != w * sw):
        return   # in·scale not whole: ONNX's length_resized (in·scale, tinyfuse) and onnxruntime's (out) differ
    if layer["coord"] == "pytorch_half_pixel" and ((oh == 1 and h * sh != 1) or (ow == 1 and w * sw != 1)):
        return   # the same split on "length_resized > 1" (seed 2795; tests/c/test_resize.py)
    attrs = dict(mode=layer["mode"], coordinate_transformation_mode=layer["coord"])
    if layer["mode"] == "nearest":
        attrs["nearest_mode"] = layer["nearest"]
    b.node("Resize", [x, "", b.const(np.array([1, 1, sh, sw], np.float32), "sc")], (n, c, oh, ow), **attrs)


def _convt(b, x, shape, layer, rng):
    n, c, h, w = shape
    (kh, kw), (sh, sw), (t, le, bo, r), (oph, opw) = layer["k"], layer["stride"], layer["pads"], layer["out_pad"]
    oh, ow = (h - 1) * sh - t - bo + kh + oph, (w - 1) * sw - le - r + kw + opw
    if oh < 1 or ow < 1:
        return
    out = int(layer["out"])
    ins = [x, b.const(rng.normal(0, np.sqrt(1.0 / (c * kh * kw)), (c, out, kh, kw)).astype(np.float32), "w")]
    if layer["bias"]:
        ins.append(b.const(rng.normal(0, 0.2, out).astype(np.float32), "b"))
    b.node("ConvTranspose", ins, (n, out, oh, ow), kernel_shape=[kh, kw], strides=[sh, sw], pads=[t, le, bo, r],
           output_padding=[oph, opw])


def _slice(b, x, shape, layer):
    axis, start, end, step = layer["axis"], layer["start"], layer["end"], layer["step"]
    size = len(np.arange(shape[axis])[start:end:step])
    if size < 1:
        return
    out = list(shape)
    out[axis] = size
    consts = [b.const(np.array([v], np.int64), "sl") for v in (start, end, axis, step)]
    b.node("Slice", [x, *consts], out)


def _split(b, x, shape, layer):
    axis, parts = layer["axis"], layer["parts"]
    d = shape[axis]
    if d < parts:
        return
    sizes = [d // parts] * (parts - 1)
    sizes.append(d - sum(sizes))
    names = [b.name("split_") for _ in sizes]
    b.nodes.append(helper.make_node("Split", [x, b.const(np.array(sizes, np.int64), "sp")], names, axis=axis))
    order = [j for j in layer["order"] if j < parts]
    b.node("Concat", [names[j] for j in order], shape, axis=axis)


def _gather(b, x, shape, layer):
    axis, d = layer["axis"], shape[layer["axis"]]
    idx = [i for i in layer["indices"] if -d <= i < d]
    if not idx:
        return
    out = list(shape)
    out[axis] = len(idx)
    b.node("Gather", [x, b.const(np.array(idx, np.int64), "gi")], out, axis=axis)


def _expand_tile(b, x, shape, layer):
    reps = layer["reps"]
    if layer["op"] == "tile":
        out = [d * r for d, r in zip(shape, reps)]
        if int(np.prod(out)) <= MAX_ELEMENTS:
            b.node("Tile", [x, b.const(np.array(reps, np.int64), "t")], out)
        return
    out = [d if d > 1 else r for d, r in zip(shape, reps)]     # dims of 1 broadcast to the repeat
    if int(np.prod(out)) <= MAX_ELEMENTS:
        b.node("Expand", [x, b.const(np.array(out, np.int64), "e")], out)


def build_new_layer(b, layer: dict, x: str, shape, rng) -> None:
    """Append ``layer`` (a NEW_OPS kind) reading ``x`` of ``shape`` to builder ``b``; nothing when
    the shape is not rank 4 or the layer does not fit it."""
    if len(shape) != 4:
        return
    op = layer["op"]
    if op == "resize":
        _resize(b, x, shape, layer)
    elif op == "convt":
        _convt(b, x, shape, layer, rng)
    elif op == "prelu":
        slope = rng.normal(0.1, 0.3, (shape[1], 1, 1)).astype(np.float32)
        b.node("PRelu", [x, b.const(slope, "pr")], shape)
    elif op == "slice":
        _slice(b, x, shape, layer)
    elif op == "split":
        _split(b, x, shape, layer)
    elif op == "gather":
        _gather(b, x, shape, layer)
    else:
        _expand_tile(b, x, shape, layer)
