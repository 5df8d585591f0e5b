"""Tuning records know the compile options they were measured under (cost.records.build_options): a
compile with other options than the tuning run is refused with one line that says why, one with the
same options builds the recorded choice, and records written before options were recorded read as
measured under the defaults."""
from __future__ import annotations

import pytest

from tinyfuse.cost.records import TuningRecords, build_options, options_text, select
from tinyfuse.errors import TinyfuseError

H, T = "abc123", "cortex-m4"
REF = build_options(kernels="ref")


def _build(key, instr, arena, options=None, changes=()):
    rec = {"kind": "model", "model_hash": H, "target": T, "config_key": key, "instructions": instr,
           "arena_bytes": arena, "ram_stack": 100, "changes": list(changes), "flash_bytes": 1000,
           "config": {"global": {"order": "ir" if key != "d" else "memory"}}}
    return rec | ({"options": options} if options is not None else {})


def _choice(key, options=None):
    rec = {"kind": "choice", "model_hash": H, "target": T, "config": {"global": {"order": "ir"}}, "config_key": key}
    return rec | ({"options": options} if options is not None else {})


def test_a_record_measured_under_other_options_is_refused_in_one_line():
    recs = TuningRecords([_build("d", 100, 800, REF), _build("x", 90, 800, REF, ["order ir"]), _choice("x", REF)],
                         source="kws.jsonl")
    assert recs.config_for(H, T, options=REF)["global"]["order"] == "ir"       # same options: the choice
    with pytest.raises(TinyfuseError) as e:
        recs.config_for(H, T, options=build_options())                          # the default options
    msg = str(e.value)
    assert "\n" not in msg and "measured under --kernels ref" in msg and "the default options" in msg
    with pytest.raises(TinyfuseError, match="measured under --kernels ref"):
        recs.config_for(H, T, ram_limit=10_000, options=build_options(rounding="single"))


def test_records_without_options_read_as_the_defaults():
    old = TuningRecords([_build("d", 100, 800), _build("x", 90, 800, changes=["order ir"]), _choice("x")])
    assert old.config_for(H, T, options=build_options())["global"]["order"] == "ir"
    with pytest.raises(TinyfuseError, match="measured under the default options, this compile asks for --kernels ref"):
        old.config_for(H, T, options=REF)


def test_one_selection_for_the_choice_and_the_limits():
    builds = [_build("d", 100, 800), _build("a", 80, 900, changes=["x"]), _build("b", 90, 800, changes=["y"])]
    assert select(builds, 900).config_key == "b"          # at the default's RAM (900 B with the stack)
    assert select(builds, 1000).config_key == "a"
    with pytest.raises(TinyfuseError, match="smallest reachable is arena 800 B"):
        select(builds, 500)
    assert options_text(build_options(kernels="ref", disabled_passes=("poly_fuse",))) == "--kernels ref"


def test_records_are_typed_and_read_every_earlier_line():
    """JSON lines become BuildRecord / ChoiceRecord / KernelRecord / FailedRecord; fields a record does not
    know are kept and written back; an earlier choice with only global "knobs" reads as that configuration
    under the default options; a line of another kind is refused."""
    from tinyfuse.cost.knobs import config_key
    from tinyfuse.cost.records import BUILD_OPTION_DEFAULTS, BuildRecord, ChoiceRecord, KernelRecord, parse_record
    line = _build("d", 100, 800) | {"seconds": 3.5, "worker": "w1"}
    rec = parse_record(line)
    assert isinstance(rec, BuildRecord) and rec.ram == 900 and rec.options == BUILD_OPTION_DEFAULTS
    assert rec.to_json()["seconds"] == 3.5 and rec.to_json()["worker"] == "w1" and rec.to_json()["kind"] == "model"
    old = parse_record({"kind": "choice", "model_hash": H, "target": T, "knobs": {"poly_fuse": False}})
    assert isinstance(old, ChoiceRecord) and old.config == {"global": {"poly_fuse": False}}
    assert old.config_key == config_key({"global": {"poly_fuse": False}})
    k = parse_record({"kind": "kernel", "key": "k1", "variant": "arm_dsp", "instructions": 7})
    assert isinstance(k, KernelRecord) and k.instructions == 7 and k.extra == {"variant": "arm_dsp"}
    with pytest.raises(TinyfuseError, match="not a tuning record"):
        parse_record({"my": "data"})
