"""SPACE_TO_BATCH_ND → CONV_2D / DEPTHWISE_CONV_2D → BATCH_TO_SPACE_ND as one dilated convolution.

TensorFlow's ``with_space_to_batch`` (tf.nn.convolution with a dilation rate and no native dilated
kernel) pads the NHWC input by ``paddings``, moves each of the d_h·d_w phases to the batch, runs a
stride-1 VALID conv and moves the batches back, cropping ``crops``. Output pixel (r, s) is then
Σ w[ky, kx] · x[r + crop_top − pad_top + d_h·ky, s + crop_left − pad_left + d_w·kx] (0 outside x):
the conv with dilation (d_h, d_w) and explicit padding top = pad_top − crop_top (left likewise),
bottom = out_h + d_h·(k_h − 1) − h − top. When those are TensorFlow's SAME or VALID padding of the
dilated conv, the three operators become one CONV_2D / DEPTHWISE_CONV_2D with that padding and
dilation (the conv pads with its input zero point, as TFLite's SPACE_TO_BATCH_ND pads with the zero
point); anything else stays as it is. The intermediate tensors must have no other reader and must
not be graph outputs.
"""
from __future__ import annotations

import copy
import dataclasses

import numpy as np

from .ops import same_padding
from .registry import Op, S

CONVS = ("CONV_2D", "DEPTHWISE_CONV_2D")


def _block_and_pads(op: Op) -> tuple[list[int], np.ndarray] | None:
    """(block [d_h, d_w], [[before, after], [before, after]]) of a 4-D S2B / B2S with constant inputs."""
    if len(op.inputs) < 3 or any(t is None or t.data is None for t in op.inputs[1:3]) or len(op.inputs[0].shape) != 4:
        return None
    block = [int(v) for v in np.asarray(op.inputs[1].data).reshape(-1)]
    pads = np.asarray(op.inputs[2].data, np.int64).reshape(-1, 2)
    if len(block) != 2 or pads.shape != (2, 2) or min(block) < 1 or pads.min() < 0:
        return None
    return block, pads


def _padding_name(op: Op, x_shape, kernel, block, begin) -> str | None:
    """SAME / VALID when the dilated conv's explicit padding (``begin`` top/left, the rest at the
    bottom/right) is TensorFlow's SAME or VALID padding for it, else None."""
    out = op.outputs[0].shape[1:3]
    end = [o + d * (k - 1) - n - b for o, d, k, n, b in zip(out, block, kernel, x_shape[1:3], begin)]
    pads = (begin[0], begin[1], end[0], end[1])
    for name in ("VALID", "SAME"):
        if same_padding(x_shape[1:3], kernel, (1, 1), block, name, op) == pads:
            return name
    return None


def _fused(s2b: Op, conv: Op, b2s: Op) -> Op | None:
    """The one dilated conv the three operators compute, or None."""
    sp, bc = _block_and_pads(s2b), _block_and_pads(b2s)
    if sp is None or bc is None or sp[0] != bc[0] or conv.opt("strideH", 1) != 1 or conv.opt("strideW", 1) != 1:
        return None
    if (conv.opt("dilationHFactor", 1), conv.opt("dilationWFactor", 1)) != (1, 1) or conv.options is None:
        return None
    if conv.opt("padding", 0) != S.Padding.VALID or len(conv.inputs) < 2 or conv.inputs[1] is None:
        return None
    x = s2b.inputs[0]
    if x.shape[0] != b2s.outputs[0].shape[0] or x.shape[3] != conv.inputs[0].shape[3]:
        return None
    block, (pads, crops) = sp[0], (sp[1], bc[1])
    w = conv.inputs[1].shape
    kernel = w[1:3]
    name = _padding_name(b2s, x.shape, kernel, block, [int(pads[a][0] - crops[a][0]) for a in (0, 1)])
    if name is None:
        return None
    options = copy.copy(conv.options)
    options.padding = getattr(S.Padding, name)
    options.dilationHFactor, options.dilationWFactor = block
    return dataclasses.replace(conv, options=options, inputs=[x, *conv.inputs[1:]], outputs=list(b2s.outputs))


def _chain(operators: list[Op], k: int, producer: dict, readers: dict, outputs: set[int]) -> tuple[int, int] | None:
    """(S2B index, conv index) when operator ``k``, a BATCH_TO_SPACE_ND, ends an S2B → conv chain whose
    inner tensors have one reader each and are no graph outputs."""
    b2s = operators[k]
    if b2s.name != "BATCH_TO_SPACE_ND" or not b2s.inputs or b2s.inputs[0] is None:
        return None
    ci = producer.get(b2s.inputs[0].index)
    conv = operators[ci] if ci is not None else None
    if conv is None or conv.name not in CONVS or not conv.inputs or conv.inputs[0] is None:
        return None
    si = producer.get(conv.inputs[0].index)
    inner = (conv.inputs[0].index, b2s.inputs[0].index)
    if si is None or operators[si].name != "SPACE_TO_BATCH_ND" or any(readers.get(i) != 1 or i in outputs for i in inner):
        return None
    return si, ci


def fold_dilated_convs(operators: list[Op], outputs: set[int]) -> list[Op]:
    """``operators`` with every SPACE_TO_BATCH_ND → conv → BATCH_TO_SPACE_ND chain that is a dilated
    conv replaced by that conv. ``outputs``: the subgraph's output tensor indices."""
    readers: dict[int, int] = {}
    for op in operators:
        for t in op.inputs:
            if t is not None:
                readers[t.index] = readers.get(t.index, 0) + 1
    producer = {t.index: k for k, op in enumerate(operators) for t in op.outputs}
    drop: set[int] = set()
    replaced: dict[int, Op] = {}
    for k in range(len(operators)):
        found = _chain(operators, k, producer, readers, outputs)
        fused = _fused(operators[found[0]], operators[found[1]], operators[k]) if found else None
        if fused is not None:
            drop.update(found)
            replaced[k] = fused
    return [replaced.get(k, op) for k, op in enumerate(operators) if k not in drop]
