"""Targets as data: the registry, the unknown-target error, bad placement options (pure Python; the
placement attributes built with gcc: tests/c/test_placement.py)."""

import pytest

from tinyfuse.cli import main as cli_main
from tinyfuse.errors import TinyfuseError
from tinyfuse.targets import TARGETS, Placement, get_target

QEMU_TARGETS = ["cortex-m0", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55", "rv32imac"]


def test_registry_names_boards_and_features():
    assert list(TARGETS) == ["host", *QEMU_TARGETS]
    assert [b.machine for b in get_target("cortex-m0").boards] == ["microbit", "mps2-an385"]
    machines = {t: get_target(t).machine for t in QEMU_TARGETS[1:]}
    assert machines == {"cortex-m3": "mps2-an385", "cortex-m4": "mps2-an386", "cortex-m7": "mps2-an500",
                        "cortex-m33": "mps2-an505", "cortex-m55": "mps3-an547", "rv32imac": "virt"}
    assert get_target("rv32imac").qemu[0] == "qemu-system-riscv32" and "-bios" in get_target("rv32imac").qemu
    m0, m4, m55 = get_target("cortex-m0"), get_target("cortex-m4"), get_target("cortex-m55")
    assert (m0.flash_bytes, m0.ram_bytes) == (256 * 1024, 16 * 1024)
    assert not (m0.dsp or m0.fpu or m0.mve) and m4.dsp and m4.fpu and not m4.mve and m55.mve
    assert get_target("host").is_host and get_target("host").board is None
    for t in QEMU_TARGETS:
        tgt = get_target(t)
        assert tgt.scratch_bytes > 0 and tgt.linker_script.endswith(".ld") and tgt.flash_bytes and tgt.ram_bytes
    with pytest.raises(AttributeError):
        m4.dsp = False  # frozen


def test_unknown_target_lists_the_names(capsys):
    with pytest.raises(TinyfuseError, match="unknown target 'cortex-m99'; available: host, cortex-m0, .*rv32imac"):
        get_target("cortex-m99")
    assert cli_main(["report", "x.onnx", "--target", "cortex-m99"]) == 2   # argparse choices: a usage error
    err = capsys.readouterr().err
    assert "invalid choice: 'cortex-m99'" in err and "'host', 'cortex-m0'" in err


@pytest.mark.parametrize("bad", [dict(align=3), dict(align=2), dict(weights_section='a"b'), dict(arena_section="")])
def test_placement_rejects_bad_options(bad):
    with pytest.raises(TinyfuseError):
        Placement(**bad)
