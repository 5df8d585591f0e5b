"""compiler/harness/elf.py (pyelftools) against the binutils it replaces: ``nm -S --defined-only``,
``objdump -h`` and berkeley ``size`` on a linked Cortex-M ELF and its object files (the oracle is the
binutils text output, parsed here as bench.py used to)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from tinyfuse.harness import elf

SOURCE = r"""
#include <stdint.h>
int counter = 3;                                  /* .data */
static float table[64];                           /* .bss */
const int8_t weights[300] = { 1, 2, 3 };         /* .rodata */
__attribute__((section(".tinyfuse_weights"))) const int32_t w2[17] = { 5 };
__attribute__((noinline)) float step(int i)
{
  table[i & 63] += (float)weights[i % 300] + (float)w2[i % 17];
  return table[i & 63];
}
int main(void) { float s = 0; for (int i = 0; i < 1000; ++i) s += step(i + counter); return (int)s; }
"""


def _cc() -> str:
    cc = shutil.which("arm-none-eabi-gcc")
    if cc is None:
        if os.environ.get("CI") == "true":
            pytest.fail("arm-none-eabi-gcc is missing in CI (apt install gcc-arm-none-eabi)")
        pytest.skip("arm-none-eabi-gcc not installed")
    return cc


def _tool(cc: str, name: str, *args) -> str:
    return subprocess.run([cc[: -len("gcc")] + name, *map(str, args)], capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    cc, d = _cc(), tmp_path_factory.mktemp("elf")
    (d / "m.c").write_text(SOURCE)
    flags = ["-mcpu=cortex-m4", "-mthumb", "-O2", "-std=c99"]
    subprocess.run([cc, *flags, "-c", d / "m.c", "-o", d / "m.o"], check=True)
    subprocess.run([cc, *flags, "--specs=nosys.specs", d / "m.o", "-o", d / "m.elf"], check=True)
    return cc, d


def test_symbols_equal_nm(built):
    cc, d = built
    want = {}
    for line in _tool(cc, "nm", "-S", "--defined-only", d / "m.elf").splitlines():
        parts = line.split()
        if len(parts) == 4:
            want.setdefault(parts[3], (int(parts[0], 16) & ~1, int(parts[1], 16)))
    got = elf.symbols(d / "m.elf")
    assert got == want
    assert got["step"][1] > 0 and got["weights"][1] == 300 and got["w2"][1] == 68


def test_sections_equal_objdump(built):
    cc, d = built
    want, lines = {}, _tool(cc, "objdump", "-h", d / "m.elf").splitlines()
    for head, flags in zip(lines, lines[1:]):
        m = re.match(r"\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s", head)
        if m and "ALLOC" in flags:
            want[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16), "LOAD" in flags)
    got = elf.sections(d / "m.elf")
    assert got == want
    assert got[".tinyfuse_weights"][0] == 68 and got[".bss"][2] is False


def test_data_bss_equals_size(built):
    cc, d = built
    (header, row) = _tool(cc, "size", d / "m.o").splitlines()[:2]
    assert header.split()[:3] == ["text", "data", "bss"]
    parts = row.split()
    assert elf.data_bss([d / "m.o"]) == int(parts[1]) + int(parts[2]) == 4 + 256
