"""TFLM's ``TFLM_DECODE`` custom op (kernels/decode.cc; models written by tflite-micro's compression tool,
compression/compress.py): output k is constant tensor k decompressed, from inputs 2k (the encoded bytes)
and 2k + 1 (the ancillary bytes: a 16-byte header, "DCM", then the type's data). Both inputs are
constants (TFLM's Prepare insists), so tinyfuse decodes at compile time and the outputs are ordinary
constants (weights, bias) for the operators that read them; nothing runs on the target.

The decoders follow TFLM's, element for element (decode_state_lut.cc, decode_state_prune.cc):

- channels: ``C`` = the output's quantization scale count (1 without quantization); with ``C`` > 1 the
  quantized dimension is the first (element i is in channel ``i // (count / C)``) or the last (channel
  ``i % C``); any other axis is refused, as TFLM's Setup does;
- LUT (type 0, header byte 4 = 1): byte 5 bits 0-2 the index width w (1..7), byte 6 the value-table
  stride; the indices are one stream of w-bit fields, most significant bit first, and element i is
  ``table[channel(i) * stride + index_i]`` (tables of the output's element type after the header);
- PRUNE (type 2, byte 4 = 1): one bit per element, most significant first; a 1 takes the next value
  of the value stream after the header (float32 as its int32 bits, bool as bytes), a 0 the zero point
  (per channel for int8 with several nonzero zero points, else the first; TFLM refuses a nonzero zero
  point on other types).

- HUFFMAN (type 1, byte 4 = 1; decode_state_huffman.cc): byte 5 bit 0 selects 32-bit table entries
  (int8 or int16 output) over 16-bit ones (int8 only), bits 4-7 + 1 the width of the first lookup. The
  codewords are one bit stream (the encoded bytes, most significant bit first); per element the first
  lookup reads that many bits as an index into the table after the header; an entry without its top
  bit (symbol found) gives, in its count field + 1, how many bits to read next and, in its value field,
  the offset of the next table from this entry; a found entry's value field is the element (its low 8
  or 16 bits) and its count field the bits of the last read the code used: the rest are read again.

Custom types (127 and up) are refused with one error line: tinyfuse has no decoder for them. A decode
that would read past the encoded or ancillary bytes (TFLM reads memory beyond them) is refused too.
"""
from __future__ import annotations

import math

import numpy as np

from .fold import set_constant
from .registry import Graph, Op, Tensor, effect

LUT, HUFFMAN, PRUNE = 0, 1, 2
HEADER = 16                                   # bytes of the decode common metadata (DCM)
TYPES = ("bool", "float32", "int8", "int16", "int32", "int64")


def _bytes(op: Op, t: Tensor | None, what: str) -> bytes:
    if t is None or t.data is None:
        raise op.error(f"its {what} tensor must be a constant (TFLM's Prepare requires it)")
    return np.ascontiguousarray(t.data).tobytes()


def _channels(op: Op, out: Tensor) -> tuple[int, bool]:
    """(channel count, channels along the last axis) as TFLM's Setup resolves them."""
    if not out.quantized:
        return 1, False
    n = int(out.scale.size)
    if n > 1 and out.axis == len(out.shape) - 1:
        return n, True
    if out.axis != 0:
        raise op.error(f"output '{out.name}' {out} is quantized along axis {out.axis}; TFLM decodes channels along "
                       "the first or the last axis")
    return n, False


def _channel_of(count: int, channels: int, last: bool) -> np.ndarray:
    i = np.arange(count)
    return i % channels if last else i // max(count // channels, 1)


def _bits(op: Op, data: bytes, n: int, what: str) -> np.ndarray:
    bits = np.unpackbits(np.frombuffer(data, np.uint8))
    if bits.size < n:
        raise op.error(f"the encoded tensor holds {bits.size} bits, {what} needs {n}")
    return bits[:n].astype(np.int64)


