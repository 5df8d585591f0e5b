"""Writing generated files into a user's directory without ever losing a file of theirs.

The contract of ``tinyfuse compile -o DIR`` (issue 19):

- DIR is created with normal permissions (``mkdir`` honours the umask, e.g. 0755) or used as it is;
  ``-o .`` is allowed.
- Each file is written atomically: a temp file in DIR, then ``os.replace`` onto its name, so a reader
  (or a crash) sees the old file or the new one, never half of one. Files get mode 0666 & ~umask,
  like any file a program creates with ``open()``.
- Several models may share DIR (``kws.c`` beside ``vww.c`` in a firmware's ``src/model/``). The
  ``metadata.json`` tinyfuse leaves there describes the last compile (its ``"model"``, from ``--name``
  or the file stem, and its ``"files"``), and its ``"files_by_model"`` remembers, per model name, the
  files that model's last compile wrote into DIR: ``{"kws": [...], "vww": [...]}``. A manifest of
  an earlier tinyfuse without that key counts as ``{its "model": its "files"}``.
- The only files removed are those THIS model's last compile wrote into DIR and this one does not
  write again, and never one that another model of ``"files_by_model"`` still lists (the shared
  ``tinyfuse_quant.h`` and ``tinyfuse_simd.h`` stay while any model lists them). Another model's
  list keeps only the files still present in DIR. Nothing else in DIR is touched (a hand-written
  ``main.c``, an IR dump under DIR, ...).
- A file listed for any model of ``"files_by_model"`` is tinyfuse's and may be overwritten. A file of DIR
  that tinyfuse would write but no model lists (and with other content) is never overwritten: the
  compile stops with an error naming it, before it writes anything (e.g. ``--name main`` beside the
  user's own ``main.c``).
- Only plain file names (no ``/``, not ``.`` or ``..``) of a tinyfuse manifest count; a forged or
  foreign ``metadata.json`` cannot make tinyfuse remove or overwrite anything outside DIR.

Every failure (DIR is a file, no permission, a read-only or virtual file system) is a
:class:`~tinyfuse.errors.TinyfuseError` naming the path; when the compile created DIR it removes what
it wrote there first. Two compiles into one DIR at the same moment are not serialised (the last
manifest written wins).
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ..errors import TinyfuseError

MANIFEST = "metadata.json"
BY_MODEL = "files_by_model"    # the manifest key: model name -> the files its last compile wrote


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


def _read_manifest(path: Path) -> dict | None:
    """The manifest at ``path`` as a dict when it is tinyfuse's (a JSON object with a ``"tinyfuse"``
    key), else None (missing, unreadable, not JSON, someone else's)."""
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and "tinyfuse" in meta else None


def _plain_names(files) -> set[str]:
    """The plain file names (no directory part, not ``.``/``..``) of a manifest list; empty for a non-list."""
    if not isinstance(files, list):
        return set()
    return {f for f in files if isinstance(f, str) and f and f == Path(f).name and f not in (".", "..")}


def previous_by_model(outdir: Path) -> dict[str, set[str]]:
    """Model name → the file names its last compile wrote into ``outdir``: the ``"files_by_model"`` of the
    metadata.json tinyfuse left there, or for an older manifest ``{its "model": its "files"}`` (model
    ``""`` when it names none). Empty when there is no tinyfuse manifest; only plain file names count."""
    meta = _read_manifest(outdir / MANIFEST)
    if meta is None:
        return {}
    lists = meta.get(BY_MODEL)
    if not isinstance(lists, dict):
        model = meta.get("model")
        lists = {model if isinstance(model, str) else "": meta.get("files")}
    lists = {str(m): _plain_names(fs) for m, fs in lists.items()}
    return {m: fs for m, fs in lists.items() if fs}


def previous_files(outdir: Path) -> set[str]:
    """Every file name any model's last compile wrote into ``outdir`` (:func:`previous_by_model`)."""
    return set().union(*previous_by_model(outdir).values())


def _refuse_foreign(outdir: Path, files: dict[str, str], old: set[str]) -> None:
    """TinyfuseError when a file this compile writes exists in ``outdir`` with other content and is not
    one tinyfuse wrote there (``old``; a tinyfuse metadata.json is always its own)."""
    for name, text in files.items():
        path = outdir / name
        if name in old or not path.is_file() or (name == MANIFEST and _read_manifest(path) is not None):
            continue
        try:
            same = path.read_text() == text
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            raise TinyfuseError(f"{path} exists and tinyfuse did not write it (it is not in {outdir / MANIFEST}); "
                                "choose another --name or -o DIR, or move that file")


def _present(outdir: Path, name: str) -> bool:
    path = outdir / name
    return path.is_file() or path.is_symlink()


def _model_of(files: dict[str, str]) -> str | None:
    """The ``"model"`` of the manifest among ``files``; None when there is no tinyfuse manifest."""
    try:
        meta = json.loads(files[MANIFEST])
    except (KeyError, ValueError):
        return None
    model = meta.get("model") if isinstance(meta, dict) and "tinyfuse" in meta else None
    return model if isinstance(model, str) else None


def _with_by_model(files: dict[str, str], model: str, others: dict[str, set[str]]) -> dict[str, str]:
    """``files`` with a ``"files_by_model"`` key (after ``"files"``) in its manifest: ``others`` plus this
    compile's ``model`` → its files, every list sorted, the models in name order."""
    meta = json.loads(files[MANIFEST])
    by_model = {m: sorted(fs) for m, fs in others.items()} | {model: sorted(files)}
    out: dict = {}
    for key, value in meta.items():
        if key != BY_MODEL:
            out[key] = value
        if key == "files":
            out[BY_MODEL] = {m: by_model[m] for m in sorted(by_model)}
    out.setdefault(BY_MODEL, {m: by_model[m] for m in sorted(by_model)})
    return files | {MANIFEST: json.dumps(out, indent=1) + "\n"}


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


def _write_all(outdir: Path, files: dict[str, str], created: bool) -> None:
    """Write every file (the manifest last); on failure remove what was written when ``created``."""
    mode = 0o666 & ~_umask()
    written: list[Path] = []
    try:
        for name in sorted(files, key=lambda n: n == MANIFEST):
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


def write_outputs(files: dict[str, str], outdir: str | Path) -> Path:
    """Write ``files`` (file name → text; a tinyfuse ``metadata.json`` among them names the model) into
    ``outdir`` under the contract of the module doc.

    The manifest (metadata.json) is written last, so it never lists a file that is not in place; it
    gains the ``"files_by_model"`` of every model in ``outdir``. Then this model's stale files are removed.
    Returns ``outdir`` as a Path. Raises TinyfuseError on any file-system failure or a foreign file in
    the way; when this call created ``outdir`` it removes what it wrote there first.
    """
    if not str(outdir).strip():
        raise TinyfuseError("-o: empty output directory name (use -o . for the current directory)")
    outdir = Path(outdir)
    created = prepare_dir(outdir)
    old = previous_by_model(outdir)
    _refuse_foreign(outdir, files, set().union(*old.values()))
    model = _model_of(files)
    others = {m: {f for f in fs if _present(outdir, f)} for m, fs in old.items() if m != model}
    others = {m: fs for m, fs in others.items() if fs}
    if model is not None:
        files = _with_by_model(files, model, others)
    _write_all(outdir, files, created)
    keep = set(files).union(*others.values())
    for name in sorted(old.get(model, set()) - keep) if model is not None else ():
        stale = outdir / name
        if stale.is_file() or stale.is_symlink():
            stale.unlink(missing_ok=True)
    return outdir


def manifest_with_files_by_model(files: dict[str, str], model: str) -> dict[str, str]:
    """``files`` with the manifest ``write_outputs`` writes into a directory no model wrote into before
    (``"files_by_model"``: this model only), for outputs other than a directory (an archive)."""
    return _with_by_model(files, model, {})
