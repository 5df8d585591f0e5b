"""TFLM's signal-library ops (custom ``Signal*``): one-op models run frame after frame by TFLite Micro
(the oracle: the tflite_micro package registers them) and by tinyfuse's C on the host, byte for byte,
state carried across frames; the numpy interpreter (ops' ``compute``) must agree too. Where TFLM leaves
an output unwritten (ENERGY outside [start, end), FRAMER / STACKER frames while ``valid`` is false)
only the rest is compared."""
from __future__ import annotations

import numpy as np
import pytest

from tests.builders import tflm_signal as ts
from tests.conftest import require_programs


def run_both(model: bytes, frames: list[list[np.ndarray]], tmp_path):
    """(tinyfuse C, TFLM, numpy interpreter) outputs of every frame."""
    from tinyfuse.driver import compile_model
    from tinyfuse.harness.frames import c_frames, numpy_frames
    from tinyfuse.targets import get_target
    require_programs("gcc")
    result = compile_model(model, target="host")
    got = c_frames(result, get_target("host"), frames, tmp_path)[0]
    return got, ts.tflm_frames(model, frames), numpy_frames(result, frames)


def check(model: bytes, frames, tmp_path, keep=None):
    """Every output of every frame equal to TFLM's (``keep(k, want) -> [mask per output]``: the
    elements TFLM writes in frame k)."""
    got, want, ref = run_both(model, frames, tmp_path)
    for k, (g, w, r) in enumerate(zip(got, want, ref)):
        masks = keep(k, w) if keep else [None] * len(w)
        for i, (gi, wi, ri, m) in enumerate(zip(g, w, r, masks)):
            gi, ri = np.asarray(gi).reshape(wi.shape), np.asarray(ri).reshape(wi.shape)
            assert gi.dtype == wi.dtype, (k, i, gi.dtype, wi.dtype)
            m = np.ones(wi.shape, bool) if m is None else np.broadcast_to(m, wi.shape)
            for what, v in (("C", gi), ("numpy", ri)):
                bad = (v.view(np.uint8 if v.itemsize == 1 else f"u{v.itemsize}") !=
                       wi.view(np.uint8 if wi.itemsize == 1 else f"u{wi.itemsize}")) & m
                assert not bad.any(), (f"frame {k} output {i} ({what}): {int(bad.sum())} of {int(m.sum())} differ, "
                                       f"first at {np.argwhere(bad)[0].tolist()}: {v[bad][:4]} vs TFLM {wi[bad][:4]}")
    return got, want


def i16(rng, shape, full=True):
    if full:
        return rng.integers(-32768, 32768, shape).astype(np.int16)
    return np.clip(rng.normal(0, 3000, shape), -32768, 32767).astype(np.int16)


def frames_of(rng, n, make):
    return [[make(rng)] for _ in range(n)]


def test_window_saturates_and_shifts(tmp_path):
    rng = np.random.default_rng(1)
    w = rng.integers(-32768, 32768, 48).astype(np.int16)
    check(ts.window((3, 48), w, 7), frames_of(rng, 3, lambda r: i16(r, (3, 48))), tmp_path)


def test_fft_auto_scale_scale_bits(tmp_path):
    rng = np.random.default_rng(2)
    frames = [[i16(rng, 64, full=False) >> s] for s in (0, 3, 9, 15)] + [[np.zeros(64, np.int16)]]
    frames.append([np.full(64, -32768, np.int16)])
    check(ts.fft_auto_scale(64), frames, tmp_path)


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
@pytest.mark.parametrize("n,length", [(512, 480), (240, 240), (60, 55), (40, 40)])
def test_rfft_irfft(dtype, n, length, tmp_path):
    """Radices 4, 2, 3, 5 (N/2 = 256, 120, 30, 20) and a zero-padded frame; IRFFT of TFLM's spectrum."""
    rng = np.random.default_rng(n)
    make = {"int16": lambda r: i16(r, (2, length)),
            "int32": lambda r: r.integers(-2**31, 2**31, (2, length)).astype(np.int32),
            "float32": lambda r: r.standard_normal((2, length)).astype(np.float32) * 1000}[dtype]
    frames = frames_of(rng, 2, make)
    _, spectra = check(ts.rfft((2, length), n, dtype), frames, tmp_path / "r")
    check(ts.rfft((2, n + 2), n, dtype, inverse=True), [[s[0]] for s in spectra], tmp_path / "i")


def test_energy_of_a_band(tmp_path):
    rng = np.random.default_rng(3)
    band = (np.arange(257) >= 5) & (np.arange(257) < 241)
    check(ts.energy(257, 5, 241), frames_of(rng, 2, lambda r: i16(r, 514)), tmp_path, keep=lambda k, w: [band])