def _lut(op: Op, enc: bytes, anc: bytes, out: Tensor) -> np.ndarray:
    width, stride = anc[5] & 0x07, anc[6]
    if width == 0:
        raise op.error("LUT index width 0 (ancillary byte 5)")
    count = math.prod(out.shape)
    channels, last = _channels(op, out)
    fields = _bits(op, enc, count * width, f"{count} {width}-bit LUT indices").reshape(count, width)
    index = fields @ (1 << np.arange(width - 1, -1, -1))
    dtype = np.dtype("uint8" if out.dtype == "bool" else out.dtype)
    table = np.frombuffer(anc[HEADER:HEADER + (len(anc) - HEADER) // dtype.itemsize * dtype.itemsize], dtype)
    at = _channel_of(count, channels, last) * stride + index
    if count and at.max() >= table.size:
        raise op.error(f"LUT entry {int(at.max())} of '{out.name}' {out} ({channels} channel table(s) of stride "
                       f"{stride}) lies past the {table.size} values of the ancillary tensor")
    return table[at]


def _prune(op: Op, enc: bytes, anc: bytes, out: Tensor) -> np.ndarray:
    count = math.prod(out.shape)
    channels, last = _channels(op, out)
    zps = out.zero_point if out.quantized else np.zeros(1, np.int64)
    if out.dtype != "int8" and np.any(zps != 0):
        raise op.error(f"output '{out.name}' {out} has nonzero zero points (TFLM prunes only int8 to nonzero ones)")
    stream = {"bool": "int8", "float32": "int32"}.get(out.dtype, out.dtype)
    keep = _bits(op, enc, count, f"a {count}-element prune mask").astype(bool)
    size = np.dtype(stream).itemsize
    values = np.frombuffer(anc[HEADER:HEADER + (len(anc) - HEADER) // size * size], np.dtype(stream))[:int(keep.sum())]
    if values.size < keep.sum():
        raise op.error(f"the prune mask keeps {int(keep.sum())} values, the ancillary tensor holds {values.size}")
    per_channel = out.dtype == "int8" and channels > 1 and np.any(zps != 0)
    fill = zps[_channel_of(count, channels, last)] if per_channel else np.full(count, zps[0])
    y = fill.astype(stream)
    y[keep] = values
    return y.view(np.float32) if out.dtype == "float32" else y


#: (entry dtype, found mask, count mask, count shift, value mask) of Huffman tables of 16- and 32-bit entries
_HUFFMAN_TABLES = {False: ("<u2", 0x8000, 0x7800, 11, 0x07FF), True: ("<u4", 0x80000000, 0x78000000, 27, 0x07FFFFFF)}


def _huffman(op: Op, enc: bytes, anc: bytes, out: Tensor) -> np.ndarray:
    wide, first = bool(anc[5] & 0x01), ((anc[5] & 0xF0) >> 4) + 1
    if out.dtype not in ("int8", "int16") or out.dtype == "int16" and not wide:
        raise op.error(f"Huffman output '{out.name}' {out}: TFLM decodes int8 (16- or 32-bit tables) and int16 "
                       "(32-bit tables)")
    dtype, found, count_mask, shift, value_mask = _HUFFMAN_TABLES[wide]
    size = np.dtype(dtype).itemsize
    table = np.frombuffer(anc[HEADER:HEADER + (len(anc) - HEADER) // size * size], dtype).astype(np.int64)
    stream = np.unpackbits(np.frombuffer(enc, np.uint8)).astype(np.int64)
    bits = np.concatenate([stream, np.zeros(32, np.int64)])        # TFLM reads a word ahead
    weights = 1 << np.arange(31, -1, -1)
    pos, values = 0, np.empty(math.prod(out.shape), np.int64)
    for k in range(values.size):
        n, at, entry = first, 0, 0
        for _ in range(32):            # each lookup reads at least one more bit of the codeword
            if pos + n > stream.size + 32:
                break
            at += int(bits[pos:pos + n] @ weights[32 - n:])
            pos += n
            if at >= table.size:
                raise op.error(f"Huffman table entry {at} lies past the {table.size} entries of the ancillary tensor")
            entry = int(table[at])
            if entry & found:
                break
            n = ((entry & count_mask) >> shift) + 1
            at += entry & value_mask
        pos -= max(n - ((entry & count_mask) >> shift), 0)
        if not entry & found or pos > stream.size:
            raise op.error(f"element {k} of '{out.name}' {out} has no complete codeword in the {stream.size} encoded "
                           "bits")
        values[k] = entry & value_mask
    return values.astype(np.uint16 if out.dtype == "int16" else np.uint8).view(out.dtype)


def _decode(op: Op, enc: bytes, anc: bytes, out: Tensor) -> np.ndarray:
    if len(anc) < HEADER:
        raise op.error(f"the ancillary tensor holds {len(anc)} bytes, less than its {HEADER}-byte header")
    kind, version = anc[0], anc[1]
    if version != 1:
        raise op.error(f"decode metadata version {version}; TFLM reads version 1")
    if out.dtype not in TYPES:
        raise op.error(f"output '{out.name}' {out} has element type {out.dtype}; TFLM decodes {', '.join(TYPES)}")
    decoders = {LUT: ("LUT", _lut), HUFFMAN: ("Huffman", _huffman), PRUNE: ("prune", _prune)}
    if kind not in decoders:
        raise op.error(f"decode type {kind} ({'custom' if kind >= 127 else 'unknown'}) is not supported; tinyfuse "
                       "decodes LUT (0), Huffman (1) and prune (2) at compile time")
    name, decoder = decoders[kind]
    if any(d <= 0 for d in out.shape):
        raise op.error(f"output '{out.name}' has shape {list(out.shape)}; tinyfuse decodes static, non-empty tensors")
    if math.prod(out.shape) > 8 * len(enc):        # every decode type spends at least one bit per element
        raise op.error(f"output '{out.name}' {out} has more elements than the {len(enc)} encoded bytes have bits")
    if anc[4] != 1:
        raise op.error(f"{name} version {anc[4]}; TFLM reads version 1")
    y = decoder(op, enc, anc, out)
    return np.asarray(y).astype(out.dtype).reshape(out.shape)


@effect("CUSTOM 'TFLM_DECODE'", max_version=1)
def convert_decode(g: Graph, op: Op):
    """Every output decoded to a constant (module doc)."""
    if not op.outputs or len(op.inputs) != 2 * len(op.outputs):
        raise op.error(f"expects 2 inputs per output, got {len(op.inputs)} inputs and {len(op.outputs)} outputs")
    for k, out in enumerate(op.outputs):
        enc, anc = _bytes(op, op.inputs[2 * k], "encoded"), _bytes(op, op.inputs[2 * k + 1], "ancillary")
        set_constant(g, out, _decode(op, enc, anc, out))
