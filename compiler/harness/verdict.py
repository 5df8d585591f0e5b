"""``tinyfuse run``'s verdict: the generated C's outputs against the oracles (harness/oracles.py).

- Float outputs match when ``max |C - oracle| <= 1e-4 * max |oracle|``.
- Int8 models match when every output equals tinyfuse's fixed-point numpy reference (the exact
  oracle of the integer arithmetic, docs QUANT.md) and, when TFLite Micro ran, TFLM's outputs too;
  the difference from onnxruntime (which requantizes in float) is shown in output LSBs.
- When the model's oracle cannot run, the line saying why replaces its figures and the comparison is
  with the numpy reference alone. A float .tflite that TFLM refuses is compared with LiteRT (the
  ``oracle`` key says which ran; one line says why TFLM did not).

:func:`compare` returns the same keys for every model (None where a figure does not apply), so
``run --json`` is a stable contract.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from .oracles import TFLM, OracleUnavailable, model_oracle, numpy_outputs, oracle_name, tflm_outputs

FLOAT_RTOL = 1e-4


def is_quantized(result) -> bool:
    """True when some kernel runs a qnn.* (integer) op."""
    return any(op.startswith("qnn.") for k in result.kernels for op in k.ops)


def max_abs_diff(outs, refs) -> tuple[float, float]:
    """(max |out - ref|, max |ref|) over all outputs, in float64."""
    diff = max((float(np.max(np.abs(o.astype(np.float64) - r.astype(np.float64)))) if o.size else 0.0
                for o, r in zip(outs, refs)), default=0.0)
    ref_max = max((float(np.max(np.abs(r.astype(np.float64)))) if r.size else 0.0 for r in refs), default=0.0)
    return diff, ref_max


def output_lsb(result, index: int) -> float:
    """Size of one output LSB: 1 for integer outputs, the scale of a final dequantize for float ones
    (NaN when the output is not a per-tensor dequantize)."""
    from ..ir import Call, Function
    if not result.outputs[index].dtype.startswith("float"):
        return 1.0
    e = result.module.main.outputs[index]
    while isinstance(e, Call) and e.op == "reshape":
        e = e.args[0]
    if isinstance(e, Call) and isinstance(e.op, Function):
        body = e.op.body
        if isinstance(body, Call) and body.op == "qnn.dequantize" and np.ndim(body.attrs["scale"]) == 0:
            return float(body.attrs["scale"])
    return float("nan")


def count_equal(outs, refs) -> int:
    """Elements equal to the reference: integers exactly, floats within 1e-5 x max |ref|."""
    return sum(int(np.sum(o == r)) if o.dtype.kind != "f" else
               int(np.sum(np.abs(o - r) <= 1e-5 * max(float(np.max(np.abs(r))), 1e-30)))
               for o, r in zip(outs, refs))


def lsb_histogram(result, outs, refs) -> tuple[Counter, int]:
    """{|difference| in output LSBs: count} and its maximum."""
    hist, max_lsb = Counter(), 0
    for i, (o, r) in enumerate(zip(outs, refs)):
        lsb = np.rint(np.abs(o.astype(np.float64) - r.astype(np.float64)) / output_lsb(result, i))
        if np.all(np.isfinite(lsb)):
            hist.update(lsb.astype(int).reshape(-1).tolist())
            max_lsb = max(max_lsb, int(lsb.max()) if lsb.size else 0)
    return hist, max_lsb


def _oracle(model_path, result, inputs) -> tuple[str, list | None, str | None, str | None]:
    """(oracle that ran or was tried, its outputs or None, why it could not run, why TFLM was passed over)."""
    try:
        name, outs, passed_over = model_oracle(model_path, result, inputs)
        return name, outs, None, passed_over
    except OracleUnavailable as e:
        return oracle_name(model_path), None, str(e), None


def _tflm(tflite_ref, result, inputs, oracle: str, refs) -> tuple[list | None, str | None, str | None]:
    """TFLM's outputs (from the model's own oracle run when that was TFLM), error, file name."""
    if oracle == TFLM and tflite_ref is None:
        return refs, None, None
    if tflite_ref is None:
        return None, None, None
    try:
        return tflm_outputs(tflite_ref, inputs, len(result.outputs), 2 * result.arena_bytes), None, tflite_ref
    except OracleUnavailable as e:
        return None, str(e), tflite_ref


def _int8(result, inputs, outs, refs, oracle: str, rounding: str, tflite_ref) -> tuple[dict, list[str]]:
    total = sum(o.size for o in outs)
    exact = count_equal(outs, numpy_outputs(result, inputs))
    q = {"ref_exact": exact == total, "max_lsb_diff": None, "tflm_exact": None, "tflm_error": None}
    lines = [f"int8: {exact}/{total} outputs equal the fixed-point numpy reference (rounding {rounding})"]
    if refs is not None:
        hist, q["max_lsb_diff"] = lsb_histogram(result, outs, refs)
        requant = "float requantization" if oracle != TFLM else "integer requantization"
        lines.append(f"LSB difference vs {oracle} ({requant}): "
                     + ", ".join(f"{k} LSB: {v}" for k, v in sorted(hist.items())))
    want, q["tflm_error"], path = _tflm(tflite_ref, result, inputs, oracle, refs)
    if want is not None:
        same = sum(int(np.sum(o.reshape(-1) == w.reshape(-1))) for o, w in zip(outs, want))
        q["tflm_exact"] = same == total
        lines.append(f"TFLite Micro ({Path(path).name if path else 'the model itself'}): {same}/{total} outputs equal")
    elif q["tflm_error"]:
        lines.append(f"TFLite Micro cannot run {Path(path).name}: {q['tflm_error']}")
    return q, lines


def compare(model_path, result, inputs, outs, rounding: str = "double", tflite_ref=None) -> tuple[dict, list[str]]:
    """The verdict of ``run``: (summary figures, report lines). See the module doc for the rules.

    Keys: oracle, oracle_error, compared_with, max_abs_diff, max_abs_ref, quantized, ref_exact,
    max_lsb_diff, tflm_exact, tflm_error, outputs_match.
    """
    oracle, refs, error, passed_over = _oracle(model_path, result, inputs)
    lines = [] if error is None else [f"{oracle} cannot run the model ({error}); comparing with tinyfuse's "
                                      "numpy reference only"]
    if passed_over:
        lines.append(f"{passed_over}; {oracle} (reference kernels) is the oracle")
    against = refs if refs is not None else numpy_outputs(result, inputs)
    diff, ref_max = max_abs_diff(outs, against)
    floating = result.outputs[0].dtype.startswith("float")
    match = diff <= FLOAT_RTOL * ref_max if floating else diff == 0
    s = {"oracle": oracle, "oracle_error": error, "compared_with": oracle if refs is not None else "numpy reference",
         "max_abs_diff": diff, "max_abs_ref": ref_max, "quantized": is_quantized(result),
         "ref_exact": None, "max_lsb_diff": None, "tflm_exact": None, "tflm_error": None}
    if s["quantized"]:
        q, qlines = _int8(result, inputs, outs, refs, oracle, rounding, tflite_ref)
        s.update(q)
        lines += qlines
        match = q["ref_exact"] and q["tflm_exact"] is not False
    s["outputs_match"] = bool(match)
    return s, lines


def verdict_line(s: dict) -> str:
    """The last line of ``run``'s text report."""
    if not s["quantized"]:
        who = s["compared_with"]
        return (f"max |tinyfuse - {who}| = {s['max_abs_diff']:.3g}  (max |{who}| = {s['max_abs_ref']:.3g}, "
                f"tolerance 1e-4 x that: {'match' if s['outputs_match'] else 'MISMATCH'})")
    return (f"int8 verdict: {'match' if s['outputs_match'] else 'MISMATCH'} (exact vs the fixed-point reference"
            f"{' and TFLite Micro' if s['tflm_exact'] is not None else ''})")


def top_classes(o: np.ndarray, k: int = 5) -> list[int]:
    """Indices of the ``k`` largest values of ``o`` (stable: ties keep index order). Sorted in float64:
    ``argsort(-x)`` of an int8 array overflows at -128 (-(-128) is -128 in int8)."""
    return np.argsort(-o.reshape(-1).astype(np.float64), kind="stable")[:k].tolist()
