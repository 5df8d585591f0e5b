"""CompileResult → the files a firmware build embeds: <name>.h, <name>.c, <name>_weights.c,
<name>.mk and <name>.cmake, plus metadata.json (versioned build manifest; its ``files`` lists every
file written, so a later compile into the same directory removes only its own stale files)."""
from __future__ import annotations

import json

import numpy as np

from ..ir.types import C_TYPES, STORAGE_TYPES
from ..resources import runtime_dir
from .identifiers import io_macro_ids
from .labels import c_string, check_labels
from .templates import c_array_body, template

MANIFEST_VERSION = 1
QUANT_HEADER = "tinyfuse_quant.h"
QUANT_SOURCE = runtime_dir() / "include" / "tinyfuse" / "quant.h"
QUANT16_HEADER = "tinyfuse_quant16.h"   # the int16 (16x8) helpers, beside quant.h when a kernel calls a tf16_ one
SIMD_HEADER = "tinyfuse_simd.h"     # Kernel.headers of the arm_dsp / arm_mve variants
HALF_HEADER = "tinyfuse_half.h"     # Kernel.headers of kernels reading binary16 weights (--weights-dtype float16)
HALF_IO_HEADER = "tinyfuse_half_io.h"   # float16 / bfloat16 model I/O conversions (ops/half.py), with half.h
HALF_IO_OPS = frozenset({"half_to_float", "float_to_half", "round_half"})
WCET_HEADER = "tinyfuse_wcet.h"     # Kernel.headers of the --wcet branch-free kernels (lower/realtime.py)
REQUANT_ARM_HEADER = "tinyfuse_requant_arm.h"   # Kernel.headers of kernels using the short DSP requantize
FIXEDPOINT_HEADER = "tinyfuse_fixedpoint.h"    # Kernel.headers of TFLM's int8 LOG_SOFTMAX / L2_NORMALIZATION
QELEM_HEADER = "tinyfuse_qelem.h"   # Kernel.headers of kernels calling TFLM's int8 DIV (tf_qdiv)
SIGNAL_HEADER = "tinyfuse_signal.h"   # Kernel.headers of the signal-library kernels (lower/signal.py)
RUNTIME_HEADERS = {QUANT_HEADER: QUANT_SOURCE, WCET_HEADER: runtime_dir() / "include" / "tinyfuse" / "wcet.h",
                   QELEM_HEADER: runtime_dir() / "include" / "tinyfuse" / "qelem.h",
                   SIMD_HEADER: runtime_dir() / "include" / "tinyfuse" / "simd.h",
                   HALF_HEADER: runtime_dir() / "include" / "tinyfuse" / "half.h",
                   HALF_IO_HEADER: runtime_dir() / "include" / "tinyfuse" / "half_io.h",
                   REQUANT_ARM_HEADER: runtime_dir() / "include" / "tinyfuse" / "requant_arm.h",
                   QUANT16_HEADER: runtime_dir() / "include" / "tinyfuse" / "quant16.h",
                   SIGNAL_HEADER: runtime_dir() / "include" / "tinyfuse" / "signal.h",

                   FIXEDPOINT_HEADER: runtime_dir() / "include" / "tinyfuse" / "fixedpoint.h"}
CONST_TYPES = {**C_TYPES, "uint16": "uint16_t"}    # + binary16 weights as bit patterns
# <NAME>_TYPE_<DTYPE> of the header: TFLite's TensorType numbers (schema.fbs), one per I/O dtype
ARENA_ALIGN = 16     # targets.ARENA_ALIGN (codegen may not import targets): what every entry point checks
TYPE_CODES = {"float32": 0, "int32": 2, "uint8": 3, "int64": 4, "bool": 6, "int16": 7, "int8": 9}
# defined when an input or output has the type
WIDE_TYPE_CODES = {"float16": 1, "bfloat16": 18, "float64": 10, "uint64": 12, "uint32": 15, "uint16": 16}


def _type_codes(result) -> dict[str, int]:
    used = {t.dtype for t in [*result.inputs, *result.outputs]}
    return {**TYPE_CODES, **{d: c for d, c in WIDE_TYPE_CODES.items() if d in used}}