def filter_bank_tables(rng, spectrum: int, channels: int) -> list[np.ndarray]:
    """Random triangular-bank tables: channel c covers widths[c] bins from freq_starts[c]; weights in
    Q12 with unweights 4096 - w (a few negative, which TFLM's uint64 arithmetic wraps)."""
    widths = rng.integers(1, 9, channels + 1)
    starts = np.sort(rng.integers(0, spectrum - 8, channels + 1))
    wstarts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    w = rng.integers(-100, 4097, int(widths.sum()))
    return [a.astype(np.int16) for a in (w, 4096 - w, starts, wstarts, widths)]


def test_filter_bank(tmp_path):
    rng = np.random.default_rng(4)
    tables = filter_bank_tables(rng, 257, 40)
    check(ts.filter_bank(257, tables, 40), frames_of(rng, 2, lambda r: r.integers(0, 2**31, 257).astype(np.uint32)),
          tmp_path)


def test_filter_bank_sqrt_log(tmp_path):
    rng = np.random.default_rng(5)
    x = [np.concatenate([rng.integers(0, 2**32, 20, dtype=np.uint64), rng.integers(0, 2**64 - 1, 18, dtype=np.uint64),
                         np.array([0, 2**64 - 1], np.uint64)]) for _ in range(2)]
    for bits in (0, 3):
        check(ts.filter_bank_sqrt(40, bits), [[v] for v in x], tmp_path / f"s{bits}")
    logs = [[np.concatenate([rng.integers(0, 2**32, 36), [0, 1, 2, 2**32 - 1]]).astype(np.uint32)] for _ in range(2)]
    check(ts.filter_bank_log(40, 1600, 3), logs, tmp_path / "l")
    # inputs where 64 * ln-estimate ends in 0x8000: the final rounding (+ 32768) decides the result
    ties = np.array([1437454691, 1628563574, 3341516311, 142576406, 3188683947], np.uint32)
    check(ts.filter_bank_log(5, 64, 0), [[ties]], tmp_path / "t")


SPECTRAL = dict(alternate_one_minus_smoothing=15401, alternate_smoothing=983, clamping=False, min_signal_remaining=819,
                one_minus_smoothing=15975, smoothing=409, smoothing_bits=10, spectral_subtraction_bits=14)


@pytest.mark.parametrize("clamping", [False, True])
def test_spectral_subtraction_keeps_its_noise_estimate(clamping, tmp_path):
    rng = np.random.default_rng(6)
    loud = [[rng.integers(0, 60000, 40).astype(np.uint32)] for _ in range(4)]
    quiet = [[rng.integers(0, 300, 40).astype(np.uint32)] for _ in range(3)]    # estimate above signal: clamping
    check(ts.spectral_subtraction(40, **{**SPECTRAL, "clamping": clamping}), loud + quiet, tmp_path)


def test_pcan(tmp_path):
    rng = np.random.default_rng(7)
    lut = rng.integers(-32768, 32768, 125).astype(np.int16)
    frames = [[rng.integers(0, 2**20, 40).astype(np.uint32),
               np.concatenate([[0, 1, 2, 3], rng.integers(0, 2**32, 36)]).astype(np.uint32)] for _ in range(2)]
    check(ts.pcan(40, lut, 6), frames, tmp_path)


def _valid_only(k, want):
    return [bool(want[1]), None]


@pytest.mark.parametrize("size,step,prefill,shape", [(400, 160, True, (1, 320)), (400, 160, False, (2, 160)),
                                                     (5, 2, False, (6,)), (64, 64, False, (64,))])
def test_framer_streams(size, step, prefill, shape, tmp_path):
    rng = np.random.default_rng(size + step)
    _, want = check(ts.framer(shape, size, step, prefill), frames_of(rng, 6, lambda r: i16(r, shape)), tmp_path,
                    keep=_valid_only)
    assert any(bool(w[1]) for w in want)


@pytest.mark.parametrize("left,right,step", [(2, 1, 1), (0, 0, 1), (3, 2, 2), (1, 1, 3)])
def test_stacker_streams(left, right, step, tmp_path):
    rng = np.random.default_rng(left * 10 + right)
    _, want = check(ts.stacker(5, left, right, step), frames_of(rng, 8, lambda r: i16(r, 5)), tmp_path,
                    keep=_valid_only)
    assert any(bool(w[1]) for w in want) and (step == 1 or not all(bool(w[1]) for w in want))


@pytest.mark.parametrize("dtype", ["int16", "float32"])
def test_overlap_add_streams(dtype, tmp_path):
    rng = np.random.default_rng(8)
    make = (lambda r: i16(r, (2, 3, 12))) if dtype == "int16" else \
        (lambda r: r.standard_normal((2, 3, 12)).astype(np.float32))
    check(ts.overlap_add((2, 3, 12), 5, dtype), frames_of(rng, 4, make), tmp_path)


@pytest.mark.parametrize("length", [0, 3, 40])
def test_delay_streams(length, tmp_path):
    rng = np.random.default_rng(9)
    check(ts.delay((2, 16), length), frames_of(rng, 5, lambda r: i16(r, (2, 16))), tmp_path)
