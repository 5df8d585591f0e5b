"""report --measure on a pruned model: every kernel's roofline point (MACs it performs per byte it moved
under qemu, per estimated cycle) lies on or under the roof min(peak, intensity x bandwidth). The
nominal MACs of ResNet-8 pruned to 90% put two sparse convs above the Cortex-M0 roof."""
from __future__ import annotations

from tinyfuse.cli import measure_kernels
from tinyfuse.driver import compile_model
from tinyfuse.report import report_data
from tinyfuse.report.plots import roofline_points
from tinyfuse.targets import get_target
from tests.builders.sparse_models import pruned_tflite
from tests.conftest import shared_or_skip
from tests.target.conftest import require_tools


def test_pruned_resnet_points_under_the_cortex_m0_roof():
    require_tools("cortex-m0")
    data = pruned_tflite(shared_or_skip("models", "tflite", "pretrainedResnet_quant.tflite").read_bytes(), "90", None)
    target = get_target("cortex-m0")
    result = compile_model(data, target="cortex-m0")
    d = report_data(result, target, measure_kernels(result, target, 0))
    pts, measured, traffic, cycles = roofline_points(d["kernels"])
    assert measured and traffic and cycles and any("sparse" in r["kind"] for r, _, _ in pts)
    peak, bw = d["peak_macs_per_cycle"], d["sram_bytes_per_cycle"]
    above = [(r["kernel"], x, y) for r, x, y in pts if y > min(peak, x * bw)]
    assert above == []
