"""Which TFLite tensor each kernel's output is, and TFLite Micro's value of it (the TFLM column of
``run --per-layer``).

A kernel corresponds to a tensor of the .tflite when its output *is* that tensor:

- the kernel's source layers (``Function.source_spans``; the TFLite frontend names a call after its
  operator, ``<builtin name in lower case>_<operator index>``) name operators of subgraph 0; the
  operator with the highest index is the last one the kernel computes (TFLite stores operators in
  execution order, so every operator feeding the kernel's output comes before it);
- that operator has exactly one output tensor of the kernel's dtype whose dimensions other than 1
  are the kernel's, in order (the same row-major bytes: a reshape apart, never a transpose);
- of several kernels that end in the same operator's output (one operator lowered to a chain of
  kernels), only the last in kernel order is that tensor; the others are internal.

Every other kernel (a compiler-inserted layout transpose, a part of an operator, a kernel whose last
operator wrote a tensor of another layout) has no TFLite counterpart and is compared with tinyfuse's
numpy reference only. TFLite Micro's values come from one invocation with every tensor preserved
(``tflm_tensors``, the interpreter's kPreserveAllTensors).
"""
from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..frontend.detect import model_format
from ..frontend.tflite.reader import DTYPES, load_tflite
from ..frontend.tflite.schema import read_model, schema
from .oracles import OracleUnavailable, tflm_tensors

_SPAN = re.compile(r"^(?P<op>[a-z0-9_]+?)_(?P<index>\d+)$")


@dataclass(frozen=True)
class TfliteTensor:
    """A tensor of subgraph 0: its index in the flatbuffer's tensor list, name, and the operator
    (``<BUILTIN>`` and index) that writes it."""

    index: int
    name: str
    op: str
    op_index: int
    shape: tuple[int, ...]
    dtype: str


def _subgraph(path) -> tuple[list[tuple[str, list[int]]], list[tuple[str, tuple[int, ...], str]]]:
    """Subgraph 0 of the .tflite ``path``: operators as (builtin name, output tensor indices) and
    tensors as (name, shape, dtype)."""
    m = read_model(load_tflite(path))
    sg = m.subgraphs[0]
    names = {v: k for k, v in vars(schema().BuiltinOperator).items() if not k.startswith("_")}
    ops = []
    for op in sg.operators or []:
        code = m.operatorCodes[op.opcodeIndex]
        ops.append((names.get(max(code.builtinCode, code.deprecatedBuiltinCode), "?"),
                    [int(i) for i in (op.outputs if op.outputs is not None else []) if i >= 0]))
    tensors = [((t.name.decode("utf-8", "replace") if isinstance(t.name, bytes) else str(t.name or "")),
                tuple(int(d) for d in (t.shape if t.shape is not None else ())), DTYPES.get(t.type, "?"))
               for t in sg.tensors or []]
    return ops, tensors


def _last_operator(spans: list[str], ops) -> int | None:
    """The highest operator index the spans name (a span counts when its op name matches)."""
    found = [int(m["index"]) for m in map(_SPAN.match, spans) if m is not None
             and int(m["index"]) < len(ops) and ops[int(m["index"])][0].lower() == m["op"]]
    return max(found, default=None)


def _same_bytes(shape_a, shape_b) -> bool:
    """Same row-major element order: equal dimensions once the 1s are dropped."""
    return [d for d in shape_a if d != 1] == [d for d in shape_b if d != 1]


def kernel_tensors(result, model_path) -> list[TfliteTensor | None]:
    """Per kernel of ``result`` (kernel order): the TFLite tensor its output is, or None (see the
    module doc for the rule). All None for a model that is not a .tflite."""
    if model_format(model_path) != "tflite":
        return [None] * len(result.steps)
    ops, tensors = _subgraph(model_path)
    found: list[TfliteTensor | None] = []
    for s in result.steps:
        spans = s.call.op.source_spans() if s.call is not None and not isinstance(s.call.op, str) else []
        k = _last_operator(spans, ops)
        out = s.kernel.out
        cand = [] if k is None else [i for i in ops[k][1] if tensors[i][2] == out.dtype
                                     and _same_bytes(tensors[i][1], out.shape)
                                     and np.prod(tensors[i][1], dtype=np.int64) == np.prod(out.shape, dtype=np.int64)]
        found.append(TfliteTensor(cand[0], tensors[cand[0]][0], ops[k][0], k, tensors[cand[0]][1],
                                  tensors[cand[0]][2]) if len(cand) == 1 else None)
    last = {t.index: i for i, t in enumerate(found) if t is not None}
    return [t if t is not None and last[t.index] == i else None for i, t in enumerate(found)]


def tflm_values(model_path, result, inputs, mapped: list[TfliteTensor | None]) -> dict[int, np.ndarray]:
    """TFLite Micro's value of every mapped tensor after one invocation on ``inputs`` ({tensor index:
    array}); a ``--weights-dtype float16`` build runs the float16-rounded copy of the model (as
    ``run``'s oracle). Raises OracleUnavailable when TFLM cannot run the model."""
    indices = sorted({t.index for t in mapped if t is not None})
    if not indices:
        return {}
    hint = 2 * result.arena_bytes + sum(s.kernel.out.nbytes for s in result.steps)   # no reuse: every tensor kept
    if result.options is not None and result.options.weights_dtype == "float16":
        from .half_oracle import half_rounded_model
        with tempfile.TemporaryDirectory(prefix="tinyfuse_half_") as tmp:
            return tflm_tensors(half_rounded_model(model_path, tmp), inputs, indices, hint)
    return tflm_tensors(Path(model_path), inputs, indices, hint)


__all__ = ["TfliteTensor", "kernel_tensors", "tflm_values", "OracleUnavailable"]
