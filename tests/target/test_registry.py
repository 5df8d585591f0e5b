"""Targets as data: the registry, the unknown-target error, placement options (no qemu needed)."""
import subprocess

import pytest

import tinyfuse
from tinyfuse.cli import main as cli_main
from tinyfuse.errors import TinyfuseError
from tinyfuse.target import TARGETS, Placement, get_target
from tests.unit.test_passes import build_dscnn

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


def test_compile_for_a_target_and_placement_options(tmp_path):
    model = build_dscnn(tmp_path)
    r = tinyfuse.compile(model, target="cortex-m4", name="kws", weights_section=".model_weights",
                         arena_section=".model_arena", code_section=".text.kws", align=32)
    assert r.target == "cortex-m4" and r.placement == Placement(".text.kws", ".model_weights", ".model_arena", 32)
    assert '__attribute__((section(".model_weights"), aligned(32)))' in r.files["kws_weights.c"]
    assert 'section(".text.kws")' in r.files["kws.c"] and "KWS_KERNEL_ATTR" in r.files["kws.c"]
    assert '#define KWS_ARENA_SECTION ".model_arena"' in r.files["kws.h"] and "#define KWS_ALIGN 32" in r.files["kws.h"]
    assert "KWS_WEIGHTS_SECTION := .model_weights" in r.files["kws.mk"]
    assert "set(KWS_ARENA_SECTION .model_arena)" in r.files["kws.cmake"]
    # the attributes compile cleanly on the host, and land in the named ELF sections
    src = r.write(tmp_path / "out")
    main = tmp_path / "main.c"
    main.write_text('#include "kws.h"\nstatic unsigned char arena[KWS_ARENA_SIZE] KWS_ARENA_ATTR;\n'
                    "int main(void) { return kws_run(arena); }\n")
    exe = tmp_path / "app"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{src}", str(main), str(src / "kws.c"),
                    str(src / "kws_weights.c"), "-lm", "-o", str(exe)], check=True)
    headers = subprocess.run(["objdump", "-h", str(exe)], capture_output=True, text=True, check=True).stdout
    for section in (".model_weights", ".model_arena"):   # .text.kws merges into .text on the host
        assert section in headers
    assert subprocess.run([str(exe)]).returncode == 0
