"""Writing generated files into a user's directory without ever losing a file of theirs.

The contract of ``tinyfuse compile -o DIR`` (issue 19):

- DIR is created with normal permissions (``mkdir`` honours the umask, e.g. 0755) or used as it is;
  ``-o .`` is allowed.
- Each file is written atomically: a temp file in DIR, then ``os.replace`` onto its name, so a reader
  (or a crash) sees the old file or the new one, never half of one. Files get mode 0666 & ~umask,
  like any file a program creates with ``open()``.
- The only files removed are those an earlier ``tinyfuse compile`` wrote into DIR and this one does not
  write again: the ``"files"`` list of the ``metadata.json`` tinyfuse left there. Nothing else in DIR
  is touched (a hand-written ``main.c``, an IR dump under DIR, ...).
- A file of DIR that tinyfuse would write but did not write there before (not in that list, and
  with other content) is never overwritten: the compile stops with an error naming it, before it
  writes anything (e.g. ``--name main`` beside the user's own ``main.c``).

Every failure (DIR is a file, no permission, a read-only or virtual file system) is a
:class:`~tinyfuse.errors.TinyfuseError` naming the path.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ..errors import TinyfuseError

MANIFEST = "metadata.json"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fail(path: Path, what: str, e: OSError) -> TinyfuseError:
    return TinyfuseError(f"{path}: cannot {what} ({e.strerror or type(e).__name__})")


def prepare_dir(outdir: Path) -> bool:
    """Create ``outdir`` (and parents) unless it exists; True when this call created it.
    Raises TinyfuseError when it exists but is not a directory, or cannot be created."""
    if outdir.exists() and not outdir.is_dir():
        raise TinyfuseError(f"{outdir}: exists and is not a directory")
    if outdir.is_dir():
        return False
    try:
        outdir.mkdir(parents=True)
    except FileExistsError:
        if not outdir.is_dir():
            raise TinyfuseError(f"{outdir}: exists and is not a directory") from None
        return False
    except OSError as e:
        raise _fail(outdir, "create the output directory", e) from None
    return True


def previous_files(outdir: Path) -> set[str]:
    """Names tinyfuse wrote into ``outdir`` last time: the ``"files"`` list of its metadata.json.
    Empty when there is none, it is not tinyfuse's, or it names anything but plain file names."""
    try:
        meta = json.loads((outdir / MANIFEST).read_text())
    except (OSError, ValueError):
        return set()
    files = meta.get("files") if isinstance(meta, dict) and "tinyfuse" in meta else None
    if not isinstance(files, list):
        return set()
    return {f for f in files if isinstance(f, str) and f and f == Path(f).name and f not in (".", "..")}


def _refuse_foreign(outdir: Path, files: dict[str, str], old: set[str]) -> None:
    """TinyfuseError when a file this compile writes exists in ``outdir`` with other content and is not
    one tinyfuse wrote there (``old``; a tinyfuse metadata.json is always its own)."""
    for name, text in files.items():
        path = outdir / name
        if name in old or not path.is_file() or (name == MANIFEST and _is_manifest(path)):
            continue
        try:
            same = path.read_text() == text
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            raise TinyfuseError(f"{path} exists and tinyfuse did not write it (it is not in {outdir / MANIFEST}); "
                                "choose another --name or -o DIR, or move that file")


def _is_manifest(path: Path) -> bool:
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and "tinyfuse" in meta


def write_atomic(path: Path, text: str, mode: int) -> None:
    """Write ``text`` to ``path`` through a temp file in the same directory and ``os.replace``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_outputs(files: dict[str, str], outdir: str | Path) -> Path:
    """Write ``files`` (file name → text) into ``outdir`` under the contract of the module doc.

    The manifest (metadata.json) is written last, so it never lists a file that is not in place.
    Returns ``outdir`` as a Path. Raises TinyfuseError on any file-system failure; when this call
    created ``outdir`` it removes what it wrote there first.
    """
    if not str(outdir).strip():
        raise TinyfuseError("-o: empty output directory name (use -o . for the current directory)")
    outdir = Path(outdir)
    created = prepare_dir(outdir)
    old = previous_files(outdir)
    _refuse_foreign(outdir, files, old)
    mode = 0o666 & ~_umask()
    written: list[Path] = []
    order = sorted(files, key=lambda n: n == MANIFEST)
    try:
        for name in order:
            path = outdir / name
            if path.is_dir():
                raise TinyfuseError(f"{outdir}: '{name}' is a directory; tinyfuse writes a file of that name")
            write_atomic(path, files[name], mode)
            written.append(path)
    except (OSError, TinyfuseError) as e:
        if created:
            for p in written:
                p.unlink(missing_ok=True)
            if not any(outdir.iterdir()):
                outdir.rmdir()
        if isinstance(e, TinyfuseError):
            raise
        raise _fail(outdir, f"write {e.filename or 'a file'}", e) from None
    for name in sorted(old - set(files)):
        stale = outdir / name
        if stale.is_file() or stale.is_symlink():
            stale.unlink(missing_ok=True)
    return outdir
