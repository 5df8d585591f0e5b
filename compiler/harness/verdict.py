"""``tinyfuse run``'s verdict: the generated C's outputs against the oracles (harness/oracles.py).

The oracle is the model as shipped: onnxruntime, TFLite Micro or LiteRT on the original file. The
comparison gathers facts (the keys of :func:`compare`'s summary) and :func:`verdict` is the one
function of those facts that says match or MISMATCH and why:

- Float outputs match when ``max |C - oracle| <= FLOAT_RTOL * max |oracle|`` (FLOAT_RTOL = 1e-4; the
  "relative error" below is ``max |C - oracle| / max |oracle|``). The tolerance is the headroom float32
  summation order needs (other loop orders, fused multiply-adds) and is the same for every float
  build. A ``--weights-dtype float16`` build is judged by the same rule against the original float32
  weights: binary16 keeps 11 significant bits, so each weight moves by up to 2^-11 = 4.9e-4 of its
  value and the outputs typically move by 1e-4 to 1e-3 of their range. When that is above the
  tolerance the verdict is MISMATCH, naming the float16 rounding as the cause when the C is within
  the tolerance of the same oracle run on a copy of the model whose weights are rounded through
  binary16 (harness/half_oracle.py), and a wrong result otherwise.
- Int8 models match when every int8 kernel of the C run is within 1 LSB of the real arithmetic of the
  ops it fuses, on its own inputs from the run (harness/real_oracle.py, an oracle independent of
  tinyfuse's fixed-point arithmetic), and, when TFLite Micro ran (a .tflite model, ``--tflite-ref``),
  the outputs equal TFLM's. With ``--rounding single`` TFLM (double rounding) is not the target: a
  difference from it is reported as the expected consequence of that choice and the per-kernel real
  arithmetic decides. Equality with tinyfuse's fixed-point numpy reference is reported as extra
  information, never the verdict alone. The difference from onnxruntime (which requantizes in
  float) is shown as an LSB histogram after quantizing both outputs with the output's scale.
- When the model's oracle cannot run, the line saying why replaces its figures and the comparison is
  with the numpy reference alone (and, for int8, the per-kernel real-arithmetic oracle). A float .tflite
  that TFLM refuses is compared with LiteRT (the ``oracle`` key says which ran; one line says why TFLM did not).

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


def output_quant(result, index: int) -> tuple[float, int] | None:
    """(scale, zero_point) of output ``index``: (1, 0) for integer outputs; for a float output the
    model's own output quantization (``io_quant``) or the per-tensor qnn.dequantize that produces it
    (through views and the kernel's group); None when the output is not a dequantized int8 tensor."""
    from ..ir import Call, Function
    if not result.outputs[index].dtype.startswith("float"):
        return 1.0, 0
    outs = result.module.io_quant[1] if len(result.module.io_quant) > 1 else ()
    q = outs[index] if index < len(outs) else None
    if q is not None and q.per_tensor:
        return float(q.scale[0]), int(q.zero_point[0])
    e = result.module.main.outputs[index]
    while isinstance(e, Call):
        if isinstance(e.op, Function):
            e = e.op.body
        elif e.op == "qnn.dequantize":
            if np.size(e.attrs["scale"]) != 1 or np.size(e.attrs["zero_point"]) != 1:
                return None
            return float(np.asarray(e.attrs["scale"]).reshape(())), int(np.asarray(e.attrs["zero_point"]).reshape(()))
        elif e.op in ("reshape", "transpose", "squeeze", "expand_dims", "copy") and e.args:
            e = e.args[0]
        else:
            return None
    return None


def output_lsb(result, index: int) -> float:
    """Size of one output LSB: 1 for integer outputs, the output's scale for dequantized float ones
    (:func:`output_quant`; NaN when the output has no per-tensor scale)."""
    q = output_quant(result, index)
    return float("nan") if q is None else q[0]


def count_equal(outs, refs) -> int:
    """Elements equal to the reference: integers exactly, floats within 1e-5 x max |ref|."""
    return sum(int(np.sum(o == r)) if o.dtype.kind != "f" else
               int(np.sum(np.abs(o - r) <= 1e-5 * max(float(np.max(np.abs(r))), 1e-30)))
               for o, r in zip(outs, refs))


def lsb_histogram(result, outs, refs) -> tuple[Counter, int | None]:
    """{|difference| in output LSBs: count} and its maximum. Float outputs of an int8 model are
    quantized with the output's (scale, zero point) first, both the C's and the oracle's
    (``round(y / scale) + zero_point``, saturated): the C's dequantized int8 values come back exactly.
    The maximum is None when no output has a scale (then the histogram is empty)."""
    hist, max_lsb = Counter(), None
    for i, (o, r) in enumerate(zip(outs, refs)):
        q = output_quant(result, i)
        if q is None:
            continue
        scale, zp = q
        qo, qr = (np.clip(np.rint(np.asarray(v, np.float64) / scale) + zp, -2 ** 31, 2 ** 31 - 1).astype(np.int64)
                  for v in (o, r))
        lsb = np.abs(qo - qr).reshape(-1)
        hist.update(lsb.tolist())
        max_lsb = max(max_lsb or 0, int(lsb.max()) if lsb.size else 0)
    return hist, max_lsb


def _oracle(model_path, result, inputs, rounded: bool = False) -> tuple[str, list | None, str | None, str | None]:
    """(oracle that ran or was tried, its outputs or None, why it could not run, why TFLM was passed over)."""
    try:
        name, outs, passed_over = model_oracle(model_path, result, inputs, rounded)
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
    q = {"ref_exact": exact == total, "max_lsb_diff": None, "tflm_exact": None, "tflm_error": None,
         "tflm_equal": None, "tflm_max_lsb": None}
    lines = [f"int8: {exact}/{total} outputs equal the fixed-point numpy reference (rounding {rounding})"]
    if refs is not None:
        hist, q["max_lsb_diff"] = lsb_histogram(result, outs, refs)
        requant = "float requantization" if oracle != TFLM else "integer requantization"
        how = ", ".join(f"{k} LSB: {v}" for k, v in sorted(hist.items())) if hist else \
            "no output is a dequantized int8 tensor; compared in float above"
        lines.append(f"LSB difference vs {oracle} ({requant}, both quantized with the output's scale): {how}")
    want, q["tflm_error"], path = _tflm(tflite_ref, result, inputs, oracle, refs)
    if want is not None:
        same = sum(int(np.sum(o.reshape(-1) == w.reshape(-1))) for o, w in zip(outs, want))
        q["tflm_exact"], q["tflm_equal"] = same == total, same
        q["tflm_max_lsb"] = lsb_histogram(result, outs, want)[1]
        lines.append(f"TFLite Micro ({Path(path).name if path else 'the model itself'}): {same}/{total} outputs equal")
    elif q["tflm_error"]:
        lines.append(f"TFLite Micro cannot run {Path(path).name}: {q['tflm_error']}")
    return q, lines


REAL_KEYS = ("real_oracle_holds", "real_kernels_checked", "real_lsb0", "real_lsb1", "real_kernels_over",
             "real_kernels_unchecked", "real_max_lsb")


def real_oracle_figures(report) -> dict:
    """The ``run --json`` keys of the per-kernel real-arithmetic oracle (None for a float model)."""
    if report is None:
        return dict.fromkeys(REAL_KEYS)
    s = report.summary()
    return {"real_oracle_holds": report.holds, "real_kernels_checked": s["checked"], "real_lsb0": s["lsb0"],
            "real_lsb1": s["lsb1"], "real_kernels_over": s["over"], "real_kernels_unchecked": s["unchecked"],
            "real_max_lsb": s["max_lsb"]}


def run_real_oracle(model_path, host_result, inputs):
    """The per-kernel real-arithmetic oracle (harness/real_oracle.py) on the host build of the model."""
    import tempfile

    from .real_oracle import check_kernels, model_rounding
    with tempfile.TemporaryDirectory(prefix="tinyfuse_real_") as tmp:
        return check_kernels(host_result, inputs, tmp, model_rounding(model_path))


def _half_figures(model_path, result, inputs, outs, oracle_ran: bool) -> tuple[dict, list[str]]:
    """A float16 build against the same oracle on the binary16-rounded weights (the numpy reference
    of them when the oracle cannot run the model): half_compared_with, half_max_abs_diff, half_max_abs_ref."""
    name, refs, _, _ = _oracle(model_path, result, inputs, rounded=True) if oracle_ran else (None, None, None, None)
    who = name if refs is not None else "numpy reference"
    diff, ref_max = max_abs_diff(outs, refs if refs is not None else numpy_outputs(result, inputs, rounded=True))
    return ({"half_compared_with": who, "half_max_abs_diff": diff, "half_max_abs_ref": ref_max},
            [f"float16 weights: the original model is the oracle; against {who} on a copy whose float weights are "
             f"rounded through binary16 (what the C reads): max |diff| = {diff:.3g} (max |{who}| = {ref_max:.3g})"])


HALF_KEYS = ("half_compared_with", "half_max_abs_diff", "half_max_abs_ref")


def compare(model_path, result, inputs, outs, rounding: str = "double", tflite_ref=None,
            host_result=None) -> tuple[dict, list[str]]:
    """The facts of ``run``'s comparison and their verdict: (summary, report lines). See the module doc.
    ``host_result``: the host build whose kernels the per-kernel oracle traces (default ``result``,
    which must then be a host build).

    Keys: oracle, oracle_error, compared_with, max_abs_diff, max_abs_ref, rtol, weights_dtype, HALF_KEYS,
    quantized, rounding, ref_exact, max_lsb_diff, tflm_exact, tflm_equal, tflm_max_lsb, outputs_total,
    tflm_error, REAL_KEYS, outputs_match, verdict (:func:`verdict` of the others).
    """
    from .real_oracle import report_lines
    oracle, refs, error, passed_over = _oracle(model_path, result, inputs)
    lines = [] if error is None else [f"{oracle} cannot run the model ({error}); comparing with tinyfuse's "
                                      "numpy reference only"]
    if passed_over:
        lines.append(f"{passed_over}; {oracle} (reference kernels) is the oracle")
    diff, ref_max = max_abs_diff(outs, refs if refs is not None else numpy_outputs(result, inputs, rounded=False))
    weights = result.options.weights_dtype if result.options is not None else "float32"
    s = {"oracle": oracle, "oracle_error": error, "compared_with": oracle if refs is not None else "numpy reference",
         "max_abs_diff": diff, "max_abs_ref": ref_max, "rtol": FLOAT_RTOL, "weights_dtype": weights,
         **dict.fromkeys(HALF_KEYS), "quantized": is_quantized(result), "rounding": rounding,
         "ref_exact": None, "max_lsb_diff": None, "tflm_exact": None, "tflm_equal": None, "tflm_max_lsb": None,
         "outputs_total": int(sum(o.size for o in outs)), "tflm_error": None}
    real = None
    if s["quantized"]:
        q, qlines = _int8(result, inputs, outs, refs, oracle, rounding, tflite_ref)
        s.update(q)
        real = run_real_oracle(model_path, host_result or result, inputs)
        lines += qlines + report_lines(real, "" if host_result is None or host_result is result else "host build")
    elif weights == "float16":
        half, more = _half_figures(model_path, result, inputs, outs, refs is not None)
        s.update(half)
        lines += more
    s.update(real_oracle_figures(real))
    s["outputs_match"], s["verdict"] = verdict(s)
    return s, lines


def _relative(diff: float, ref: float) -> float:
    return diff / ref if ref else (0.0 if diff == 0 else float("inf"))


def _tol(rtol: float) -> str:
    """1e-4, not 0.0001."""
    return f"{rtol:.0e}".replace("e-0", "e-")


def _float_verdict(s: dict) -> tuple[bool, str]:
    who, rtol = s["compared_with"], _tol(s["rtol"])
    rel = _relative(s["max_abs_diff"], s["max_abs_ref"])
    within = s["max_abs_diff"] <= s["rtol"] * s["max_abs_ref"]
    head = f"max |tinyfuse - {who}| = {s['max_abs_diff']:.3g}  (max |{who}| = {s['max_abs_ref']:.3g}"
    if s["weights_dtype"] != "float16":
        return within, f"{head}, tolerance {rtol} x that: {'match' if within else 'MISMATCH'})"
    on = f"{who} on the original float32 weights"
    if within:
        return True, f"{head}): match: within {rtol} of {on}: max rel error {rel:.3g} (float16 weights)"
    half = s["half_max_abs_diff"]
    half_rel = _relative(half, s["half_max_abs_ref"]) if half is not None else float("inf")
    if half is not None and half <= s["rtol"] * s["half_max_abs_ref"]:
        return False, (f"{head}): MISMATCH: float16 weights change the result by {rel:.3g} (max rel error vs {on}), "
                       f"above the tolerance {rtol}; the C is within a relative {half_rel:.3g} of {s['half_compared_with']} "
                       "on the binary16-rounded weights, so the difference is the weights' rounding")
    return False, (f"{head}): MISMATCH: max rel error {rel:.3g} vs {on} and {half_rel:.3g} vs the "
                   f"binary16-rounded weights, above the tolerance {rtol}")


def _int8_verdict(s: dict) -> tuple[bool, str]:
    real = "every int8 kernel within 1 LSB of real arithmetic" if s["real_oracle_holds"] else \
        f"{s['real_kernels_over']} int8 kernel(s) over 1 LSB of real arithmetic" + \
        (f", {s['real_kernels_unchecked']} without real facts" if s["real_kernels_unchecked"] else "")
    ref = f"the fixed-point reference {'equal' if s['ref_exact'] else 'DIFFERS'}"
    total, equal = s["outputs_total"], s["tflm_equal"]
    differ = f"{total - equal}/{total} outputs differ" if equal is not None else ""
    single = s["rounding"] == "single"
    if s["tflm_exact"] is None:
        why = f"cannot run: {s['tflm_error']}" if s["tflm_error"] else "a .tflite model or --tflite-ref needed"
        tflm = f"TFLite Micro not compared ({why})"
    elif s["tflm_exact"]:
        tflm = f"the outputs equal to TFLite Micro ({total}/{total}{', even with --rounding single' if single else ''})"
    elif single:
        tflm = (f"differs from TFLite Micro as expected with --rounding single (TFLM uses double rounding): "
                f"{differ} by up to {s['tflm_max_lsb']} LSB")
    else:
        tflm = f"{differ} from TFLite Micro (up to {s['tflm_max_lsb']} LSB)"
    if not s["real_oracle_holds"]:
        return False, f"int8 verdict: MISMATCH ({real}; {tflm}; {ref})"
    if s["tflm_exact"] is False and not single:
        return False, f"int8 verdict: MISMATCH ({tflm}, although {real}; {ref})"
    if s["tflm_exact"] is False:
        return True, f"int8 verdict: match ({tflm}; {real}; {ref})"
    joined = f"{real} and {tflm}" if s["tflm_exact"] else f"{real}; {tflm}"
    return True, f"int8 verdict: match ({joined}; {ref})"


def verdict(s: dict) -> tuple[bool, str]:
    """(match, the verdict line) from the facts of :func:`compare` (its summary keys; module doc).
    Float: max_abs_diff, max_abs_ref, compared_with, rtol, weights_dtype and, for float16 weights,
    half_max_abs_diff / half_max_abs_ref / half_compared_with. Int8 (``quantized``): real_oracle_holds,
    real_kernels_over, real_kernels_unchecked, tflm_exact, tflm_equal, tflm_max_lsb, tflm_error,
    outputs_total, rounding, ref_exact."""
    return _int8_verdict(s) if s["quantized"] else _float_verdict(s)


def verdict_line(s: dict) -> str:
    """The verdict line of ``run``'s text report (:func:`verdict` of the summary's facts)."""
    return verdict(s)[1]


def output_lines(result, outs) -> list[str]:
    """Per model output: its name, shape and dtype, then its top-5 classes (a [1, N] output; with their
    names from ``result.labels``, --labels) or first values."""
    lines = []
    for t, o in zip(result.outputs, outs):
        lines.append(f"output '{t.name}' {list(t.shape)} {t.dtype}")
        flat = o.reshape(-1)
        if o.ndim == 2 and o.shape[0] == 1 and 1 < o.shape[1] <= 1000:
            names = result.labels if t is result.outputs[0] and len(result.labels) == o.shape[-1] else ()
            lines.append("  top-5: " + ", ".join(f"class {i}{f' ({names[i]})' if names else ''}: {flat[i]:.6g}"
                                                 for i in top_classes(o)))
        else:
            lines.append("  first values: " + ", ".join(f"{v:.6g}" for v in flat[:8]))
    return lines


def top_classes(o: np.ndarray, k: int = 5) -> list[int]:
    """Indices of the ``k`` largest values of ``o`` (stable: ties keep index order). Sorted in float64:
    ``argsort(-x)`` of an int8 array overflows at -128 (-(-128) is -128 in int8)."""
    return np.argsort(-o.reshape(-1).astype(np.float64), kind="stable")[:k].tolist()
