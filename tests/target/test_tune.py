"""tinyfuse tune on a tiny int8 model under qemu, candidates as Dask tasks on a 2-worker LocalCluster:
records streamed, a rerun skips the measured builds, --ram-limit picks from the records (or names the
smallest arena reachable), compiling from the same records is deterministic."""
import json

import onnx
import pytest

from tinyfuse.cli import main as cli_main
from tinyfuse.cost.records import BuildRecord, KernelRecord
from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.tune import load_records, tune
from tests.builders.int8_models import qdq_chain
from tests.target.conftest import require_tools

BLOCK = [dict(cout=16, k=1, s=1, dw=False, relu=True), dict(cout=16, k=3, s=1, dw=True, relu=True),
         dict(cout=8, k=1, s=1, dw=False, relu=False)]


def test_tune_on_dask_resumes_and_ram_limit_picks_from_records(tmp_path, capsys):
    require_tools("cortex-m4")
    model, _ = qdq_chain((1, 8, 8, 8), BLOCK, seed=1)
    path = tmp_path / "block.onnx"
    onnx.save(model, path)
    rec = tmp_path / "block.jsonl"
    s = tune(path, "cortex-m4", trials=4, records_path=rec, workers=2, progress=False, out_dir=tmp_path / "out")
    assert (s["measured"], s["skipped"], s["workers"]) == (4, 0, 2)
    records = load_records(rec).records
    builds = [r for r in records if isinstance(r, BuildRecord)]
    assert len(builds) == 4 and len({r.config_key for r in builds}) == 4
    assert all(r.instructions > 0 and r.ram_stack > 0 for r in builds)
    kernels = [r for r in records if isinstance(r, KernelRecord)]
    assert kernels and all(r.implementation for r in kernels)      # each names what strategy.choose chose
    by_key = {}                      # exact counts: a kernel measured in two builds counts the same
    for r in kernels:
        by_key.setdefault(r.key, set()).add(r.instructions)
    assert all(len(v) == 1 for v in by_key.values())
    assert (tmp_path / "out" / "front.svg").read_text().lstrip().startswith("<?xml")
    assert s["chosen"]["instructions"] <= s["default"]["instructions"]

    again = tune(path, "cortex-m4", trials=4, records_path=rec, workers=2, progress=False)
    assert (again["measured"], again["skipped"]) == (0, 4)
    assert len([r for r in load_records(rec).records if isinstance(r, BuildRecord)]) == 4

    smallest = min(builds, key=lambda r: r.ram)
    with pytest.raises(TinyfuseError, match=f"smallest reachable is arena {smallest.arena_bytes} B"):
        compile_model(path, target="cortex-m4", tuning_records=rec, ram_limit=smallest.ram - 1)
    fastest = min(builds, key=lambda r: (r.instructions, r.ram, r.config_key))
    a = compile_model(path, target="cortex-m4", tuning_records=rec, ram_limit=10**6)
    b = compile_model(path, target="cortex-m4", tuning_records=str(rec), ram_limit=10**6)
    assert a.files == b.files and a.arena_bytes == fastest.arena_bytes
    capsys.readouterr()
    assert cli_main(["bench", str(path), "--target", "cortex-m4", "--json", "--tuning-records", str(rec),
                     "--ram-limit", "1M"]) == 0
    assert json.loads(capsys.readouterr().out)["instructions"] == fastest.instructions
    # run: the tuned target build against the oracle; its host reference build takes no records or limits
    assert cli_main(["run", str(path), "--target", "cortex-m4", "--tuning-records", str(rec), "--ram-limit", "1M",
                     "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["outputs_match"] and "host" not in err
    assert cli_main(["compile", str(path), "--target", "cortex-m4", "--tuning-records", str(rec),
                     "--ram-limit", str(smallest.ram - 1), "-o", str(tmp_path / "c")]) == 2
    assert "smallest reachable" in capsys.readouterr().err
