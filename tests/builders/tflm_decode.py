"""Compressed .tflite models holding TFLM's ``TFLM_DECODE`` op: a small int8 CONV_2D or DEPTHWISE_CONV_2D
whose weights take a few values per channel (with zeros), compressed by tflite-micro's own tool
(compression/compress.py: LUT per channel or per tensor, bias too), or with the weights' encoded and
ancillary tensors rewritten as a prune mask (the tool's pruning compressor is a stub: the bytes here
follow decode_state_prune.cc's layout). TFLM runs the compressed bytes as the oracle; the
uncompressed model is the reference its decode must reproduce."""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_twin_models import Net, conv


def conv_model(rng, depthwise: bool = False, per_channel: bool = True, levels: int = 6):
    """(model bytes, {name: tensor index}, input) of x [1, 6, 6, 4] int8 → CONV_2D (4 → 5) or DEPTHWISE (x1)."""
    net = Net()
    x = net.input((1, 6, 6, 4), (0.05, -3))
    oc = 4 if depthwise else 5
    table = rng.integers(-127, 128, (oc, levels))
    shape = (1, 3, 3, oc) if depthwise else (oc, 3, 3, 4)
    axis = 3 if depthwise else 0
    w = np.stack([rng.choice(table[c], np.delete(shape, axis)) for c in range(oc)], axis=axis).astype(np.int8)
    w[rng.random(w.shape) < 0.3] = 0
    b = rng.integers(-400, 400, oc).astype(np.int32)
    scales = rng.uniform(0.005, 0.03, oc if per_channel else 1).astype(np.float32)
    y, _ = conv(net, x, (1, 6, 6, 4), (0.05, -3), w, b, scales, (0.1, 2), (1, 1), "SAME", (1, 1), "NONE",
                depth_mult=1 if depthwise else 0)
    model = net.build([y])
    from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
    tensors = me.read(model).subgraphs[0].tensors
    index = {"weights": [i for i, t in enumerate(tensors) if tuple(t.shape) == shape][0],
             "bias": [i for i, t in enumerate(tensors) if t.name == "bias"][0]}
    return model, index, rng.integers(-128, 128, (1, 6, 6, 4)).astype(np.int8)


def lut(model: bytes, tensors: dict[int, tuple[int, int | None]]) -> bytes:
    """``model`` with tensors compressed by the tool's LUT: {index: (bits, channel axis or None: per tensor)}."""
    from tflite_micro.tensorflow.lite.micro.compression import spec
    from tflite_micro.tensorflow.lite.micro.compression.compress import compress
    import contextlib
    import io
    specs = [spec.Tensor(subgraph=0, tensor=i, compression=[spec.LookUpTableCompression(
        index_bitwidth=bits, mode=spec.PerTensor() if axis is None else spec.PerChannel(axis=axis))])
        for i, (bits, axis) in tensors.items()]
    with contextlib.redirect_stderr(io.StringIO()):        # the tool prints a note on wider indices than needed
        return bytes(compress(model, specs))


def prune(model: bytes, tensor: int, axis: int) -> bytes:
    """``model`` with ``tensor`` as a prune mask + kept values (LUT-compressed by the tool first, then the
    DECODE op's encoded and ancillary tensors rewritten)."""
    from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
    w = np.frombuffer(me.read(model).subgraphs[0].tensors[tensor].buffer.data, np.int8)
    m = me.read(lut(model, {tensor: (7, axis)}))
    sg = m.subgraphs[0]
    decode = [op for op in sg.operators if len(op.inputs) == 2 and op.outputs[0].shape and
              int(np.prod(op.outputs[0].shape)) == w.size][0]
    zp = int(decode.outputs[0].quantization.zero_points[0]) if decode.outputs[0].quantization is not None else 0
    keep = w != zp
    encoded, ancillary = decode.inputs
    encoded.buffer.data = np.packbits(keep).tobytes()
    encoded.shape = (len(encoded.buffer.data),)
    header = bytes([2, 1, 0, 0, 1]) + bytes(11)
    ancillary.buffer.data = header + w[keep].tobytes()
    ancillary.shape = (len(ancillary.buffer.data),)
    return bytes(m.build())


def tflm(model: bytes, x: np.ndarray) -> np.ndarray:
    import tflite_micro
    it = tflite_micro.runtime.Interpreter.from_bytes(model, arena_size=1 << 18)
    it.set_input(x, 0)
    it.invoke()
    return np.array(it.get_output(0), copy=True)
