"""The TFLM twin fuzzer's draws of control flow folded at compile time (IF with a constant condition,
WHILE with a constant trip count; tests/builders/tflm_control.py) and of TFLM's custom ops
CIRCULAR_BUFFER, BasicClassifier and TFLM_DECODE (compressed weights, tests/builders/tflm_decode.py).
One invocation each, every output compared byte for byte (the float32 branches and loop bodies are
single float32 operations, exact in both). CIRCULAR_BUFFER draws run on the first invocation
(cycles_max 1, or unset with 5, 13 or 25 slots) and compare the newest slot: the older ones hold
TFLM's arena bytes until the stream fills them (tests/c/test_tflm_custom_ops.py streams it)."""
from __future__ import annotations

import numpy as np

from tests.builders import tflm_control as tc
from tests.fuzz.twin_draw import Draw, act_q, dim, pick


def draw_if(rng) -> Draw:
    cond, int8 = pick(rng, ["true", "false", "less"]), bool(rng.random() < 0.5)
    shape = (1, dim(rng, 4), dim(rng, 16)) if rng.random() < 0.5 else (1, dim(rng, 40))
    q = act_q(rng) if int8 else None
    if int8:
        x = rng.integers(-128, 128, shape).astype(np.int8)
    else:
        x = (rng.standard_normal(shape) * 10 ** rng.uniform(-2, 3)).astype(np.float32)
    return Draw("IF", tc.if_model(cond, q, shape), [x], dict(cond=cond, q=q, shape=list(shape)))


def draw_while(rng) -> Draw:
    n, shape = int(rng.integers(0, 12)), (1, dim(rng, 24))
    x = (rng.standard_normal(shape) * 10 ** rng.uniform(-2, 3)).astype(np.float32)
    return Draw("WHILE", tc.while_model(n, shape=shape), [x], dict(n=n, shape=list(shape)))


def draw_circular_buffer(rng) -> Draw:
    slots = pick(rng, [1, 2, 3, 5, 13, 25, int(rng.integers(1, 40))])
    h, d = dim(rng, 3), dim(rng, 64)
    cycles = None if slots in (5, 13, 25) and rng.random() < 0.5 else 1
    x = rng.integers(-128, 128, (1, 1, h, d)).astype(np.int8)
    return Draw("CIRCULAR_BUFFER", tc.circular_buffer_last_model(slots, h, d, cycles, act_q(rng)), [x],
                dict(slots=slots, h=h, d=d, cycles_max=cycles))


def draw_basic_classifier(rng) -> Draw:
    n, k = dim(rng, 64), dim(rng, 8)
    indices = rng.integers(0, n, k).tolist()
    x = rng.integers(-2**31, 2**31, (n,) if rng.random() < 0.3 else (1, n), dtype=np.int64).astype(np.int32)
    picked = x.reshape(-1)[indices]
    thresholds = [int(v) + int(rng.integers(-1, 2)) if rng.random() < 0.5 else int(rng.integers(-2**31, 2**31))
                  for v in picked]
    thresholds = np.clip(thresholds, -2**31, 2**31 - 1).astype(np.int32).tolist()
    model = tc.basic_classifier_model(n, indices, thresholds, flat=x.ndim == 1)
    return Draw("BasicClassifier", model, [x], dict(n=n, indices=indices, thresholds=thresholds))


def draw_decode(rng) -> Draw:
    """A CONV_2D / DEPTHWISE_CONV_2D whose weights (and bias) TFLM_DECODE decompresses: LUT tables that
    match the weights' quantization (per channel, or one table for per-tensor scales), a prune mask or
    Huffman codes."""
    import warnings
    from tests.builders import tflm_decode as td
    depthwise, per_channel = bool(rng.random() < 0.5), bool(rng.random() < 0.6)
    model, idx, x = td.conv_model(rng, depthwise, per_channel, levels=int(rng.integers(1, 7)))
    axis = 3 if depthwise else 0
    kind = pick(rng, ["lut", "lut_bias", "prune", "huffman"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "prune":
            compressed = td.prune(model, idx["weights"], axis)
        elif kind == "huffman":
            compressed = td.huffman(model, idx["weights"], axis, int(rng.integers(1, 9)), bool(rng.random() < 0.5))
        else:
            bits = int(rng.integers(3, 8)) if per_channel else int(rng.integers(6, 8))
            tensors = {idx["weights"]: (bits, axis if per_channel else None)}
            if kind == "lut_bias":
                tensors[idx["bias"]] = (int(rng.integers(3, 8)), 0)
            compressed = td.lut(model, tensors)
    return Draw("TFLM_DECODE", compressed, [x], dict(depthwise=depthwise, per_channel=per_channel, kind=kind))


DRAWS = {"IF": draw_if, "WHILE": draw_while, "CIRCULAR_BUFFER": draw_circular_buffer,
         "BasicClassifier": draw_basic_classifier, "TFLM_DECODE": draw_decode}
