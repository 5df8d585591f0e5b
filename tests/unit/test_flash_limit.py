"""--flash-limit picks, from measured builds (tuning records), the fastest whose model flash (code +
weights) fits, at no more RAM than the default build (or within --ram-limit); none fits: an error
naming the least flash reachable. Hand-written records, no qemu."""
import pytest

from tinyfuse.cost.knobs import config_key, normalize
from tinyfuse.cost.records import TuningRecords
from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tests.builders import tiny_mlp


def _build(name, scratch, arena, flash, instructions):
    config = normalize({} if scratch is None else {"global": {"scratch_bytes": scratch}})
    return name, {"kind": "model", "model_hash": "h", "target": "cortex-m4", "config": config,
                  "config_key": config_key(config), "arena_bytes": arena, "ram_stack": 100,
                  "flash_bytes": flash, "instructions": instructions}


BUILDS = dict([_build("default", None, 900, 5000, 100), _build("fast", 1, 900, 9000, 80),
               _build("small_flash", 2, 900, 4000, 120), _build("big_ram", 3, 1900, 4000, 70)])


def _pick(**limits) -> str:
    cfg = TuningRecords(list(BUILDS.values())).config_for("h", "cortex-m4", **limits)
    return next(n for n, r in BUILDS.items() if r["config_key"] == config_key(cfg))


def test_fastest_within_flash_at_the_default_ram():
    assert _pick(flash_limit=6000) == "default"
    assert _pick(flash_limit=4500) == "small_flash"
    assert _pick(flash_limit=9000) == "fast"
    assert _pick(flash_limit=4000, ram_limit=2000) == "big_ram"
    assert _pick(ram_limit=2000) == "big_ram"


def test_nothing_fits_names_the_least_flash():
    with pytest.raises(TinyfuseError, match="least model flash reachable there is 4000 B"):
        _pick(flash_limit=3000)


def test_flash_limit_needs_records(tmp_path):
    path = tiny_mlp(tmp_path / "mlp.onnx")
    with pytest.raises(TinyfuseError, match="--flash-limit picks from measured builds"):
        compile_model(path, target="cortex-m4", flash_limit=10000)
