"""Sizes and symbols of ELF files through pyelftools: the figures ``nm -S``, ``objdump -h`` and
berkeley ``size`` print, read from the section and symbol tables instead of parsing tool text
(no target binutils needed, no locale or format differences between binutils versions).

The definitions follow binutils: a section is allocated when it has SHF_ALLOC, loaded from the image
when it also has contents (not SHT_NOBITS: objdump's LOAD flag); berkeley ``size`` counts an
allocated section as text when it is executable or read-only, else as data when it has contents,
else as bss (binutils/size.c, berkeley_sum).
"""
from __future__ import annotations

from pathlib import Path

from ..errors import TinyfuseError

SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4


def _open(path: str | Path):
    try:
        from elftools.elf.elffile import ELFFile
    except ImportError:  # pragma: no cover - a declared dependency
        raise TinyfuseError("reading ELF files needs pyelftools: pip install pyelftools") from None
    try:
        f = open(path, "rb")
        return f, ELFFile(f)
    except (OSError, Exception) as e:
        raise TinyfuseError(f"{path}: not a readable ELF file ({type(e).__name__}: {e})") from None


def symbols(path: str | Path) -> dict[str, tuple[int, int]]:
    """Defined symbols with a non-zero size (``nm -S --defined-only``): name -> (address without the
    Thumb bit, size in bytes). The first symbol of a name in the symbol table wins."""
    f, elf = _open(path)
    with f:
        out: dict[str, tuple[int, int]] = {}
        for table in (s for s in elf.iter_sections() if s["sh_type"] in ("SHT_SYMTAB", "SHT_DYNSYM")):
            for sym in table.iter_symbols():
                if sym.name and sym["st_size"] and sym["st_shndx"] != "SHN_UNDEF":
                    out.setdefault(sym.name, (sym["st_value"] & ~1, sym["st_size"]))
        return out


def sections(path: str | Path) -> dict[str, tuple[int, int, bool]]:
    """Allocated sections (``objdump -h``, ALLOC flag): name -> (size, address, loaded from the image)."""
    f, elf = _open(path)
    with f:
        return {s.name: (s["sh_size"], s["sh_addr"], s["sh_type"] != "SHT_NOBITS")
                for s in elf.iter_sections() if s["sh_flags"] & SHF_ALLOC}


def data_bss(paths) -> int:
    """Bytes of .data plus .bss of the object files ``paths`` (berkeley ``size``: allocated sections
    neither executable nor read-only)."""
    total = 0
    for path in paths:
        f, elf = _open(path)
        with f:
            total += sum(s["sh_size"] for s in elf.iter_sections()
                         if s["sh_flags"] & SHF_ALLOC and s["sh_flags"] & SHF_WRITE
                         and not s["sh_flags"] & SHF_EXECINSTR)
    return total
