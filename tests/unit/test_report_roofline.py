"""report: sparse kernels on the roofline with the MACs they perform (their nonzero weights: the nominal
count put pruned kernels above the roof), kernel labels that do not overlap, and the text tables saved
as network_report.txt beside report.json."""
from __future__ import annotations

import itertools
import os

import numpy as np
import pytest

from tinyfuse.cli import main
from tinyfuse.driver import compile_model
from tinyfuse.report import report_data
from tinyfuse.targets import get_target
from tests.builders.sparse_models import prune_module, pruned_tflite
from tests.conftest import shared_or_skip


def test_sparse_kernels_count_their_nonzero_macs():
    """Pruned KWS (90% of every weight tensor zero): each sparse kernel's nonzero_macs is its MACs x
    the nonzero fraction of its layer's weight bytes in the .tflite (read with the tflite package)."""
    data = pruned_tflite(shared_or_skip("models", "tflite", "kws_ref_model.tflite").read_bytes(), "90", None)
    density = [np.count_nonzero(np.frombuffer(data, np.int8, n, start)) / n
               for _, _, start, n in prune_module()._weight_buffers(data)]
    rows = report_data(compile_model(data), get_target("host"))["kernels"]
    layered = [r for r in rows if r["layers"][0].startswith(("conv_2d", "depthwise_conv_2d", "fully_connected"))]
    assert len(layered) == len(density) == 10
    sparse = [r for r in layered if "sparse" in r["kind"]]
    assert len(sparse) >= 5
    for r, d in zip(layered, density):
        want = round(r["macs"] * d) if r in sparse else r["macs"]
        assert r["nonzero_macs"] == want and (r not in sparse or d < 0.2), (r["kernel"], r["nonzero_macs"], want)
    from tinyfuse.report.plots import roofline_points
    for r, x, y in roofline_points(rows)[0]:
        assert x == pytest.approx(r["nonzero_macs"] / r["bytes"]) and y == pytest.approx(r["nonzero_macs"] /
                                                                                          r["instructions"])


def _label_boxes(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Annotation, Text
    renderer = FigureCanvasAgg(fig).get_renderer()
    anns = [t for t in fig.axes[0].texts if isinstance(t, Annotation)]
    for a in anns:
        a.update_positions(renderer)
    return anns, [Text.get_window_extent(a, renderer) for a in anns]


@pytest.mark.parametrize("model", [("onnx", "mobilenetv2_035_96_qdq.onnx"), ("onnx", "resnet10_w16_64_qdq.onnx")])
def test_roofline_labels_do_not_overlap(model):
    """Every kernel's label is drawn where no other label is (before: 35 overlapping pairs on
    MobileNetV2-0.35, labels alternately above and below each point), or named in the key."""
    if os.environ.get("CI") != "true":
        pytest.importorskip("matplotlib")
    from tinyfuse.report.plots import roofline_figure
    data = report_data(compile_model(shared_or_skip("models", *model), target="cortex-m4"), get_target("cortex-m4"))
    fig = roofline_figure(data, data["kernels"])
    anns, boxes = _label_boxes(fig)
    assert [(i, j) for (i, a), (j, b) in itertools.combinations(enumerate(boxes), 2) if a.overlaps(b)] == []
    key = fig.axes[0].texts[-1].get_text()
    drawn = {k for a in anns for k in a.get_text().split(",")}
    unplaced = {k for line in key.split("no free place):")[1:] for k in line.replace("\n", ",").split(",") if k}
    assert drawn | unplaced == {f"k{r['index']}" for r in data["kernels"] if r["macs"]}
    assert len(drawn) >= 0.9 * len(drawn | unplaced)


def test_network_report_txt_beside_report_json(tmp_path, capsys):
    path = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    assert main(["report", str(path), "--target", "cortex-m4", "-o", str(tmp_path), "--plot-format", "png"]) == 0
    out = capsys.readouterr().out
    text = (tmp_path / "network_report.txt").read_text()
    assert (tmp_path / "report.json").is_file() and text.startswith("model kws_ref_model for cortex-m4: 12 kernels")
    assert out.startswith(text.rstrip("\n")) and "depthwise_conv_2d_7" in text
