"""Class names of a classifier's output (``--labels FILE``) for the generated sources: read from a text
file (one name per line, UTF-8) and written as C string literals, ``<NAME>_LABELS[i]`` naming class i of
output 0's last axis (``<NAME>_NUM_LABELS`` of them).
"""
from __future__ import annotations

from pathlib import Path

from ..errors import TinyfuseError


def read_labels(path: str | Path | None) -> tuple[str, ...]:
    """The names of ``path``, one per line (line endings and trailing blank lines dropped); () for None.
    TinyfuseError for a missing or non-UTF-8 file, no name, or an empty line between names."""
    if path is None:
        return ()
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TinyfuseError(f"--labels {path}: no such file") from None
    except (UnicodeDecodeError, IsADirectoryError) as e:
        raise TinyfuseError(f"--labels {path}: not a UTF-8 text file ({type(e).__name__})") from None
    names = [ln.rstrip("\r") for ln in text.split("\n")]
    while names and not names[-1].strip():
        names.pop()
    if not names:
        raise TinyfuseError(f"--labels {path}: no class names (one per line)")
    empty = [i + 1 for i, n in enumerate(names) if not n.strip()]
    if empty:
        raise TinyfuseError(f"--labels {path}: line {empty[0]} is empty (one class name per line)")
    return tuple(names)


def check_labels(labels, outputs) -> None:
    """TinyfuseError unless there is one name per element of output 0's last axis."""
    if not labels:
        return
    t = outputs[0]
    n = t.shape[-1] if t.shape else 1
    if len(labels) != n:
        raise TinyfuseError(f"--labels: {len(labels)} class names, but output '{t.name}' {list(t.shape)} has {n} classes "
                            "along its last axis")


def c_string(text: str) -> str:
    """``text`` as a C string literal: printable ASCII as is, quotes, backslashes, '?' (trigraphs) and
    every other byte of its UTF-8 encoding as an escape (octal, three digits)."""
    out = []
    for b in text.encode("utf-8"):
        c = chr(b)
        out.append("\\" + c if c in '"\\?' else c if 32 <= b < 127 else f"\\{b:03o}")
    return '"' + "".join(out) + '"'


__all__ = ["c_string", "check_labels", "read_labels"]
