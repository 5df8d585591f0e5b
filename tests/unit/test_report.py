"""tinyfuse report (X-CUBE-AI-style analysis): source layer names per kernel, flash/RAM columns,
no planner sentinel in the text, plots with legends, in-place colour from the memory plan."""
import json
import os
import re
import xml.etree.ElementTree as ET

import pytest

from tinyfuse.cli import main
from tinyfuse.driver import compile_model
from tinyfuse.report import report_data
from tinyfuse.report.plots import point_kind
from tinyfuse.targets import get_target
from tests.conftest import shared_or_skip

KWS = ("models", "tflite", "kws_ref_model.tflite")
RESNET = ("models", "onnx", "pretrainedResnet_quant.onnx")


@pytest.fixture(scope="module")
def kws_m4():
    return compile_model(shared_or_skip(*KWS), target="cortex-m4")


def test_kernels_list_their_source_layers(kws_m4, capsys):
    data = report_data(kws_m4, get_target("cortex-m4"))
    layers = [r["layers"] for r in data["kernels"]]
    # the DS-CNN's operators in order: conv, 4 x (depthwise, pointwise), average pool, fully connected, softmax
    assert layers[:3] == [["conv_2d_0"], ["depthwise_conv_2d_1"], ["conv_2d_2"]]
    assert layers[-3:] == [["average_pool_2d_9"], ["fully_connected_11"], ["softmax_12"]]
    assert sum(r["flash"] for r in data["kernels"]) == kws_m4.weights_bytes     # each constant counted once
    assert max(r["ram"] for r in data["kernels"]) <= kws_m4.arena_bytes
    # 64 4x10 filters + one int32 [2·bias, multiplier, half-rounding term, shift] row per channel (the short requantize)
    assert data["kernels"][0]["flash"] == 64 * 40 + 4 * 64 * 4
    path = shared_or_skip(*KWS)
    assert main(["report", str(path), "--target", "cortex-m4"]) == 0
    out = capsys.readouterr().out
    assert "depthwise_conv_2d_7" in out and "fully_connected_11" in out
    assert "1000000000" not in out and re.search(r"^t12 +output .* end ", out, re.M)


def test_poly_fused_kernel_lists_every_covered_layer():
    result = compile_model(shared_or_skip(*RESNET), target="cortex-m4")
    rows = report_data(result, get_target("cortex-m4"))["kernels"]
    chain = next(r for r in rows if r["poly_fused"])
    convs = [s for s in chain["layers"] if "Conv2D" in s]
    assert len(convs) >= 2 and any("add" in s for s in chain["layers"])     # both convs and the residual add


def test_inplace_colour_on_simd_target(kws_m4):
    """On cortex-m4 the in-place convs have variant arm_dsp: the colour must follow the
    memory plan's in-place choice, not the variant name."""
    rows = report_data(kws_m4, get_target("cortex-m4"))["kernels"]
    assert rows[0]["variant"] == "arm_dsp" and rows[0]["inplace"].startswith("conv_offset")   # input at its output's end
    assert [point_kind(r) for r in rows[:3]] == ["inplace"] * 3
    assert point_kind(rows[-1]) == "layer"


def test_plots_have_legends_and_named_kernels(tmp_path, capsys):
    if os.environ.get("CI") != "true":         # in CI matplotlib is installed (the test extra)
        pytest.importorskip("matplotlib")
    path = shared_or_skip(*KWS)
    assert main(["report", str(path), "--target", "cortex-m4", "-o", str(tmp_path)]) == 0
    capsys.readouterr()
    plan = (tmp_path / "memory_plan.svg").read_text()
    roof = (tmp_path / "roofline.svg").read_text()
    for svg in (plan, roof):
        ET.fromstring(svg)                        # well-formed
        assert 'id="legend_1"' in svg            # matplotlib's legend group
    for label in ("model input", "activation", "model output", "kernel scratch", "in-place cluster (shared offset)",
                  "live bytes per kernel", "k1 depthwise_conv_2d_1"):
        assert label in plan, label
    for label in ("roof: min(2 MACs/cycle, intensity x 4 SRAM B/cycle)", "in-place kernel", "layer kernel",
                  "k10 fully_connected_11"):
        assert label in roof, label
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["kernels"][1]["layers"] == ["depthwise_conv_2d_1"] and data["measured"] is False


def test_json_output(capsys):
    path = shared_or_skip(*KWS)
    assert main(["report", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kernel_count"] == len(data["kernels"]) == 12
    assert data["macs"] == sum(r["macs"] for r in data["kernels"])


def test_without_matplotlib_one_line_hint(tmp_path, capsys, monkeypatch):
    from tinyfuse.report import plots
    monkeypatch.setattr(plots, "available", lambda: False)
    assert main(["report", str(shared_or_skip(*KWS)), "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("plots need matplotlib: pip install tinyfuse[plots]") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tinyfuse-files.json", "network_report.txt", "report.json"]


def test_compile_report_prints_end_not_the_sentinel(tmp_path, capsys):
    assert main(["compile", str(shared_or_skip(*KWS)), "-o", str(tmp_path / "out"), "--report"]) == 0
    out = capsys.readouterr().out
    assert "1000000000" not in out and re.search(r"^t12 .* 11 +end$", out, re.M)
