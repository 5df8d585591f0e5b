"""Random graph specs of the differential graph fuzzer (tests/fuzz/generator.py): plain data (dicts and
lists, JSON-able) that graph_build.py turns into ONNX. Layers name their operands relative to the
values built so far (``src`` 1 = the latest), so every subset of a spec's layers is still a valid graph.
A third of the specs get the shapes where the SIMD kernels branch (``simd_shapes``)."""
from __future__ import annotations

import numpy as np

from tests.fuzz.newops import random_new_layer

ACTS = ["Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Clip"]


def random_spec(seed: int, quant: bool | None = None) -> dict:
    """A random graph spec from ``seed`` (the same seed always gives the same spec). Half of the int8
    specs draw their quantization parameters by hand (``qdq: "hand"``, tests/fuzz/handqdq.py), from
    a generator of their own so the layers of a seed do not depend on it."""
    spec = _random_spec(seed, quant)
    extra = np.random.default_rng([seed, 6])          # the new ops' layers, inserted among the others
    if len(spec["input"]) == 4 and extra.random() < 0.5:
        for _ in range(int(extra.integers(1, 3))):
            pos = int(extra.integers(0, len(spec["layers"]) + 1))
            spec["layers"].insert(pos, random_new_layer(extra, len(spec["layers"])))
    if spec["quant"] and np.random.default_rng([seed, 5]).random() < 0.5:
        spec["qdq"] = "hand"
    simd = np.random.default_rng([seed, 8])           # the SIMD shape classes, a generator of their own
    if len(spec["input"]) == 4 and simd.random() < SIMD_SHARE:
        simd_shapes(spec, simd)
    return spec


SIMD_SHARE = 0.35
ODD_CHANNELS = (1, 2, 3, 5, 6, 7, 9, 13, 15, 17, 19, 23, 31, 33, 47, 63, 65, 67)


def _channels(rng) -> int:
    """1..67: uniform, a SIMD tail size (not a multiple of 4 or 16) or a multiple of 4."""
    r = rng.random()
    if r < 0.4:
        return int(rng.integers(1, 68))
    return int(rng.choice(ODD_CHANNELS)) if r < 0.75 else int(rng.choice([4, 8, 12, 16, 32, 48, 64]))


def simd_shapes(spec: dict, rng) -> None:
    """Give a rank-4 (NCHW) spec a shape class where the SIMD kernels branch (``spec["simd"]``): ``w1``
    ([N, C, H, 1]: 1-D convs along H, kernels Kx1), ``h1`` ([N, C, 1, W], 1xK), ``1x1`` (one pixel) or
    ``wide`` (the image kept); channels 1..67 on the input and on half the convs' outputs, kernels up to
    7 on the 1-D classes (strides, dilations and pads only along the long axis)."""
    n, _, h, w = spec["input"]
    kind = str(rng.choice(["w1", "w1", "h1", "1x1", "wide"]))
    long = int(rng.integers(2, 25))
    h, w = {"w1": (long, 1), "h1": (1, long), "1x1": (1, 1), "wide": (min(h, 8), min(w, 8))}[kind]
    spec["input"] = [n, _channels(rng), h, w]
    spec["simd"] = kind
    flat = {"w1": 1, "h1": 0, "1x1": None}.get(kind, -1)     # the axis of size 1 (0: H, 1: W), None: both
    for layer in spec["layers"]:
        if layer["op"] == "conv" and rng.random() < 0.5 and layer["kind"] != "depthwise":
            layer["out"] = _channels(rng)
        if layer["op"] not in ("conv", "pool") or flat == -1:
            continue
        if kind != "1x1" and layer["op"] == "conv" and layer["kind"] != "pointwise":
            k, long_axis = int(rng.integers(1, 8)), 1 - flat
            layer["k"] = [k, 1] if flat == 1 else [1, k]
            reach = (k - 1) * layer["dil"][long_axis]
            for j in (long_axis, long_axis + 2):
                layer["pads"][j] = min(layer["pads"][j], reach)
        for axis in ((0, 1) if flat is None else (flat,)):
            layer["k"][axis], layer["stride"][axis] = 1, 1
            layer["pads"][axis], layer["pads"][axis + 2] = 0, 0
            if "dil" in layer:
                layer["dil"][axis] = 1


def _random_spec(seed: int, quant: bool | None) -> dict:
    rng = np.random.default_rng(seed)
    quant = bool(rng.random() < 0.35) if quant is None else quant
    if rng.random() < 0.15:
        return _random_dense_spec(rng, seed, quant)
    n = 2 if rng.random() < 0.1 else 1
    c = int(rng.integers(1, 9))
    h, w = (int(v) for v in rng.integers(1, 13, 2))
    if rng.random() < 0.8:
        h, w = max(h, 4), max(w, 4)
    layers = []
    for i in range(int(rng.integers(1, 8))):
        layers.append(_random_layer(rng, i))
    if rng.random() < 0.4:
        layers.append({"op": "head", "features": int(rng.integers(1, 11)), "transB": int(rng.integers(0, 2)),
                       "softmax": bool(rng.random() < 0.5), "gap": bool(rng.random() < 0.3),
                       "alpha": float(rng.choice([1.0, 0.5])), "wseed": 1000 + len(layers)})
    return {"seed": seed, "quant": quant, "per_channel": bool(rng.random() < 0.5), "input": [n, c, h, w],
            "layers": layers, "extra_output": bool(rng.random() < 0.15)}