def c_comment(text: str) -> str:
    """``text`` safe inside a C block comment (no ``*/``, printable ASCII)."""
    return "".join(c if " " <= c <= "~" else "?" for c in text).replace("*/", "* /")


def _isl_macros(kernels) -> list[str]:
    seen = []
    for k in kernels:
        for line in k.macros.splitlines():
            if line.strip() and line not in seen:
                seen.append(line)
    return seen


def _io_quant(result):
    """(inputs, outputs): a passes.io_quant.QParams or None per model input and output."""
    ins, outs = result.module.io_quant or ((), ())
    ins, outs = list(ins) or [None] * len(result.inputs), list(outs) or [None] * len(result.outputs)
    return ins, outs


def _io_json(infos, qparams) -> list[dict]:
    none = {"scale": None, "zero_point": None}
    return [vars(t) | {"shape": list(t.shape)} | (q.as_json() if q is not None else none)
            for t, q in zip(infos, qparams)]


def _step_api(result) -> dict | None:
    """What model/step.c.j2 renders for ``<name>_step`` (--max-step-instructions), or None: per kernel
    call its first step index (base), number of steps (count) and, when sliced, the range [lo, hi) of
    its split dimension cut into pieces of ``units`` (or, when not uniform, at the ``table`` bounds)."""
    budget = result.options.max_step_instructions if result.options is not None else 0
    if not budget:
        return None
    entries, base = [], 0
    for s in result.steps:
        count = len(s.pieces) or 1
        units = s.pieces[0][1] - s.pieces[0][0] if s.pieces else 0
        lo, hi = (s.pieces[0][0], s.pieces[-1][1]) if s.pieces else (0, 0)
        uniform = all(b - a == units for a, b in s.pieces[:-1]) and (not s.pieces or s.pieces[0][0] == lo)
        table = None if uniform else [a for a, _ in s.pieces] + [hi]
        entries.append(dict(step=s, base=base, count=count, units=units, lo=lo, hi=hi, table=table))
        base += count
    return dict(budget=budget, total=base, cursor=result.step_cursor_offset, entries=entries)


def _rows_api(result) -> dict | None:
    """What model/rows.c.j2 renders for ``<name>_push_rows`` (--input-rows N), or None: the row plan
    (memory/input_rows.RowPlan), the ring's and the cursor's arena offsets, the first step."""
    rows = getattr(result, "rows", None)
    if rows is None:
        return None
    return dict(plan=rows, per_call=result.options.input_rows, ring=result.plan.offsets["ring"],
                cursor=result.step_cursor_offset, first=result.steps[0])


def emit_sources(result, pool, version: str) -> dict[str, str]:
    """The generated files of a compiled model: <name>.h/.c/_weights.c, the build fragments (.mk, .cmake),
    the runtime headers its kernels include, and metadata.json."""
    name = result.name
    spec = getattr(result, "specialization", None)
    check_labels(getattr(result, "labels", ()), result.outputs)
    in_q, out_q = _io_quant(result)
    ctx = dict(
        name=name, NAME=name.upper(), version=version, model_hash=result.model_hash,
        arena_bytes=result.arena_bytes, inputs=result.inputs, outputs=result.outputs, steps=result.steps,
        ctype=lambda dtype: C_TYPES.get(dtype) or STORAGE_TYPES[dtype], macros=_isl_macros(result.kernels),
        constants=[(cname, CONST_TYPES[str(arr.dtype)], arr.size) for cname, arr in pool.arrays],
        weights_bytes=result.weights_bytes, macs=result.macs, placement=result.placement,
        in_q=in_q, out_q=out_q, states=result.states, state_bytes=result.state_bytes, io_caller=result.io_caller,
        step_api=_step_api(result), rows_api=_rows_api(result), type_codes=_type_codes(result), io_ids=io_macro_ids(result.inputs, result.outputs),
        arena_align=f"{name.upper()}_ALIGN" if result.placement.align >= ARENA_ALIGN else str(ARENA_ALIGN),
        labels=[c_string(n) for n in getattr(result, "labels", ())],
        specialized=[c_comment(line) for line in spec.lines()] if spec else [],
        extra_includes=_runtime_headers(result.kernels),
    )
    files = {
        f"{name}.h": template("model/model.h.j2").render(**ctx),
        f"{name}.c": template("model/model.c.j2").render(**ctx),
        f"{name}_weights.c": template("model/weights.c.j2").render(
            **ctx, nonfinite=any(arr.dtype.kind == "f" and not np.all(np.isfinite(arr)) for _, arr in pool.arrays),
            arrays=[(cname, CONST_TYPES[str(arr.dtype)], arr.size, c_array_body(arr)) for cname, arr in pool.arrays]),
        f"{name}.mk": template("model/model.mk.j2").render(**ctx),
        f"{name}.cmake": template("model/model.cmake.j2").render(**ctx),
    }
    for h in ctx["extra_includes"]:   # hand-written int8 arithmetic and SIMD helpers travel with the sources
        files[h] = RUNTIME_HEADERS[h].read_text()
    files["metadata.json"] = _metadata(result, version, sorted([*files, "metadata.json"]), (in_q, out_q), spec)
    return files


