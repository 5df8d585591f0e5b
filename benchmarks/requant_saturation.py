"""Requantization multipliers above 1: outputs wrong before (int32 left shift that wraps, TFLM's and
tinyfuse's old arithmetic) and after (saturating, compiler/quant.py + quant.h), against float64 real
arithmetic. A 3x3 conv with 64 input channels over a 6x6 int8 input (VALID, 16 output pixels), per
tensor (one output channel, multiplier 2^k) and per channel (8 channels, multipliers 2^k … 2^(k+7)).
The "after" column runs the generated C (gcc, host); "before" applies the wrapping arithmetic to the
same int32 accumulators.

    python benchmarks/requant_saturation.py
"""
from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.builders import qdq as qb  # noqa: E402
from tinyfuse import quant  # noqa: E402
from tinyfuse.driver import compile_model  # noqa: E402
from tinyfuse.harness import build_host, run_host  # noqa: E402


def accumulators(x, zx, w, bias):
    """int64 accumulators of the VALID 3x3 conv, NHWC [1, oh, ow, O]."""
    xs = x.astype(np.int64) - zx
    oh, ow = x.shape[1] - 2, x.shape[2] - 2
    acc = np.zeros((1, oh, ow, w.shape[0]), np.int64) + bias
    for i in range(3):
        for j in range(3):
            acc += np.einsum("nhwc,oc->nhwo", xs[:, i:i + oh, j:j + ow, :], w[:, i, j, :].astype(np.int64))
    return acc


def row(k: int, per_channel: bool, workdir: Path):
    rng = np.random.default_rng(k)
    cout = 8 if per_channel else 1
    x = rng.integers(-128, 128, (1, 6, 6, 64)).astype(np.int8)
    w = rng.integers(-127, 128, (cout, 3, 3, 64)).astype(np.int8)
    mult = np.array([2.0 ** (k + c) for c in range(cout)])
    bias = rng.integers(-50, 50, cout).astype(np.int32)
    model = qb.conv2d(x.shape, w, bias, (1.0, 3), mult.astype(np.float32), (1.0, -2), padding="VALID")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = compile_model(model, name="sat")
    after = run_host(build_host(result, workdir), result, [x])[0].reshape(1, 4, 4, cout).astype(np.int64)
    acc = accumulators(x, 3, w, bias)
    real = np.clip(np.rint(acc * mult) - 2, -128, 127)
    ms = [quant.quantize_multiplier(m) for m in mult]
    left = [max(s, 0) for _, s in ms]
    before = np.stack([np.clip(quant.rdbp(quant.srdhm(quant.wrap32(acc[..., c] << min(left[c], 63)), ms[c][0]),
                                          max(-ms[c][1], 0)) - 2, -128, 127) for c in range(cout)], -1)
    return int((before != real).sum()), int((after != real).sum()), real.size


def main() -> None:
    print("| multiplier | per-tensor: wrong before → after (of 16) | per-channel 2^k..2^(k+7): wrong before → after (of 128) |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for k in (1, 4, 8, 12, 16, 20, 24, 28, 31, 32, 35):
            t = row(k, False, Path(tmp) / f"t{k}")
            c = row(k, True, Path(tmp) / f"c{k}")
            print(f"| 2^{k} | {t[0]} → {t[1]} | {c[0]} → {c[1]} |")


if __name__ == "__main__":
    main()
