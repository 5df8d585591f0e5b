"""TFLM twin fuzzing under qemu, smoke size (part of make test): six drawn models per target (a SIMD conv,
depthwise conv, fully connected with rows, conv + residual add, conv → dw → conv chain, float conv;
tests/fuzz/tflm_twin.py --qemu), compiled for cortex-m4 (arm_dsp, arm_fpu) and cortex-m55 (arm_mve),
cross-compiled, run under qemu and compared with TFLite Micro: int8 byte for byte, float within the
rounding bound. The run must be exact and most models' kernels must have run a SIMD variant.
``make fuzz-tflm TFLM_FUZZ_QEMU=cortex-m4`` runs hundreds."""
from __future__ import annotations

import json

import pytest

from tests.fuzz.tflm_twin import campaign
from tests.target.conftest import require_tools

OPS = ["SIMD CONV_2D", "SIMD DEPTHWISE_CONV_2D", "SIMD FULLY_CONNECTED", "SIMD CONV+ADD", "CONV>DW>CONV", "CONV_2D(f32)"]
SEEDS = [18, 7, 14, 33, 16, 29]    # op = seed % 6: width-1 convs and chain, FC rows [1, 4, 1, 32], a height-1 residual, a 1x1 image


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m55"])
def test_qemu_twin_sample_is_exact_and_runs_simd_kernels(target):
    require_tools(target)
    r = campaign(SEEDS, OPS, progress=False, qemu=target)
    failures = [f"seed {f['seed']} {f['op']} {f['variants']}: {f['detail']}\n  params: {json.dumps(f['params'], default=str)}"
                for f in r["failures"]]
    assert not failures, "\n".join(failures)
    rows = r["table"].values()
    assert sum(row["exact"] + row["tflm wraps"] for row in rows) == len(SEEDS), r["table"]
    assert sum(row["used"] for row in rows) >= len(SEEDS) - 1, r["variants"]
