"""Several models compiled into one ``-o DIR`` (codegen/output.py, the manifest's ``"files_by_model"``): none
removes another's files, shared headers stay while any model lists them, a user's file is never
touched, and recompiling the first model after the second is no refusal. Pure Python (no C compiler:
tests/c/test_output_dir_build.py links both models into one program)."""
from __future__ import annotations

import json

import pytest

from tinyfuse.codegen.output import previous_by_model, write_outputs
from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tests.builders.outdir_models import outdir_model

MODEL = {"kws": "kws.c kws.cmake kws.h kws.mk kws_weights.c".split(),
         "vww": "vww.c vww.cmake vww.h vww.mk vww_weights.c".split()}
ARM_HEADERS = ["tinyfuse_requant_arm.h", "tinyfuse_simd.h"]     # an arm_dsp build's extra headers


@pytest.fixture(scope="module")
def built():
    """(name, target) -> CompileResult for kws/vww on host and cortex-m4 (arm_dsp: + the SIMD headers)."""
    return {(n, t): compile_model(outdir_model(n), target=t, name=n) for n in MODEL for t in ("host", "cortex-m4")}


def names(d) -> list[str]:
    return sorted(p.name for p in d.iterdir())


def manifest(d) -> dict:
    return json.loads((d / "metadata.json").read_text())


def test_two_models_side_by_side(tmp_path, built):
    """kws then vww into one DIR: both models' files stay, the manifest remembers both, and describes
    the last compile (model, files) as before."""
    d = tmp_path / "src_model"
    d.mkdir()
    (d / "main.c").write_text("int main(void) { return 0; }\n")
    built["kws", "host"].write(d)
    built["vww", "host"].write(d)
    shared = ["metadata.json", "tinyfuse_quant.h"]
    assert names(d) == sorted(MODEL["kws"] + MODEL["vww"] + shared + ["main.c"])
    meta = manifest(d)
    assert meta["model"] == "vww" and meta["files"] == sorted(MODEL["vww"] + shared)
    assert meta["files_by_model"] == {"kws": sorted(MODEL["kws"] + shared), "vww": sorted(MODEL["vww"] + shared)}
    assert (d / "main.c").read_text() == "int main(void) { return 0; }\n"
    for n in MODEL:                                # every file as that model's compile wrote it
        for f in MODEL[n]:
            assert (d / f).read_text() == built[n, "host"].files[f]
    del meta["files_by_model"]
    assert json.dumps(meta, indent=1) + "\n" == built["vww", "host"].files["metadata.json"]


def test_fewer_files_remove_only_what_no_model_lists(tmp_path, built):
    """kws and vww for cortex-m4 (both list the SIMD headers), then kws for host: kws no longer lists
    them but vww does, so they stay; vww for host too: now nobody lists them and they go."""
    d = tmp_path / "o"
    d.mkdir()
    (d / "notes.txt").write_text("mine")
    built["kws", "cortex-m4"].write(d)
    built["vww", "cortex-m4"].write(d)
    assert set(ARM_HEADERS) <= set(names(d))
    built["kws", "host"].write(d)
    assert set(ARM_HEADERS) <= set(names(d))
    by_model = manifest(d)["files_by_model"]
    assert not set(ARM_HEADERS) & set(by_model["kws"]) and set(ARM_HEADERS) <= set(by_model["vww"])
    built["vww", "host"].write(d)
    assert names(d) == sorted(MODEL["kws"] + MODEL["vww"] + ["metadata.json", "notes.txt", "tinyfuse_quant.h"])
    assert (d / "notes.txt").read_text() == "mine"


def test_stale_files_of_the_same_model_still_go(tmp_path, built):
    """kws for cortex-m4 then for host, alone in DIR: its SIMD headers are removed (as before)."""
    d = tmp_path / "o"
    built["kws", "cortex-m4"].write(d)
    built["kws", "host"].write(d)
    assert names(d) == sorted(MODEL["kws"] + ["metadata.json", "tinyfuse_quant.h"])
    assert manifest(d)["files_by_model"] == {"kws": names(d)}


def test_recompile_the_first_after_the_second(tmp_path, built):
    """kws, vww, kws again (another target): no 'tinyfuse did not write it' refusal, vww untouched."""
    d = tmp_path / "o"
    built["kws", "host"].write(d)
    built["vww", "host"].write(d)
    vww = {f: (d / f).read_text() for f in MODEL["vww"]}
    built["kws", "cortex-m4"].write(d)
    assert {f: (d / f).read_text() for f in MODEL["vww"]} == vww
    assert (d / "kws.c").read_text() == built["kws", "cortex-m4"].files["kws.c"]
    assert manifest(d)["model"] == "kws" and sorted(manifest(d)["files_by_model"]) == ["kws", "vww"]


def test_a_users_file_is_still_refused(tmp_path, built):
    """A file no model lists, with other content, stops the compile before anything is written."""
    d = tmp_path / "o"
    built["kws", "host"].write(d)
    (d / "vww.h").write_text("/* mine */\n")
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    with pytest.raises(TinyfuseError, match="vww.h exists and tinyfuse did not write it"):
        built["vww", "host"].write(d)
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before


def test_an_older_manifest_counts_as_its_model(tmp_path, built):
    """A metadata.json without "files_by_model" (an earlier tinyfuse) is {its model: its files}: a compile of
    another model keeps them; the same model's recompile removes its stale ones."""
    d = tmp_path / "o"
    built["kws", "cortex-m4"].write(d)
    meta = manifest(d)
    del meta["files_by_model"]
    (d / "metadata.json").write_text(json.dumps(meta))
    assert previous_by_model(d) == {"kws": set(meta["files"])}
    built["vww", "host"].write(d)
    assert set(MODEL["kws"] + ARM_HEADERS) <= set(names(d))
    built["kws", "host"].write(d)
    built["vww", "cortex-m4"].write(d)
    built["vww", "host"].write(d)
    assert not set(ARM_HEADERS) & set(names(d))


def test_a_removed_file_leaves_the_other_models_list(tmp_path, built):
    """Files of another model deleted by hand drop out of its list, so a user's later file of that
    name is protected again."""
    d = tmp_path / "o"
    built["kws", "host"].write(d)
    for f in MODEL["kws"]:
        (d / f).unlink()
    built["vww", "host"].write(d)
    assert manifest(d)["files_by_model"]["kws"] == ["metadata.json", "tinyfuse_quant.h"]
    (d / "kws.c").write_text("/* mine */\n")
    with pytest.raises(TinyfuseError, match="kws.c exists"):
        built["kws", "host"].write(d)


def test_forged_lists_reach_nothing_outside(tmp_path):
    """Only plain file names of a tinyfuse manifest's "files_by_model" count."""
    d, outside = tmp_path / "o", tmp_path / "outside.txt"
    d.mkdir()
    outside.write_text("keep")
    (d / "metadata.json").write_text(json.dumps({"tinyfuse": "0", "model": "m", "files": [],
                                                 "files_by_model": {"m": ["../outside.txt", "/etc/x", ".", 3]}}))
    write_outputs({"metadata.json": json.dumps({"tinyfuse": "0", "model": "m", "files": ["metadata.json"]})}, d)
    assert outside.read_text() == "keep" and names(d) == ["metadata.json"]
