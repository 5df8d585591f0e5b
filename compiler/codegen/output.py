"""Writing generated files into a user's directory without ever losing a file of theirs.

The contract of ``tinyfuse compile -o DIR`` (the rule every command follows is ``tinyfuse.userdir``'s):

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
- A file this model or another tinyfuse command wrote (``"files_by_model"``, ``.tinyfuse-files.json``)
  may be overwritten. A file of DIR that tinyfuse would write but no manifest lists (and with other
  content) is never overwritten: the compile stops with an error naming it, before it writes anything
  (e.g. ``--name main`` beside the user's own ``main.c``).
- A model never writes over another model's own file (``--name kws_weights`` beside model ``kws``,
  whose ``kws_weights.c`` it would replace): the compile stops with an error naming both models and
  the file. Only the runtime headers (``tinyfuse_quant.h``, ...) and ``metadata.json`` are shared.
- A ``metadata.json`` in DIR that is not tinyfuse's (not JSON, or no ``"tinyfuse"`` key) stops the
  compile with an error naming it.
- Only plain file names (no ``/``, not ``.`` or ``..``) of a tinyfuse manifest count; a forged or
  foreign ``metadata.json`` cannot make tinyfuse remove or overwrite anything outside DIR.

Every failure (DIR is a file, no permission, a read-only or virtual file system) is a
:class:`~tinyfuse.errors.TinyfuseError` naming the path; when the compile created DIR it removes what
it wrote there first. Two compiles into one DIR at the same moment are not serialised (the last
manifest written wins).
"""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import TinyfuseError
from ..userdir import (BY_MODEL, COMPILE_MANIFEST as MANIFEST, foreign_error, is_manifest, os_error, prepare_dir,
                       previous_by_model, read_json, recorded, umask, write_atomic)
from .emit import RUNTIME_HEADERS

SHARED = frozenset({MANIFEST, *RUNTIME_HEADERS})   # files every model of one DIR may write (alike)


def previous_files(outdir: Path) -> set[str]:
    """Every file name any model's last compile wrote into ``outdir`` (:func:`previous_by_model`)."""
    return set().union(*previous_by_model(outdir).values())


def _check_manifest(outdir: Path, text: str | None) -> None:
    """TinyfuseError naming ``outdir/metadata.json`` when it exists, is not tinyfuse's and differs from ``text``."""
    path = outdir / MANIFEST
    if not (path.exists() or path.is_symlink()):
        return
    value, why = read_json(path) if path.is_file() else (None, "not a regular file")
    if is_manifest(value):
        return
    try:
        if text is not None and path.is_file() and path.read_text(encoding="utf-8") == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    why = why or ("a JSON object without a \"tinyfuse\" key" if isinstance(value, dict) else "not a JSON object")
    raise TinyfuseError(f"{path} is not a tinyfuse manifest ({why}); tinyfuse writes its {MANIFEST} there: move "
                        "that file or choose another -o DIR")


def _refuse_foreign(outdir: Path, files: dict[str, str], old: set[str]) -> None:
    """TinyfuseError when a file this compile writes exists in ``outdir`` with other content and is not
    one tinyfuse wrote there (``old``; a tinyfuse metadata.json is always its own)."""
    _check_manifest(outdir, files.get(MANIFEST))
    for name, text in files.items():
        path = outdir / name
        if name in old or name == MANIFEST or not (path.is_file() or path.is_symlink()):
            continue
        try:
            same = path.read_text() == text
        except (OSError, UnicodeDecodeError):
            same = False
        if not same:
            raise foreign_error(path, "--name or -o DIR")


def _refuse_other_models(outdir: Path, files: dict[str, str], model: str | None, old: dict[str, set[str]]) -> None:
    """TinyfuseError when this compile (model ``model``) writes a file another model of ``outdir`` lists as
    its own (``--name kws_weights`` beside model ``kws``: ``kws_weights.c``); the shared files excepted."""
    for name in sorted(set(files) - SHARED):
        owners = sorted(m for m, fs in old.items() if m and m != model and name in fs)   # "": an old manifest's
        if owners:
            raise TinyfuseError(f"{outdir / name} belongs to model '{owners[0]}' (compiled into {outdir} before) and "
                                f"model '{model}' would overwrite it; two models in one directory need names whose "
                                "files differ: choose another --name or -o DIR")


def _present(outdir: Path, name: str) -> bool:
    path = outdir / name
    return path.is_file() or path.is_symlink()


def _model_of(files: dict[str, str]) -> str | None:
    """The ``"model"`` of the manifest among ``files``; None when there is no tinyfuse manifest."""
    try:
        meta = json.loads(files[MANIFEST])
    except (KeyError, ValueError):
        return None
    model = meta.get("model") if is_manifest(meta) else None
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


def _write_all(outdir: Path, files: dict[str, str], created: bool) -> None:
    """Write every file (the manifest last); on failure remove what was written when ``created``."""
    mode = 0o666 & ~umask()
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
        raise os_error(outdir, f"write {e.filename or 'a file'}", e) from None


def write_outputs(files: dict[str, str], outdir: str | Path) -> Path:
    """Write ``files`` (file name → text; a tinyfuse ``metadata.json`` among them names the model) into
    ``outdir`` under the contract of the module doc.

    The manifest (metadata.json) is written last, so it never lists a file that is not in place; it
    gains the ``"files_by_model"`` of every model in ``outdir``. Then this model's stale files are removed.
    Returns ``outdir`` as a Path. Raises TinyfuseError on any file-system failure, a foreign file in
    the way or a file of another model; when this call created ``outdir`` it removes what it wrote there first.
    """
    if not str(outdir).strip():
        raise TinyfuseError("-o: empty output directory name (use -o . for the current directory)")
    outdir = Path(outdir)
    created = prepare_dir(outdir)
    old = previous_by_model(outdir)
    model = _model_of(files)
    _refuse_foreign(outdir, files, set().union(*old.values(), recorded(outdir)))
    _refuse_other_models(outdir, files, model, old)
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


__all__ = ["MANIFEST", "SHARED", "previous_by_model", "previous_files", "write_atomic", "write_outputs"]
