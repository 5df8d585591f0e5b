"""The TFLM twin fuzzer's 16x8 UNIDIRECTIONAL_SEQUENCE_LSTM draw (tests/builders/tflm_lstm16.py): int16
input, output and hidden state, int8 weights, int64 biases, int16 cell state of a power-of-two scale;
random batch, steps, sizes, time-major layout, cell clip, zero points and scales (input scale and weight
scales spread so the Q3.12 gate inputs range from tiny to saturated). One invocation from the reset
state, byte for byte against TFLM (tests/fuzz/tflm_twin.py, the ``int16`` group)."""
from __future__ import annotations


from tests.builders.tflm_lstm16 import lstm16
from tests.fuzz.twin_draw import Draw, dim, f32, log_scale
from tests.fuzz.twin_draw_int16 import int16_data


def draw_lstm16(rng) -> Draw:
    batch, steps, inp, hidden = dim(rng, 3), dim(rng, 5), dim(rng, 24), dim(rng, 16)
    time_major = bool(rng.random() < 0.3)
    x_zp = int(rng.integers(-200, 201)) if rng.random() < 0.3 else 0
    h_zp = int(rng.integers(-200, 201)) if rng.random() < 0.3 else 0
    x_q, h_q = (log_scale(rng, -15, -8), x_zp), (log_scale(rng, -16, -9), h_zp)
    lo = 2.0 ** rng.uniform(-12, -5)
    w_scale = (lo, lo * 2.0 ** rng.uniform(0, 3))
    cell_power = int(rng.integers(-15, -8))
    cell_clip = f32(rng.uniform(0.05, 8.0)) if rng.random() < 0.3 else 0.0
    kw = dict(batch=batch, steps=steps, inp=inp, hidden=hidden, seed=int(rng.integers(1 << 30)),
              time_major=time_major, cell_clip=cell_clip, x_q=x_q, h_q=h_q, cell_power=cell_power,
              w_scale=w_scale, bias_range=int(2 ** rng.uniform(4, 28)))
    shape = (steps, batch, inp) if time_major else (batch, steps, inp)
    x = int16_data(rng, shape, x_zp)
    params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in kw.items()}
    return Draw("UNIDIRECTIONAL_SEQUENCE_LSTM(i16)", lstm16(**kw), [x], params)
