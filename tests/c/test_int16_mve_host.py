"""The 16x8 Helium kernels (conv2d / depthwise / matmul .arm_mve_s16) on the host through the Helium
stand-ins (runtime_c/include/tinyfuse/simd_host.h): the TFLM twin fuzzer's dsp16 draws compiled for
cortex-m55 equal TFLite Micro's int16 reference kernels byte for byte (outside the channels where TFLM's
64-bit requantization leaves int32), and every model ran arm_mve (its conv / depthwise / fully connected
layer on a Helium s16 kernel)."""
from __future__ import annotations

import json

from tests.conftest import require_programs
from tests.fuzz.tflm_twin import DSP_INT16, campaign

SEEDS = list(range(28))     # op = seed % 7: four of each draw


def test_helium_s16_kernels_on_the_host_stand_ins_equal_tflm():
    require_programs("gcc")
    r = campaign(SEEDS, DSP_INT16, progress=False, variant="arm_mve")
    failures = [f"seed {f['seed']} {f['op']} {f['variants']}: {f['detail']}\n  params: {json.dumps(f['params'], default=str)}"
                for f in r["failures"]]
    assert not failures, "\n".join(failures)
    rows = r["table"].values()
    assert sum(row["exact"] + row["tflm wraps"] for row in rows) >= len(SEEDS) - 1, r["table"]
    assert sum(row["used"] for row in rows) >= len(SEEDS) - 1, r["variants"]
