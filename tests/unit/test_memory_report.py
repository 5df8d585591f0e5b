"""tinyfuse report: fused groups, memory plan and roofline tables, well-formed SVGs and JSON."""
import json
import xml.etree.ElementTree as ET

from tinyfuse.cli import main
from tests.conftest import shared_or_skip


def test_report_writes_tables_and_svgs(tmp_path, capsys):
    path = shared_or_skip("models", "onnx", "pretrainedResnet_quant.onnx")
    assert main(["report", str(path), "--target", "cortex-m4", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fused groups (poly_fuse):" in out and "line_buffer" in out and "polyfused" in out
    assert "roofline: peak 2 MACs/cycle" in out and "lower bound" in out and "live bytes per kernel" in out
    for name in ("memory_plan.svg", "roofline.svg"):
        root = ET.fromstring((tmp_path / name).read_text())
        assert root.tag.endswith("svg") and sum(1 for _ in root.iter()) > 50   # matplotlib nests groups
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["arena_bytes"] >= data["lower_bound"] and data["fused"] and data["kernels"]
    assert {b["cluster"] for b in data["buffers"]} - {""}           # in-place clusters are reported


def test_report_without_poly_fuse_and_scratch_budget(capsys):
    path = shared_or_skip("models", "onnx", "pretrainedResnet_quant.onnx")
    assert main(["report", str(path), "--disable-pass", "poly_fuse"]) == 0
    assert "none (no fusion lowers the arena peak, or --disable-pass poly_fuse)" in capsys.readouterr().out
    assert main(["report", str(path), "--scratch-bytes", "512"]) == 0     # rows no longer fit: tiles or nothing
    assert "line_buffer" not in capsys.readouterr().out
