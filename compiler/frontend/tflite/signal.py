"""TFLM's signal library (tflite-micro signal/micro/kernels: CUSTOM ops ``SignalWindow``, ``SignalRfft``,
...) → the ``signal.*`` ops (compiler/ops/signal.py, signal_stream.py).

Options are a flexbuffer map; TFLM reads its values by position in the sorted keys, so the map must
hold exactly the keys TFLM's kernel expects (else TFLM would read other values: refused). What TFLM
keeps in persistent buffers between invocations (the framer's, stacker's, delay's and overlap-add's
samples, the spectral subtraction's noise estimate, the stacker's and framer's sample counts) is
model state (``StateTable.kernel_state``): ``<name>_reset`` gives the values TFLM's Prepare / Reset
give (zeros; a stacker count of −1, "no frame yet"; a framer with prefill holds F − S zero samples).
Operators with two outputs: FFT_AUTO_SCALE (the scale bits), SPECTRAL_SUBTRACTION (the noise estimate),
FRAMER and STACKER (valid, a bool scalar).
"""
from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from ...ir import Expr, call
from ...ops.signal import SPECTRAL_KEYS
from .registry import MULTI_OUTPUTS, Graph, Op, converter, reshape

INT = ("float32", "int16", "int32", "uint32", "uint64", "bool")    # the element types the signal ops take (raw: no
# quantization parameters, unlike a 16x8 int16 activation; converters take raw_int8=True)
TFLITE_TYPES = {7: "int16", 2: "int32", 0: "float32"}     # the "T" option (schema TensorType)


MULTI_OUTPUTS.update({"CUSTOM 'SignalFftAutoScale'", "CUSTOM 'SignalFilterBankSpectralSubtraction'",
                      "CUSTOM 'SignalFramer'", "CUSTOM 'SignalStacker'"})


def options(op: Op, keys: tuple[str, ...]) -> dict:
    """The flexbuffer map of ``op``'s custom options, holding exactly ``keys``."""
    raw = op.options if isinstance(op.options, (bytes, bytearray)) else b""
    try:
        m = flexbuffers.Loads(bytes(raw)) if raw else {}
    except Exception:  # noqa: BLE001 - damaged options: one error line
        raise op.error("custom options are not a readable flexbuffer map") from None
    if not isinstance(m, dict) or sorted(m) != sorted(keys):
        found = sorted(m) if isinstance(m, dict) else type(m).__name__
        raise op.error(f"custom options hold {found}; TFLM's kernel reads {sorted(keys)} by position")
    return {k: (bool(v) if isinstance(v, bool) else int(v)) for k, v in m.items()}


def _check(op: Op, ok: bool, what: str) -> None:
    if not ok:
        outs = ", ".join(str(t) for t in op.outputs)
        raise op.error(f"{what} (outputs {outs})")


def _type_option(op: Op, o: dict, dtype: str) -> None:
    if TFLITE_TYPES.get(o["T"]) != dtype:
        raise op.error(f"option T {o['T']} ({TFLITE_TYPES.get(o['T'], 'unsupported')}) does not match the "
                       f"{dtype} input; TFLM runs int16, int32 and float32 (T 7, 2, 0)")


