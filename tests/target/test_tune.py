"""tinyfuse tune on a tiny model under qemu: records written, compile with them deterministic."""
import json

from tinyfuse.cli import main as cli_main
from tinyfuse.driver import compile_model
from tinyfuse.tune import load_records, tune
from tests.target.conftest import require_tools
from tests.builders import tiny_mlp


def test_tune_tiny_model_writes_records_and_compiles_with_them(tmp_path, capsys):
    require_tools("cortex-m4")
    path = tiny_mlp(tmp_path / "tiny.onnx")
    rec = tmp_path / "tiny.jsonl"
    s = tune(path, "cortex-m4", trials=3, records_path=rec, jobs=1, progress=False)
    assert s["before"] > 0 and s["trials"] >= 2
    assert s["after"] <= s["before"]
    records = load_records(rec).records
    kinds = {r["kind"] for r in records}
    assert kinds == {"kernel", "model", "choice"}
    kernels = [r for r in records if r["kind"] == "kernel"]
    assert all(r["instructions"] > 0 and len(r["sig"]) == 16 for r in kernels)
    # exact counts: the same signature and knob measured twice gives the same figure
    by_key = {}
    for r in kernels:
        by_key.setdefault(r["key"], set()).add(r["instructions"])
    assert all(len(v) == 1 for v in by_key.values())
    assert (tmp_path / "tiny.jsonl.model.json").exists()
    a = compile_model(path, target="cortex-m4", tuning_records=rec)
    b = compile_model(path, target="cortex-m4", tuning_records=str(rec))
    assert a.files == b.files
    assert cli_main(["bench", str(path), "--target", "cortex-m4", "--json", "--tuning-records", str(rec)]) == 0
    assert json.loads(capsys.readouterr().out)["instructions"] == s["after"]
