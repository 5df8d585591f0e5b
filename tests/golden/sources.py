"""Refactoring guard: SHA-256 of every generated source file for every model in ../shared/models.

This is not an oracle of correctness (the oracles are onnxruntime, TFLM and the real-arithmetic
model); it proves that a change meant to keep the generated C byte-identical did so. After an
intended change of the generated C, regenerate with ``python -m tests.golden.sources --update``
and say in the commit which files changed and why.

Models that tinyfuse refuses are recorded by the first line of their error, so a model that starts
compiling (or fails differently) shows up too.
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT.parent / "shared" / "models"
GOLDEN = Path(__file__).with_name("sources.json")
# default kernels per target family: portable (host), Arm DSP (cortex-m4), Helium (cortex-m55)
TARGETS = ("host", "cortex-m4", "cortex-m55")


def model_paths() -> list[Path]:
    return sorted(p for p in MODELS.rglob("*") if p.suffix in (".onnx", ".tflite"))


@functools.lru_cache(maxsize=None)
def compiled(path: Path, target: str):
    """The CompileResult of ``path`` for ``target`` (kept for the session: the golden test and the
    strategy test read the same compilations), or the first line of the TinyfuseError."""
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError
    try:
        return compile_model(str(path), target=target)
    except TinyfuseError as e:
        return str(e).splitlines()[0]


def digest(path: Path, target: str) -> dict[str, str]:
    """{file name: sha256} of the sources ``path`` compiles to for ``target``, or {'error': line}."""
    result = compiled(path, target)
    if isinstance(result, str):
        return {"error": result}
    return {name: hashlib.sha256(text.encode()).hexdigest()[:20] for name, text in sorted(result.files.items())}


def key(path: Path, target: str) -> str:
    return f"{path.relative_to(MODELS).as_posix()}@{target}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="rewrite tests/golden/sources.json")
    args = ap.parse_args(argv)
    table = {key(p, t): digest(p, t) for p in model_paths() for t in TARGETS}
    if args.update:
        GOLDEN.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(table)} entries to {GOLDEN}")
        return 0
    old = json.loads(GOLDEN.read_text())
    bad = [k for k in sorted(set(table) | set(old)) if table.get(k) != old.get(k)]
    for k in bad:
        print(f"differs: {k}")
    print(f"{len(table) - len(bad)} equal, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