def _rows(e: Expr, last: int, span: str) -> Expr:
    return reshape(e, (e.ty.size // last, last), span)


def _split(packed: Expr, first: int, shape, span: str) -> tuple[Expr, Expr]:
    """(packed[:first] as ``shape[0]``, packed[first:] as ``shape[1]``): the two parts of a packed output."""
    a = call("slice_view", packed, offset=0, newshape=tuple(shape[0]), span=span)
    b = call("slice_view", packed, offset=first, newshape=tuple(shape[1]), span=span)
    return a, b


def _state(g: Graph, op: Op, what: str, shape, dtype: str, init=None) -> Expr:
    return g.states.kernel_state(("kernel", op.index, what), f"{op.span}_{what}", tuple(shape), dtype, op, init)


def _assign(g: Graph, op: Op, what: str, value: Expr) -> None:
    g.states.assign_kernel_state(("kernel", op.index, what), value, op)


@converter("CUSTOM 'SignalWindow'", max_version=1, types=INT, raw_int8=True)
def convert_window(g: Graph, op: Op):
    o = options(op, ("shift",))
    x, w = op.inputs[0], op.inputs[1] if len(op.inputs) > 1 else None
    _check(op, w is not None and len(w.shape) == 1 and x.dtype == w.dtype == op.outputs[0].dtype == "int16"
           and op.outputs[0].shape == x.shape and w.shape[0] >= 1 and np.prod(x.shape) % w.shape[0] == 0,
           "needs int16 input of whole windows, int16 weights [W] and an int16 output of the input's shape")
    y = call("signal.window", _rows(g.value(x), w.shape[0], op.span), g.value(w), shift=o["shift"], span=op.span)
    return reshape(y, x.shape, op.span)


@converter("CUSTOM 'SignalFftAutoScale'", max_version=1, types=INT, raw_int8=True)
def convert_fft_auto_scale(g: Graph, op: Op):
    x = op.inputs[0]
    _check(op, len(op.outputs) == 2 and len(x.shape) == 1 and x.dtype == "int16" and op.outputs[0].shape == x.shape
           and op.outputs[1].shape == () and op.outputs[1].dtype == "int32", "needs int16 [N] → int16 [N], int32 []")
    n = x.shape[0]
    packed = call("signal.fft_auto_scale", g.value(x), span=op.span)
    y, bits = _split(packed, n, ((n,), (1,)), op.span)
    return [y, reshape(call("cast", bits, dtype="int32", span=op.span), (), op.span)]


@converter("CUSTOM 'SignalRfft'", "CUSTOM 'SignalIrfft'", max_version=1, types=INT, raw_int8=True)
def convert_fft(g: Graph, op: Op):
    o = options(op, ("T", "fft_length"))
    x, out = op.inputs[0], op.outputs[0]
    _type_option(op, o, x.dtype)
    n, inverse = o["fft_length"], op.name.endswith("Irfft'")
    last = n if inverse else n + 2
    _check(op, len(x.shape) >= 1 and out.dtype == x.dtype and out.shape == x.shape[:-1] + (last,)
           and (x.shape[-1] == n + 2 if inverse else 1 <= x.shape[-1] <= n),
           f"needs [..., {'N + 2' if inverse else '<= N'}] → [..., {'N' if inverse else 'N + 2'}] for fft_length {n}")
    return call("signal.irfft" if inverse else "signal.rfft", g.value(x), fft_length=n, span=op.span)


@converter("CUSTOM 'SignalEnergy'", max_version=1, types=INT, raw_int8=True)
def convert_energy(g: Graph, op: Op):
    o = options(op, ("end_index", "start_index"))
    x, out = op.inputs[0], op.outputs[0]
    _check(op, len(x.shape) == 1 and x.shape[0] % 2 == 0 and out.shape == (x.shape[0] // 2,) and out.dtype == "uint32",
           "needs int16 [2K] (K complex bins) → uint32 [K]")
    return call("signal.energy", g.value(x), start_index=o["start_index"], end_index=o["end_index"], span=op.span)


@converter("CUSTOM 'SignalFilterBank'", max_version=1, types=INT, raw_int8=True)
def convert_filter_bank(g: Graph, op: Op):
    o = options(op, ("num_channels",))
    _check(op, len(op.inputs) == 6 and all(t is not None for t in op.inputs) and op.outputs[0].dtype == "uint64"
           and op.outputs[0].shape == (o["num_channels"],), "needs 6 inputs → uint64 [num_channels]")
    return call("signal.filter_bank", *(g.value(t) for t in op.inputs), num_channels=o["num_channels"], span=op.span)


@converter("CUSTOM 'SignalFilterBankSquareRoot'", max_version=1, types=INT, raw_int8=True)
def convert_filter_bank_sqrt(g: Graph, op: Op):
    x, bits = op.inputs[0], op.inputs[1] if len(op.inputs) > 1 else None
    _check(op, bits is not None and bits.shape == () and op.outputs[0].shape == x.shape, "needs uint64 [C], int32 []")
    return call("signal.filter_bank_sqrt", g.value(x), reshape(g.value(bits), (1,), op.span), span=op.span)


@converter("CUSTOM 'SignalFilterBankLog'", max_version=1, types=INT, raw_int8=True)
def convert_filter_bank_log(g: Graph, op: Op):
    o = options(op, ("input_correction_bits", "output_scale"))
    _check(op, op.outputs[0].shape == op.inputs[0].shape, "needs uint32 [C] → int16 [C]")
    return call("signal.filter_bank_log", g.value(op.inputs[0]), span=op.span, **o)


@converter("CUSTOM 'SignalFilterBankSpectralSubtraction'", max_version=1, types=INT, raw_int8=True)
def convert_spectral_subtraction(g: Graph, op: Op):
    o = options(op, SPECTRAL_KEYS)
    x, c = op.inputs[0], o["num_channels"]
    _check(op, len(op.outputs) == 2 and x.shape == (c,) and all(t.shape == (c,) for t in op.outputs),
           f"needs uint32 [{c}] → uint32 [{c}], uint32 [{c}] (num_channels {c})")
    noise = _state(g, op, "noise", (c,), "uint32")
    packed = call("signal.spectral_subtraction", g.value(x), noise, span=op.span, **o)
    y, est = _split(packed, c, ((c,), (c,)), op.span)
    _assign(g, op, "noise", est)
    return [y, est]


@converter("CUSTOM 'SignalPCAN'", max_version=1, types=INT, raw_int8=True)
def convert_pcan(g: Graph, op: Op):
    o = options(op, ("snr_shift",))
    _check(op, len(op.inputs) == 3 and all(t is not None for t in op.inputs), "needs input, noise estimate, gain table")
    return call("signal.pcan", *(g.value(t) for t in op.inputs), snr_shift=o["snr_shift"], span=op.span)
