"""Tuning-records files as a stranger's disk has them: a binary file or a JSON line that is not an object
is one clear error; the unfinished last line a killed ``tinyfuse tune`` leaves is skipped with a warning,
and the next run cuts it before appending (the file stays resumable; a file that is not records is never
cut)."""
import json

import pytest

from tinyfuse.cost.records import BUILD_OPTION_DEFAULTS, load_records
from tinyfuse.errors import TinyfuseError
from tinyfuse.tune import _writer

REC = {"kind": "choice", "model_hash": "h", "target": "cortex-m4", "config": {}, "config_key": "k"}


def test_not_a_records_file(tmp_path):
    (tmp_path / "bin.jsonl").write_bytes(b"\x08\xb4\x00\xff onnx")
    with pytest.raises(TinyfuseError, match="not a tuning-records file"):
        load_records(tmp_path / "bin.jsonl")
    (tmp_path / "list.jsonl").write_text("[1, 2, 3]\n")
    with pytest.raises(TinyfuseError, match=r"list.jsonl:1: not a tuning record"):
        load_records(tmp_path / "list.jsonl")
    (tmp_path / "mid.jsonl").write_text(json.dumps(REC) + "\n{oops\n" + json.dumps(REC) + "\n")
    with pytest.raises(TinyfuseError, match=r"mid.jsonl:2: not JSON"):
        load_records(tmp_path / "mid.jsonl")


def test_unfinished_last_line_is_skipped_and_ended(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(REC) + "\n" + json.dumps(REC)[:25])        # killed mid-write
    with pytest.warns(UserWarning, match=r"r.jsonl:2: an unfinished last record"):
        assert [r.to_json() for r in load_records(path).records] == [REC | {"model": None, "options": BUILD_OPTION_DEFAULTS,
                                                                             "changes": []}]
    _writer(path)(REC)                                                   # the next run drops the stub, appends
    assert [json.loads(x) for x in path.read_text().splitlines()] == [REC, REC]
    other = tmp_path / "notes.txt"                                       # not a records file: never cut
    other.write_text("my notes\nno newline at the end")
    _writer(other)(REC)
    assert other.read_text().startswith("my notes\nno newline at the end")
