"""The work directory a user names with ``run --keep DIR`` or ``bench --keep DIR``.

Before a build writes anything there, :func:`keep_dir` claims every name the build writes directly
into DIR (``tinyfuse.userdir.claim``: a name that exists and tinyfuse did not write stops the command
with one error line). Folders a build writes (``src``, ``obj``, ``run``, ``bench``, ``wcet``) are
tinyfuse's as a whole.
"""
from __future__ import annotations

from pathlib import Path

from ..userdir import claim
from .batch import host_batch_files
from .host import host_files
from .qemu import TARGET_FILES

BENCH_FILES = (*TARGET_FILES, "bench", "wcet")   # bench's counters (bench/), --wcet's batch build (wcet/)


def build_files(result, target, command: str, frames: bool = False) -> list[str]:
    """The names ``command`` (``"run"`` or ``"bench"``) writes into its work directory for ``result`` on
    ``target``; ``frames``: ``run``'s frame-by-frame build (a stateful model, ``--frames N``)."""
    if command == "bench":
        return list(BENCH_FILES)
    if not target.is_host:
        return list(TARGET_FILES)
    return host_batch_files(result) if frames else host_files(result)


def keep_dir(keep: str | None, result, target, command: str, frames: bool = False) -> Path | None:
    """``keep`` as an absolute Path after claiming :func:`build_files` in it (absolute: the harness runs
    ``DIR/model``, which for ``--keep .`` would otherwise be looked up on PATH); None when ``keep`` is
    None (a temp dir)."""
    if keep is None:
        return None
    return claim(keep, build_files(result, target, command, frames), "--keep DIR").resolve()


__all__ = ["BENCH_FILES", "build_files", "keep_dir"]
