"""The model name: the C identifier prefix of the generated API and the stem of its file names.

``<name>.h`` is included as ``#include "<name>.h"``, which searches the including file's directory
first: a model named ``string`` would shadow ``<string.h>`` for every source next to it, and one named
``tinyfuse_quant`` would overwrite the runtime header it ships. So the name is

- an ASCII C identifier: accents are dropped (NFKD), other characters become ``_``, a leading digit
  or underscore gets an ``m`` prefix (identifiers starting with ``_`` are reserved at file scope,
  C11 7.1.3);
- never (case-insensitively, for case-insensitive file systems) a C99/C11/C23 standard header name
  (C11 7.1.2, C23 7.1.2) nor a runtime header's stem: those get the suffix ``_model``.

A ``--name`` that had to change gives a warning naming the result.
"""
from __future__ import annotations

import warnings

from .emit import RUNTIME_HEADERS
from .identifiers import c_identifier

C_STANDARD_HEADERS = frozenset({
    "assert", "complex", "ctype", "errno", "fenv", "float", "inttypes", "iso646", "limits", "locale",
    "math", "setjmp", "signal", "stdalign", "stdarg", "stdatomic", "stdbit", "stdbool", "stdckdint",
    "stddef", "stdint", "stdio", "stdlib", "stdnoreturn", "string", "tgmath", "threads", "time", "uchar",
    "wchar", "wctype"})
RESERVED_NAMES = C_STANDARD_HEADERS | {h.removesuffix(".h") for h in RUNTIME_HEADERS}


def model_name(name: str | None, fallback: str) -> str:
    """The model name from ``--name`` (``name``) or, when None, from ``fallback`` (the file stem).

    Returns an ASCII C identifier that is no standard or runtime header name. Warns (UserWarning)
    when an explicit ``name`` had to change, or a file stem was a reserved header name.
    """
    given = name if name is not None else fallback
    s = c_identifier(given)
    reserved = s.lower() in RESERVED_NAMES
    if reserved:
        s += "_model"
    if reserved or (name is not None and s != name):
        why = (f"'{given.lower()}.h' is a {'standard C' if given.lower() in C_STANDARD_HEADERS else 'tinyfuse runtime'}"
               " header name" if reserved else "not an ASCII C identifier")
        warnings.warn(f"model name {given!r}: {why}; the generated API and files use '{s}'", stacklevel=2)
    return s
