"""The paths a user gives: writing into their directory without ever overwriting a file of theirs, and
reading their files with a bound.

Every command that writes into a user-given directory DIR follows one rule: it writes only names
(files or folders directly in DIR) that tinyfuse wrote there before, or names that do not exist yet.
A name it would write that exists in DIR and that tinyfuse did not write stops the command with one
``error:`` line naming it, before anything is written (exit code 2).

What tinyfuse wrote into DIR is recorded there:

- ``metadata.json``: ``tinyfuse compile -o DIR``'s manifest; its ``"files_by_model"`` lists, per model
  name, the files that model's last compile wrote (``codegen/output.py`` keeps it; an older manifest
  without that key counts as ``{its "model": its "files"}``);
- ``.tinyfuse-files.json``: the manifest of every other command (``run --keep``, ``bench --keep``,
  ``report -o``, ``tune --out``, ``--dump-ir``): ``{"tinyfuse": version, "files": [names]}``. A folder
  it lists (``src``, ``obj``, ``run`` of a ``--keep`` build) is tinyfuse's as a whole.

A name listed in either is tinyfuse's, whichever command wrote it. Only plain names count (no ``/``,
not ``.`` or ``..``), so a forged manifest cannot point outside DIR. A ``.tinyfuse-files.json`` that is
not tinyfuse's (not JSON, or no ``"tinyfuse"`` key) stops a command that would rewrite it.

DIR is created (with ``mkdir``'s umask permissions) when missing. Files are written atomically (a
temp file in the same folder, then ``os.replace``), mode ``0666 & ~umask``.

Files the user gives to read (the model, ``--input``, ``--labels``, ...) pass :func:`input_file`: a
regular file of at most 2 GiB, so a directory, a pipe or ``/dev/zero`` is one error line, never a hang.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ._version import __version__
from .errors import TinyfuseError

COMPILE_MANIFEST = "metadata.json"
MANIFEST = ".tinyfuse-files.json"
BY_MODEL = "files_by_model"    # compile's manifest key: model name -> the files its last compile wrote


def umask() -> int:
    """The process umask (read without changing it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def os_error(path: Path, what: str, e: OSError) -> TinyfuseError:
    """One error line for an OSError on ``path``: ``<path>: cannot <what> (<strerror>)``."""
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
        raise os_error(outdir, "create the output directory", e) from None
    return True


def write_atomic(path: Path, data: str | bytes, mode: int | None = None) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through a temp file in the same folder and ``os.replace``;
    ``mode`` defaults to ``0666 & ~umask``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, 0o666 & ~umask() if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> tuple[object, str | None]:
    """(the JSON value of ``path``, None), or (None, why it is not JSON) when it cannot be read as such."""
    try:
        with open(path, "rb") as f:
            raw = f.read(16 << 20)      # a manifest is small; a huge or endless file is not one
        return json.loads(raw.decode("utf-8")), None
    except OSError as e:
        return None, e.strerror or type(e).__name__
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    except ValueError as e:
        return None, f"not JSON: {e}"


def is_manifest(value) -> bool:
    """True for a tinyfuse manifest: a JSON object with a ``"tinyfuse"`` key."""
    return isinstance(value, dict) and "tinyfuse" in value


def plain_names(files) -> set[str]:
    """The plain names (no directory part, not ``.``/``..``) of a manifest list; empty for a non-list."""
    if not isinstance(files, list):
        return set()
    return {f for f in files if isinstance(f, str) and f and f == Path(f).name and f not in (".", "..")}


def compile_manifest(outdir: Path) -> dict | None:
    """The ``metadata.json`` of ``outdir`` when it is tinyfuse's, else None (missing, unreadable, foreign)."""
    meta, _ = read_json(outdir / COMPILE_MANIFEST)
    return meta if is_manifest(meta) else None


def previous_by_model(outdir: Path) -> dict[str, set[str]]:
    """Model name → the file names its last compile wrote into ``outdir`` (compile's manifest, module
    doc; model ``""`` for an older manifest that names none). Empty without a tinyfuse manifest."""
    meta = compile_manifest(outdir)
    if meta is None:
        return {}
    lists = meta.get(BY_MODEL)
    if not isinstance(lists, dict):
        model = meta.get("model")
        lists = {model if isinstance(model, str) else "": meta.get("files")}
    lists = {str(m): plain_names(fs) for m, fs in lists.items()}
    return {m: fs for m, fs in lists.items() if fs}


def recorded(outdir: Path, strict: bool = False) -> set[str]:
    """The names ``.tinyfuse-files.json`` of ``outdir`` lists (empty when it is missing). ``strict``:
    TinyfuseError naming the file when it exists but is not tinyfuse's (the command would rewrite it)."""
    path = outdir / MANIFEST
    if not (path.exists() or path.is_symlink()):
        return set()
    value, why = read_json(path) if path.is_file() else (None, "not a regular file")
    if not is_manifest(value):
        if strict:
            why = why or "no \"tinyfuse\" key"
            raise TinyfuseError(f"{path} is not a tinyfuse manifest ({why}); tinyfuse records there what it "
                                "wrote into that directory: move that file or choose another directory")
        return set()
    return plain_names(value.get("files"))


def owned(outdir: Path, strict: bool = False) -> set[str]:
    """Every name of ``outdir`` tinyfuse wrote: compile's ``"files_by_model"`` and ``.tinyfuse-files.json``."""
    return set().union(*previous_by_model(outdir).values(), recorded(outdir, strict))


def foreign_error(path: Path, option: str) -> TinyfuseError:
    """The error of a name tinyfuse would write over: ``path`` exists and no manifest lists it."""
    return TinyfuseError(f"{path} exists and tinyfuse did not write it (not listed in {path.parent / COMPILE_MANIFEST} "
                         f"or {MANIFEST}); choose another {option}, or move that file")


def check_claim(outdir: str | Path, names, option: str) -> Path:
    """:func:`claim`'s checks without writing anything (a command that runs long checks first, then
    claims when it writes); ``outdir`` as a Path. ValueError for a name that is not plain (a bug)."""
    if not str(outdir).strip():
        raise TinyfuseError(f"{option}: empty directory name (use . for the current directory)")
    outdir = Path(outdir)
    bad = set(names) - plain_names(sorted(set(names)))
    if bad:
        raise ValueError(f"claim: not plain names: {sorted(bad)}")
    if outdir.exists() and not outdir.is_dir():
        raise TinyfuseError(f"{outdir}: exists and is not a directory")
    if not outdir.is_dir():
        return outdir
    mine = owned(outdir, strict=True)
    for name in sorted(set(names)):
        path = outdir / name
        if name not in mine and (path.exists() or path.is_symlink()):
            raise foreign_error(path, option)
    return outdir


def claim(outdir: str | Path, names, option: str) -> Path:
    """Check that a command may write ``names`` (plain names directly in ``outdir``; folders included)
    and record them in ``outdir/.tinyfuse-files.json`` before the command writes them (module doc).

    ``option`` names where DIR came from in the error (``--keep DIR``, ``-o DIR``, ...). Creates
    ``outdir`` when missing. Returns it as a Path. TinyfuseError (one line) for an empty name, a path
    that is not a directory, a name that exists and tinyfuse did not write, a foreign manifest, or a
    file-system failure; nothing in ``outdir`` is written then.
    """
    outdir = check_claim(outdir, names, option)
    names = set(names)
    prepare_dir(outdir)
    check_claim(outdir, names, option)        # again: DIR may have appeared meanwhile
    listed = {n for n in recorded(outdir) if (outdir / n).exists() or (outdir / n).is_symlink()}
    body = json.dumps({"tinyfuse": __version__, "files": sorted(listed | names)}, indent=1) + "\n"
    try:
        write_atomic(outdir / MANIFEST, body)
    except OSError as e:
        raise os_error(outdir, f"write {MANIFEST}", e) from None
    return outdir


MAX_INPUT_BYTES = 2 << 30   # 2 GiB: protobuf's limit of one ONNX file; a flatbuffer's offsets are 32-bit


def input_file(path: str | Path, what: str = "") -> Path:
    """``path`` as a Path when it names a regular, non-empty file of at most 2 GiB (a model, ``--input``,
    ``--labels``, ...); else TinyfuseError naming it and ``what`` (``"--input"``, or "" for the model):
    missing, a directory, a device, pipe or socket (``/dev/zero`` would be read forever), empty, too large."""
    import stat
    p = Path(path)
    where = f"{what} {p}" if what else str(p)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise TinyfuseError(f"{where}: no such file") from None
    except OSError as e:
        raise TinyfuseError(f"{where}: cannot read it ({e.strerror or type(e).__name__})") from None
    if stat.S_ISDIR(st.st_mode):
        raise TinyfuseError(f"{where}: is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise TinyfuseError(f"{where}: not a regular file (a device, pipe or socket); give a file")
    if st.st_size == 0:
        raise TinyfuseError(f"{where}: the file is empty")
    if st.st_size > MAX_INPUT_BYTES:
        raise TinyfuseError(f"{where}: {st.st_size} bytes, more than the {MAX_INPUT_BYTES} a model or input file "
                            "may hold")
    return p


def read_input(path: str | Path, what: str = "") -> bytes:
    """The bytes of :func:`input_file` ``path`` (the read bounded by its checked size)."""
    p = input_file(path, what)
    try:
        with open(p, "rb") as f:
            return f.read(MAX_INPUT_BYTES + 1)
    except OSError as e:
        raise TinyfuseError(f"{f'{what} ' if what else ''}{p}: cannot read it ({e.strerror or type(e).__name__})") from None


def replaceable(path: Path, is_ours, option: str) -> None:
    """TinyfuseError when the single file ``path`` (a name tinyfuse derives from one the user gave, such as
    ``<records>.model.json``) exists and its JSON content is not what tinyfuse writes there:
    ``is_ours(value)`` false, or not JSON. Such a file carries no manifest; its content tells."""
    if not (path.exists() or path.is_symlink()):
        return
    value, _ = read_json(path) if path.is_file() else (None, "")
    if value is None or not is_ours(value):
        raise TinyfuseError(f"{path} exists and tinyfuse did not write it (not a file of its kind); choose another "
                            f"{option}, or move that file")


__all__ = ["MANIFEST", "check_claim", "claim", "input_file", "owned", "prepare_dir", "previous_by_model", "read_input",
           "recorded", "replaceable", "write_atomic"]