def _runtime_headers(kernels) -> list[str]:
    """The runtime headers the kernels include, in include order: quant.h first (when a qnn op runs),
    quant16.h after it (it uses tf_mbqm), then the others sorted."""
    uses_quant = any(op.startswith("qnn.") for k in kernels for op in k.ops)
    out = [QUANT_HEADER] if uses_quant else []
    half_io = {HALF_HEADER, HALF_IO_HEADER} if any(op in HALF_IO_OPS for k in kernels for op in k.ops) else set()
    out += sorted({h for k in kernels for h in k.headers} - {QUANT_HEADER} | half_io)
    if any("tf16_" in k.code for k in kernels):
        out.insert(1, QUANT16_HEADER)
    return out


def _rows_json(result) -> dict:
    rows = result.rows
    return {"rows_per_call": result.options.input_rows, "rows": rows.H, "row_bytes": rows.row_bytes,
            "ring_rows": rows.ring_rows, "ring_bytes": rows.ring_bytes, "ring_offset": result.plan.offsets["ring"],
            "cursor_offset": result.step_cursor_offset, "unit": rows.unit, "units": rows.units}


def _metadata(result, version: str, files: list[str], quant, spec) -> str:
    """metadata.json of a compiled model (README "metadata.json"): ``quant`` = (input, output) quantization."""
    in_q, out_q = quant
    return json.dumps({
        "version": MANIFEST_VERSION, "tinyfuse": version, "model": result.name, "model_hash": result.model_hash,
        "arena_bytes": result.arena_bytes, **({"io_buffers": "caller"} if result.io_caller else {}),
        **({"input_rows": _rows_json(result)} if getattr(result, "rows", None) is not None else {}),
        **({"state_bytes": result.state_bytes, "states": [
            vars(t) | {"shape": list(t.shape)} for t in result.states]} if result.states else {}),
        "naive_bytes": result.naive_bytes, "weights_bytes": result.weights_bytes,
        "macs": result.macs, "planner": result.plan.planner, "lower_bound": result.plan.lower_bound,
        "files": files,
        "inputs": _io_json(result.inputs, in_q), "outputs": _io_json(result.outputs, out_q),
        **({"labels": list(result.labels)} if getattr(result, "labels", ()) else {}),
        **({"specialization": spec.as_json()} if spec else {}),
        "kernels": [{"name": s.kernel.name, "ops": s.kernel.ops, "macs": s.kernel.macs, "in_offsets": s.in_offsets,
                     "out_offset": s.out_offset, "scratch_bytes": s.kernel.scratch_bytes, "kind": s.kernel.kind, "variant": s.kernel.variant,
                     **({"in_bases": s.in_bases, "out_base": s.out_base} if result.states or result.io_caller
                        else {})}
                    for s in result.steps],
        "buffers": [{"name": b.name, "size": b.size, "first": b.first, "last": b.last,
                     "offset": result.plan.offsets[b.name]} for b in result.buffers],
    }, indent=1) + "\n"
