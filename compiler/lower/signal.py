"""The kernels of TFLM's signal-library ops (compiler/ops/signal.py, signal_stream.py): one hand-written
template each (codegen_templates/signal/), the integer routines in tinyfuse_signal.h. The FFTs get
their twiddles, super twiddles and digit-reversal order as constants computed here (ops/fft.py, as
KISS FFT computes them at init) and a scratch work buffer of N/2 (RFFT) or N (IRFFT) complex points."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..codegen.templates import c_literal, template
from ..ir import Constant
from ..ops import fft
from ..ops.signal import SPECTRAL_KEYS
from .kernel import Kernel
from .registry import lowering

SIGNAL_HEADER = "tinyfuse_signal.h"


def _names(fn, anchor, epi, pool) -> list[str]:
    return [pool.ref(a) if isinstance(a, Constant) else epi.param_names[id(a)] for a in anchor.args]


def _kernel(fn, ctx, macro: str, file: str = "signal/ref.c.j2", scratch: int = 0, macs: int = 0, **kw) -> Kernel:
    anchor, epi, pool, name = ctx.unpack(fn)
    names = _names(fn, anchor, epi, pool)
    body = getattr(template(file).module, macro)(*names, **kw)
    return Kernel(name, [p.ty for p in fn.params], anchor.ty, str(body), [], macs=macs, scratch_bytes=scratch,
                  headers=[SIGNAL_HEADER])


def _anchor(fn, ctx):
    return ctx.unpack(fn)[0]


@lowering("signal.window")
def lower_window(fn, ctx) -> Kernel:
    a = _anchor(fn, ctx)
    x, w = (v.ty for v in a.args)
    return _kernel(fn, ctx, "window", n=x.size, width=w.shape[0], shift=a.attrs["shift"], macs=x.size)


@lowering("signal.fft_auto_scale")
def lower_fft_auto_scale(fn, ctx) -> Kernel:
    return _kernel(fn, ctx, "fft_auto_scale", n=_anchor(fn, ctx).args[0].ty.size)


@lowering("signal.energy")
def lower_energy(fn, ctx) -> Kernel:
    a = _anchor(fn, ctx)
    return _kernel(fn, ctx, "energy", k=a.ty.size, start=a.attrs["start_index"], end=a.attrs["end_index"],
                   macs=2 * a.ty.size)


@lowering("signal.filter_bank")
def lower_filter_bank(fn, ctx) -> Kernel:
    a = _anchor(fn, ctx)
    return _kernel(fn, ctx, "filter_bank", channels=a.attrs["num_channels"], macs=2 * a.args[1].ty.size)


@lowering("signal.filter_bank_sqrt")
def lower_filter_bank_sqrt(fn, ctx) -> Kernel:
    return _kernel(fn, ctx, "filter_bank_sqrt", n=_anchor(fn, ctx).ty.size)


@lowering("signal.filter_bank_log")
def lower_filter_bank_log(fn, ctx) -> Kernel:
    a = _anchor(fn, ctx)
    return _kernel(fn, ctx, "filter_bank_log", n=a.ty.size, scale=a.attrs["output_scale"] & 0xFFFFFFFF,
                   correction=a.attrs["input_correction_bits"])


@lowering("signal.spectral_subtraction")
def lower_spectral_subtraction(fn, ctx) -> Kernel:
    a = _anchor(fn, ctx)
    attrs = {k: (a.attrs[k] & 0xFFFFFFFF if k != "clamping" else bool(a.attrs[k])) for k in SPECTRAL_KEYS}
    return _kernel(fn, ctx, "spectral_subtraction", a=attrs)


@lowering("signal.pcan")
def lower_pcan(fn, ctx) -> Kernel:
    a = _anchor(fn, ctx)
    return _kernel(fn, ctx, "pcan", n=a.ty.size, snr_shift=a.attrs["snr_shift"])


# ----------------------------------------------------------------------------------------- streaming

@lowering("signal.framer")
def lower_framer(fn, ctx) -> Kernel:
    a = _anchor(fn, ctx)
    x, buf = (v.ty for v in a.args)
    step = a.attrs["frame_step"]
    return _kernel(fn, ctx, "framer", "signal/stream.c.j2", outer=x.shape[0], n=x.shape[1] // step, step=step,
                   size=a.attrs["frame_size"], hold=buf.shape[1])


@lowering("signal.stream_count")
def lower_stream_count(fn, ctx) -> Kernel:
    return _kernel(fn, ctx, "stream_count", "signal/stream.c.j2", a=_anchor(fn, ctx).attrs)


@lowering("signal.stacker")
def lower_stacker(fn, ctx) -> Kernel:
    a = _anchor(fn, ctx)
    x, buf, _ = (v.ty for v in a.args)
    return _kernel(fn, ctx, "stacker", "signal/stream.c.j2", channels=x.shape[0], size=buf.shape[0],
                   left=a.attrs["left"])


@lowering("signal.overlap_add")
def lower_overlap_add(fn, ctx) -> Kernel:
    a = _anchor(fn, ctx)
    o, n, f = a.args[0].ty.shape
    return _kernel(fn, ctx, "overlap_add", "signal/stream.c.j2", outer=o, n=n, size=f, step=a.attrs["frame_step"],
                   ctype=a.ty.ctype, saturate=a.ty.dtype == "int16")


@lowering("signal.delay")
def lower_delay(fn, ctx) -> Kernel:
    a = _anchor(fn, ctx)
    x, buf = (v.ty for v in a.args)
    return _kernel(fn, ctx, "delay", "signal/stream.c.j2", outer=x.shape[0], size=x.shape[1], delay=buf.shape[1])


# ----------------------------------------------------------------------------------------- FFT

@dataclass
class Fx:
    """The scalar arithmetic of one FFT kind, as fft.c.j2 prints it."""
    kind: str

    @property
    def fixed(self) -> bool:
        return self.kind != "float32"

    @property
    def bits(self) -> int:
        return {"int16": 16, "int32": 32}.get(self.kind, 0)

    @property
    def wide(self) -> str:
        return "int32_t" if self.bits == 16 else "int64_t"

    @property
    def ctype(self) -> str:
        return {"int16": "int16_t", "int32": "int32_t", "float32": "float"}[self.kind]

    @property
    def big(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.fixed else 0


def _stages(nc: int, tws: np.ndarray, kind: str) -> list[dict]:
    lit = lambda v: c_literal(v.item() if hasattr(v, "item") else v, kind)  # noqa: E731
    fac, out, fstride = fft.factors(nc), [], 1
    for p, m in fac:
        out.append(dict(p=p, m=m, fstride=fstride, epi3=lit(tws[fstride * m % nc][1]),
                        ya=tuple(lit(v) for v in tws[fstride * m % nc]),
                        yb=tuple(lit(v) for v in tws[fstride * 2 * m % nc])))
        fstride *= p
    return out[::-1]


def _fft_spec(ctx, x, n: int, inverse: bool) -> dict:
    pool, kind = ctx.pool, str(x.dtype)
    nc = n // 2
    tws = fft.twiddles(nc, inverse, kind)
    order = fft.input_order(nc).astype(np.uint16 if nc < 65536 else np.int32)
    return dict(n=n, nc=nc, rows=x.size // x.shape[-1], length=x.shape[-1], tw=pool.ref(tws.reshape(-1)),
                super=pool.ref(fft.super_twiddles(nc, inverse, kind).reshape(-1)), order=pool.ref(order),
                stages=_stages(nc, tws, kind))


@lowering("signal.rfft", "signal.irfft")
def lower_fft(fn, ctx) -> Kernel:
    a = _anchor(fn, ctx)
    x = a.args[0].ty
    n, inverse = a.attrs["fft_length"], a.op == "signal.irfft"
    spec = _fft_spec(ctx, x, n, inverse)
    item = np.dtype(x.dtype).itemsize
    macro = "irfft" if inverse else "rfft"
    anchor, epi, pool, name = ctx.unpack(fn)
    body = getattr(template("signal/fft.c.j2").make_module(vars={"fx": Fx(str(x.dtype))}), macro)(
        _names(fn, anchor, epi, pool)[0], spec)
    macs = spec["rows"] * n * max(1, int(np.log2(n)))
    return Kernel(name, [p.ty for p in fn.params], a.ty, str(body), [], macs=macs,
                  scratch_bytes=(2 if inverse else 1) * n * item, headers=[SIGNAL_HEADER])
