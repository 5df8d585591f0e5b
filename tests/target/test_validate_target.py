"""tinyfuse validate on qemu: one image with every sample compiled in, bit-exact with TFLite Micro;
and report --measure: qemu instructions for every kernel."""
import json

import numpy as np
import pytest

from tinyfuse.cli import main
from tests.conftest import shared_or_skip
from tests.target.conftest import require_tools


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m0"])
def test_kws_on_target_bit_exact_with_tflm(tmp_path, capsys, target):
    require_tools(target)
    model = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    x = np.random.default_rng(3).integers(-128, 128, (6, 1, 49, 10, 1)).astype(np.int8)
    np.savez(tmp_path / "samples.npz", input=x)
    assert main(["validate", str(model), "--inputs", str(tmp_path / "samples.npz"), "--target", target, "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["target"] == target and s["outputs"][0]["exact"] == 6 and s["outputs"][0]["top1_agreement"] == 1.0


def test_report_measure_counts_every_kernel(capsys):
    require_tools("cortex-m4")
    model = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    assert main(["report", str(model), "--target", "cortex-m4", "--measure", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["measured"] and all(k["measured"] > 0 for k in data["kernels"])
    assert sum(k["measured"] for k in data["kernels"]) <= data["instructions"]
