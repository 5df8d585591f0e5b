"""``tinyfuse compile --format archive``: one tar file per model, as tvmc's Model Library Format is one
tar per TVM module, for a build system to fetch and unpack.

Layout (every member under one folder named after the model, so archives unpack side by side)::

    <name>/<name>.h, <name>.c, <name>_weights.c     the sources, byte for byte what ``compile -o`` writes
    <name>/<name>.mk, <name>/<name>.cmake            the build fragments (they name the sources beside them)
    <name>/tinyfuse_*.h                              the runtime headers the model includes, if any
    <name>/metadata.json                             the manifest ``compile -o`` writes into an empty DIR
    <name>/report/report.json, report/report.txt     ``tinyfuse report``'s JSON and text (no plots)

Members are regular files, mode 0644, owner 0/0 (``root``), sorted by path, stamped with the time of
writing (an older stamp would make ``make`` skip a rebuild after unpacking a newer model). The archive
is written through a temp file and ``os.replace``; an existing file is replaced only when it is a tar
whose members include a tinyfuse ``metadata.json``.
"""
from __future__ import annotations

import io
import json
import os
import tarfile
import tempfile
import time
from pathlib import Path

from ..codegen.output import MANIFEST, manifest_with_files_by_model
from ..errors import TinyfuseError
from ..report import report


def archive_members(result, target) -> dict[str, bytes]:
    """Archive path -> bytes of every member for the CompileResult ``result`` compiled for ``target``."""
    name = result.name
    files = manifest_with_files_by_model(result.files, name)
    text, report_files = report(result, target, None, plot_format=None)
    members = {f"{name}/{f}": body.encode() for f, body in files.items()}
    members[f"{name}/report/report.json"] = report_files["report.json"]
    members[f"{name}/report/report.txt"] = (text.rstrip("\n") + "\n").encode()
    return dict(sorted(members.items()))


def is_tinyfuse_archive(path: Path) -> bool:
    """Whether ``path`` is a tar file holding a tinyfuse ``<folder>/metadata.json``."""
    try:
        with tarfile.open(path, "r:*") as tar:
            for m in tar.getmembers():
                if m.isfile() and Path(m.name).name == MANIFEST and len(Path(m.name).parts) == 2:
                    meta = json.loads(tar.extractfile(m).read())
                    if isinstance(meta, dict) and "tinyfuse" in meta:
                        return True
    except (OSError, tarfile.TarError, ValueError):
        return False
    return False


def archive_path(output: str, name: str) -> Path:
    """The archive file of ``compile --format archive -o output``: ``output`` itself when it ends in
    ``.tar``, else ``output/<name>.tar``."""
    out = Path(output)
    return out if out.suffix == ".tar" else out / f"{name}.tar"


def write_archive(result, target, path: str | Path) -> Path:
    """Write the archive of ``result`` to ``path`` (parent folders created). Returns the path. Raises
    TinyfuseError when ``path`` is a directory or a file that is not a tinyfuse archive, or on a
    file-system failure."""
    path = Path(path)
    if path.is_dir():
        raise TinyfuseError(f"{path}: is a directory; the archive is a file (give FILE.tar)")
    if (path.exists() or path.is_symlink()) and not is_tinyfuse_archive(path):
        raise TinyfuseError(f"{path} exists and is not a tinyfuse archive; choose another file name or move it")
    members = archive_members(result, target)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise TinyfuseError(f"{path}: cannot write the archive ({e.strerror or type(e).__name__})") from None
    now = int(time.time())
    try:
        with os.fdopen(fd, "wb") as f, tarfile.open(fileobj=f, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for member, data in members.items():
                info = tarfile.TarInfo(member)
                info.size, info.mode, info.mtime, info.uname, info.gname = len(data), 0o644, now, "root", "root"
                tar.addfile(info, io.BytesIO(data))
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise TinyfuseError(f"{path}: cannot write the archive ({e.strerror or type(e).__name__})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
