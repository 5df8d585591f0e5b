"""Writing a tree of generated files (a project: sub-folders allowed) into a user's directory without
ever replacing or deleting a file that is theirs.

The manifest ``DIR/tinyfuse_project.json`` lists every file tinyfuse wrote with the SHA-256 of what it
wrote. A file of the new tree that exists in DIR may be replaced only when the manifest lists it and
its content is still what tinyfuse wrote (or it already holds exactly the new content); anything else
(a file tinyfuse never wrote, or one the user edited since) stops the write before anything is written,
with one error naming the file. Files the last write listed and this one does not are removed when
unchanged, kept otherwise. Nothing else in DIR is touched (a build folder, the user's notes). Each file
is written atomically (``codegen.output.write_atomic``), the manifest last.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path, PurePosixPath

from ..codegen.output import prepare_dir, write_atomic
from ..errors import TinyfuseError

MANIFEST = "tinyfuse_project.json"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _safe(rel: str) -> bool:
    """A relative path inside DIR: no absolute path, no ``..``, no empty part."""
    p = PurePosixPath(rel)
    return bool(rel) and not p.is_absolute() and all(part not in ("", ".", "..") for part in p.parts)


def previous(outdir: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of the files tinyfuse's last write listed in ``outdir`` (only safe
    relative paths of a tinyfuse manifest count); empty when there is none."""
    try:
        meta = json.loads((outdir / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    files = meta.get("files") if isinstance(meta, dict) and "tinyfuse" in meta else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str) and _safe(k)}


def _current(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _check(outdir: Path, files: dict[str, bytes], old: dict[str, str], ours: set[str]) -> None:
    """TinyfuseError naming the first file of ``files`` that exists in ``outdir`` and is not tinyfuse's
    unchanged file (module doc) nor in ``ours``, or a path whose folder part is a file."""
    for rel in [*files, MANIFEST]:
        path = outdir / rel
        for parent in list(PurePosixPath(rel).parents)[:-1]:
            if (outdir / parent).exists() and not (outdir / parent).is_dir():
                raise TinyfuseError(f"{outdir / parent} exists and is not a directory; tinyfuse writes {path}")
        if not (path.exists() or path.is_symlink()):
            continue
        if path.is_dir() or path.is_symlink():
            raise TinyfuseError(f"{path} exists and tinyfuse did not write it; choose another directory or move it")
        if rel == MANIFEST:
            if not _is_manifest(path):
                raise TinyfuseError(f"{path} exists and tinyfuse did not write it; choose another directory or move it")
            continue
        data = _current(path)
        if data == files[rel] or rel in ours:
            continue
        if rel not in old:
            raise TinyfuseError(f"{path} exists and tinyfuse did not write it (it is not in {outdir / MANIFEST}); "
                                "choose another directory or move that file")
        if data is None or _digest(data) != old[rel]:
            raise TinyfuseError(f"{path} was changed since tinyfuse wrote it; move it (or restore it) to regenerate")


def _is_manifest(path: Path) -> bool:
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and "tinyfuse" in meta


def write_tree(outdir: str | Path, files: dict[str, bytes], info: dict, ours=lambda outdir: set()) -> Path:
    """Write ``files`` (relative POSIX path -> bytes) under ``outdir`` (created if missing) as the module
    doc says; ``info`` goes into the manifest beside ``"files"`` (it must hold ``"tinyfuse"``: the
    version). ``ours(outdir)``: more relative paths tinyfuse may replace whatever they hold (a model
    folder's files that ``tinyfuse compile`` lists in its metadata.json). Returns ``outdir``. Raises
    TinyfuseError on a file of the user's in the way or a file-system failure (naming the path)."""
    if not str(outdir).strip():
        raise TinyfuseError("project: empty directory name (use . for the current directory)")
    outdir = Path(outdir)
    bad = [rel for rel in files if not _safe(rel) or rel == MANIFEST]
    if bad:
        raise ValueError(f"write_tree: not a relative path of the tree: {bad[0]!r}")
    prepare_dir(outdir)
    old = previous(outdir)
    _check(outdir, files, old, ours(outdir))
    mode = 0o666 & ~_umask()
    try:
        for rel, data in files.items():
            path = outdir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if _current(path) != data:
                write_atomic(path, data.decode("utf-8"), mode)
        manifest = {**info, "files": {rel: _digest(data) for rel, data in sorted(files.items())}}
        write_atomic(outdir / MANIFEST, json.dumps(manifest, indent=1) + "\n", mode)
    except OSError as e:
        raise TinyfuseError(f"{outdir}: cannot write {e.filename or 'a file'} ({e.strerror or type(e).__name__})") from None
    for rel in sorted(set(old) - set(files)):
        stale = outdir / rel
        if stale.is_file() and not stale.is_symlink() and _digest(stale.read_bytes()) == old[rel]:
            stale.unlink()
    return outdir


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
