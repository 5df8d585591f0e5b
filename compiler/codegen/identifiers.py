"""C identifiers made from model names and tensor names.

``c_identifier`` turns any text into an ASCII C identifier (the model name, ``names.py``, and the
tensor part of the I/O name macros). ``io_macro_ids`` gives every model input and output the
identifier of its name macros in ``<name>.h``:

    #define <NAME>_INPUT_<ID>        index
    #define <NAME>_INPUT_<ID>_SIZE   bytes
    #define <NAME>_INPUT_<ID>_SHAPE  { d0, d1, ... }
    #define <NAME>_INPUT_<ID>_RANK   number of dimensions
    #define <NAME>_INPUT_<ID>_TYPE   <NAME>_TYPE_<DTYPE>

(``OUTPUT`` alike). ``<ID>`` is the tensor name as an upper-case C identifier. Two tensors whose
identifiers meet (``x:0`` and ``x_0``, ``a`` and ``A``, or ``x_size`` beside ``x``, whose ``_SIZE``
macro is ``X_SIZE``), or an identifier that would spell a fixed macro of the header (``SIZE``:
``<NAME>_INPUT_SIZE`` is input 0's byte count), take the suffix ``_<index>`` (then ``_<index>_2``, ...)
in tensor order: every macro name of the header stays unique.
"""
from __future__ import annotations

import re
import unicodedata

IO_MACRO_SUFFIXES = ("", "_SIZE", "_SHAPE", "_RANK", "_TYPE")
FIXED_IO_MACROS = frozenset({"SIZE"})      # <NAME>_INPUT_SIZE / <NAME>_OUTPUT_SIZE: bytes of tensor 0


def c_identifier(text: str) -> str:
    """``text`` as an ASCII C identifier: accents dropped (NFKD), other characters ``_``, a leading digit
    or underscore prefixed with ``m`` (``_`` at file scope is reserved, C11 7.1.3); ``'model'`` when
    nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    s = re.sub(r"[^A-Za-z0-9_]", "_", ascii_text)
    if not s.strip("_"):
        return "model"
    return "m" + s if s[0] == "_" else "m_" + s if s[0].isdigit() else s


def _ids(names: list[str]) -> list[str]:
    """The ``<ID>`` of each name of one list (inputs or outputs), unique with all their suffixes."""
    taken = set(FIXED_IO_MACROS)
    out = []
    for i, name in enumerate(names):
        base = c_identifier(name).upper() if name else f"T{i}"
        candidates = [base, f"{base}_{i}", *(f"{base}_{i}_{k}" for k in range(2, len(names) + 3))]
        ident = next(c for c in candidates if not any(c + s in taken for s in IO_MACRO_SUFFIXES))
        taken.update(ident + s for s in IO_MACRO_SUFFIXES)
        out.append(ident)
    return out


def io_macro_ids(inputs, outputs) -> tuple[list[str], list[str]]:
    """(input ids, output ids): the ``<ID>`` of every model input and output (``.name`` of each), as
    the module doc says. Deterministic: the same names in the same order give the same ids."""
    return _ids([t.name for t in inputs]), _ids([t.name for t in outputs])
