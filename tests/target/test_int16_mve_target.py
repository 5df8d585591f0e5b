"""The 16x8 Helium kernels (conv2d / depthwise / matmul .arm_mve_s16: CMSIS-NN's arm_convolve_s16 /
arm_depthwise_conv_s16 / arm_fully_connected_s16 MVE counterparts) on Cortex-M55 under qemu: drawn int16
models (the TFLM twin fuzzer's ``dsp16`` group: pointwise convs read in place, im2col convs, depthwise
convs of every channel multiplier, fully connected rows with and without a K % 8 tail, a depthwise →
conv → add block) equal TFLite Micro's int16 reference kernels byte for byte, every model's conv /
depthwise / fully connected layer ran a Helium s16 kernel; and the 16x8 DS-CNN."""
from __future__ import annotations

import json

import numpy as np

from tinyfuse.driver import compile_model
from tests.fuzz.tflm_twin import DSP_INT16, OPS, campaign
from tests.target.conftest import require_tools

SEEDS = list(range(14))     # op = seed % 7: two of each draw
HELIUM_S16 = {"conv2d.arm_mve_s16", "depthwise.arm_mve_s16", "matmul.arm_mve_s16"}


def test_s16_kernels_on_cortex_m55_equal_tflm():
    require_tools("cortex-m55")
    r = campaign(SEEDS, DSP_INT16, progress=False, qemu="cortex-m55")
    failures = [f"seed {f['seed']} {f['op']} {f['variants']}: {f['detail']}\n  params: {json.dumps(f['params'], default=str)}"
                for f in r["failures"]]
    assert not failures, "\n".join(failures)
    rows = r["table"].values()
    assert sum(row["exact"] + row["tflm wraps"] for row in rows) == len(SEEDS), r["table"]
    assert sum(row["exact"] for row in rows) >= len(SEEDS) - 3, r["table"]
    assert sum(row["used"] for row in rows) == len(SEEDS), r["variants"]


def test_helium_s16_kernels_are_chosen_for_cortex_m55(tmp_path):
    kinds = set()
    for seed in SEEDS:
        op = DSP_INT16[seed % len(DSP_INT16)]
        draw = OPS[op](np.random.default_rng(seed))
        model = tmp_path / f"m{seed}.tflite"
        model.write_bytes(draw.model)
        kinds |= {k.kind for k in compile_model(str(model), target="cortex-m55").kernels}
    assert HELIUM_S16 <= kinds, kinds
    assert not {k for k in kinds if k.endswith("arm_dsp_s16")}, kinds


def test_ds_cnn_16x8_on_cortex_m55_equals_tflm(tmp_path):
    """The 16x8 DS-CNN (tests/c/test_int16_models.py) under qemu: 50 inputs, every conv, depthwise conv
    and the classifier on the Helium s16 kernels."""
    from tests.c.test_int16_models import differing, kws_16x8_model, stream_against_tflm
    require_tools("cortex-m55")
    got, want, kinds = stream_against_tflm(kws_16x8_model(), "cortex-m55", tmp_path)
    assert differing(got, want) == []
    assert HELIUM_S16 <= kinds, kinds
