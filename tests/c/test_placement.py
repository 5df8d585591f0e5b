"""Placement options (sections, alignment) land in the generated sources and, built with gcc, in the
named ELF sections of a host executable."""
import subprocess

import tinyfuse
from tinyfuse.targets import Placement
from tests.builders import build_dscnn


def test_compile_for_a_target_and_placement_options(tmp_path):
    model = build_dscnn(tmp_path)
    r = tinyfuse.compile(model, target="cortex-m4", name="kws", weights_section=".model_weights",
                         arena_section=".model_arena", code_section=".text.kws", align=32,
                         kernels="ref")    # portable kernels: the host gcc below builds them (no arm_acle.h)
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
