"""Helpers for the qemu tests: a missing cross tool skips outside CI and fails in CI; a bare image
(a C main + the board start-up, no model) built and run on a target's first board."""
from __future__ import annotations

import subprocess
from pathlib import Path


from tinyfuse.harness.qemu import INSTALL_HINT, missing_tools
from tinyfuse.targets import BOARDS_DIR, RUNTIME_DIR, get_target
from tests.conftest import skip_or_fail


def require_tools(target: str, *extra: str) -> None:
    """Skip (outside CI) or fail (CI=true) when ``target``'s compiler, binutils or qemu is missing."""
    import shutil
    missing = missing_tools(target) + [t for t in extra if shutil.which(t) is None]
    if missing:
        skip_or_fail(f"{target} needs {', '.join(missing)}; install: {INSTALL_HINT}")


def run_bare(target: str, main_c: str, workdir: Path, timeout: float = 60,
             sources: tuple[Path, ...] = (), include: Path | None = None) -> subprocess.CompletedProcess:
    """Build ``main_c`` with runtime_c (bench helpers, semihosting) and the board start-up of
    ``target``'s first board, run it under qemu; the finished process (guest text on stderr).
    ``sources``: more C files (a compiled model's), ``include``: one more header directory."""
    t = get_target(target)
    b = t.board
    main, elf = workdir / "main.c", workdir / "bare.elf"
    main.write_text(main_c)
    cmd = [t.cc, *t.cflags, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{RUNTIME_DIR / 'include'}",
           *([f"-I{include}"] if include else []), str(main), *map(str, sources),
           str(RUNTIME_DIR / "src" / "tf_bench.c"), *(str(BOARDS_DIR / s) for s in b.sources),
           *t.ldflags, *(f"-L{BOARDS_DIR / d}" for d in b.lib_dirs), "-T", str(BOARDS_DIR / b.linker_script),
           "-Wl,--no-warn-rwx-segments", "-lm", "-o", str(elf)]
    subprocess.run(cmd, check=True)
    return subprocess.run([*b.qemu, "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)],
                          capture_output=True, text=True, timeout=timeout)
