"""Compressed .tflite models holding TFLM's ``TFLM_DECODE`` op: a small int8 CONV_2D or DEPTHWISE_CONV_2D
whose weights take a few values per channel (with zeros), compressed by tflite-micro's own tool
(compression/compress.py: LUT per channel or per tensor, bias too), or with the weights' encoded and
ancillary tensors rewritten as a prune mask or Huffman codes (the tool's pruning and Huffman
compressors are stubs: the bytes here follow decode_state_prune.cc's and decode_state_huffman.cc's
layouts). TFLM runs the compressed bytes as the oracle; the
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


def _rewrite(model: bytes, tensor: int, axis: int, encode) -> bytes:
    """``model`` with ``tensor`` LUT-compressed by the tool, then the DECODE op's encoded and ancillary
    tensors replaced by ``encode(values, zero point)`` -> (encoded bytes, ancillary bytes)."""
    from tflite_micro.tensorflow.lite.micro.compression import model_editor as me
    w = np.frombuffer(me.read(model).subgraphs[0].tensors[tensor].buffer.data, np.int8)
    m = me.read(lut(model, {tensor: (7, axis)}))
    sg = m.subgraphs[0]
    decode = [op for op in sg.operators if len(op.inputs) == 2 and op.outputs[0].shape and
              int(np.prod(op.outputs[0].shape)) == w.size][0]
    q = decode.outputs[0].quantization
    encoded, ancillary = decode.inputs
    encoded.buffer.data, ancillary.buffer.data = encode(w, int(q.zero_points[0]) if q is not None else 0)
    encoded.shape, ancillary.shape = (len(encoded.buffer.data),), (len(ancillary.buffer.data),)
    return bytes(m.build())


def prune(model: bytes, tensor: int, axis: int) -> bytes:
    """``model`` with ``tensor`` as a prune mask + kept values (decode_state_prune.cc's layout)."""
    def encode(w, zp):
        keep = w != zp
        return np.packbits(keep).tobytes(), bytes([2, 1, 0, 0, 1]) + bytes(11) + w[keep].tobytes()
    return _rewrite(model, tensor, axis, encode)


def _code_lengths(counts: dict[int, int]) -> dict[int, int]:
    """Huffman code lengths of symbols with ``counts`` (heap merge); a fixed length when that is over 12."""
    import heapq
    if len(counts) == 1:
        return {next(iter(counts)): 1}
    heap = [(c, i, [s]) for i, (s, c) in enumerate(sorted(counts.items()))]
    heapq.heapify(heap)
    depth = dict.fromkeys(counts, 0)
    while len(heap) > 1:
        a, b = heapq.heappop(heap), heapq.heappop(heap)
        for sym in a[2] + b[2]:
            depth[sym] += 1
        heapq.heappush(heap, (a[0] + b[0], min(a[1], b[1]), a[2] + b[2]))
    if max(depth.values()) > 12:
        depth = dict.fromkeys(counts, max(1, int(np.ceil(np.log2(len(counts))))))
    return depth


def huffman_bytes(values: np.ndarray, first: int, wide: bool) -> tuple[bytes, bytes]:
    """(codewords, ancillary) of int8 ``values`` in the layout decode_state_huffman.cc reads: canonical
    Huffman codes, a first table of 2^first entries and one subtable per longer-code prefix."""
    found, shift = (0x80000000, 27) if wide else (0x8000, 11)
    syms = [int(v) & 0xFF for v in values.reshape(-1)]
    length = _code_lengths({s: syms.count(s) for s in set(syms)})
    code, nxt, prev = {}, 0, 0
    for sym in sorted(length, key=lambda t: (length[t], t)):       # canonical codes
        nxt <<= length[sym] - prev
        code[sym], prev, nxt = nxt, length[sym], nxt + 1
    table = [found] * (1 << first)
    longer: dict[int, list[int]] = {}
    for sym, c in length.items():
        if c <= first:
            for suffix in range(1 << (first - c)):
                table[(code[sym] << (first - c)) | suffix] = found | (c << shift) | sym
        else:
            longer.setdefault(code[sym] >> (c - first), []).append(sym)
    for prefix, group in sorted(longer.items()):
        depth = max(length[t] for t in group) - first
        table[prefix] = ((depth - 1) << shift) | (len(table) - prefix)
        sub = [found] * (1 << depth)
        for sym in group:
            rest = length[sym] - first
            for suffix in range(1 << (depth - rest)):
                sub[((code[sym] & ((1 << rest) - 1)) << (depth - rest)) | suffix] = found | (rest << shift) | sym
        table += sub
    bits = "".join(format(code[s], f"0{length[s]}b") for s in syms)
    bits += "0" * (-len(bits) % 32)
    words = np.packbits(np.array([int(b) for b in bits], np.uint8)).tobytes()
    header = bytes([1, 1, 0, 0, 1, ((first - 1) << 4) | int(wide)]) + bytes(10)
    return words, header + np.array(table, "<u4" if wide else "<u2").tobytes()


def huffman(model: bytes, tensor: int, axis: int, first: int = 4, wide: bool = False) -> bytes:
    """``model`` with int8 ``tensor`` Huffman-coded (huffman_bytes), rewritten over the tool's LUT form."""
    return _rewrite(model, tensor, axis, lambda w, zp: huffman_bytes(w, first, wide))


def tflm(model: bytes, x: np.ndarray) -> np.ndarray:
    import tflite_micro
    it = tflite_micro.runtime.Interpreter.from_bytes(model, arena_size=1 << 18)
    it.set_input(x, 0)
    it.invoke()
    return np.array(it.get_output(0), copy=True)