def _random_dense_spec(rng, seed, quant) -> dict:
    layers = []
    for i in range(int(rng.integers(1, 6))):
        r = rng.random()
        if r < 0.45:
            layers.append({"op": "gemm", "features": int(rng.integers(1, 33)), "transB": int(rng.integers(0, 2)),
                           "bias": bool(rng.random() < 0.8), "matmul": bool(rng.random() < 0.3), "wseed": i})
        elif r < 0.7:
            layers.append({"op": "act", "act": str(rng.choice(ACTS)), "alpha": float(rng.uniform(0.05, 0.3)),
                           "lo": float(rng.uniform(-1, 0)), "hi": float(rng.uniform(0.2, 6))})
        elif r < 0.85:
            layers.append({"op": "binary", "kind": str(rng.choice(["Add", "Mul"])), "src2": int(rng.integers(1, 4))})
        else:
            layers.append({"op": "concat", "src2": int(rng.integers(1, 4)), "axis": 1})
    if rng.random() < 0.3:
        layers.append({"op": "softmax"})
    return {"seed": seed, "quant": quant, "per_channel": bool(rng.random() < 0.5),
            "input": [int(rng.integers(1, 4)), int(rng.integers(1, 40))], "layers": layers,
            "extra_output": bool(rng.random() < 0.15)}


def _random_layer(rng, i: int) -> dict:
    r = rng.random()
    src = 1 if rng.random() < 0.8 else int(rng.integers(2, 5))
    if r < 0.40:
        kind = str(rng.choice(["full", "depthwise", "grouped", "pointwise"], p=[0.4, 0.3, 0.1, 0.2]))
        k = [1, 1] if kind == "pointwise" else [int(v) for v in rng.choice([1, 2, 3, 3, 5], 2)]
        if rng.random() < 0.6:
            k = [k[0], k[0]]
        dil = [1, 1] if rng.random() < 0.75 or kind == "pointwise" else [int(v) for v in rng.integers(1, 3, 2)]
        stride = [int(v) for v in rng.choice([1, 1, 2, 3], 2)]
        if rng.random() < 0.6:
            stride = [stride[0], stride[0]]
        pads = [int(rng.integers(0, (k[j % 2] - 1) * dil[j % 2] + 1)) for j in range(4)]
        auto = str(rng.choice(["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"], p=[0.8, 0.08, 0.06, 0.06]))
        return {"op": "conv", "src": src, "kind": kind, "out": int(rng.integers(1, 9)), "mult": int(rng.integers(1, 3)),
                "groups": int(rng.choice([2, 3, 4])), "k": k, "stride": stride, "dil": dil, "pads": pads,
                "auto_pad": auto if dil == [1, 1] else "NOTSET", "bias": bool(rng.random() < 0.7),
                "bn": bool(rng.random() < 0.2), "act": str(rng.choice(ACTS + ["", "", ""])),
                "alpha": float(rng.uniform(0.05, 0.3)), "lo": float(rng.uniform(-1, 0)), "hi": float(rng.uniform(0.2, 6)),
                "wseed": i}
    if r < 0.52:
        k = [int(v) for v in rng.integers(1, 4, 2)]
        return {"op": "pool", "src": src, "kind": str(rng.choice(["MaxPool", "AveragePool"])), "k": k,
                "stride": [int(v) for v in rng.integers(1, 4, 2)],
                "pads": [int(rng.integers(0, k[j % 2])) for j in range(4)],
                "ceil": int(rng.random() < 0.3), "count_include_pad": int(rng.random() < 0.3)}
    if r < 0.62:
        return {"op": "act", "src": src, "act": str(rng.choice(ACTS)), "alpha": float(rng.uniform(0.05, 0.3)),
                "lo": float(rng.uniform(-1, 0)), "hi": float(rng.uniform(0.2, 6))}
    if r < 0.72:
        return {"op": "const_binary", "src": src, "kind": str(rng.choice(["Add", "Mul", "Sub"])),
                "shape": str(rng.choice(["channel", "channel4", "width", "scalar", "full"])), "wseed": 100 + i}
    if r < 0.84:
        return {"op": "binary", "src": src, "kind": str(rng.choice(["Add", "Add", "Mul"])), "src2": int(rng.integers(1, 5))}
    if r < 0.90:
        return {"op": "concat", "src": src, "src2": int(rng.integers(1, 5)), "axis": int(rng.choice([1, 1, 2, 3]))}
    if r < 0.93:
        return {"op": "gap", "src": src}
    if r < 0.96:
        return {"op": "pad", "src": src, "pads": [int(v) for v in rng.integers(0, 3, 4)],
                "value": float(rng.choice([0.0, 0.5]))}
    return {"op": "reshape", "src": src, "how": str(rng.choice(["merge_ch", "merge_hw", "transpose"]))}
