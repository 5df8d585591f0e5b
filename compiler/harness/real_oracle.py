"""An independent per-kernel oracle for int8 models: every kernel's int8 output from the C run is
checked against the *real-arithmetic* semantics of the ops it fuses, on the kernel's own inputs
from the same C run.

The real semantics of a kernel (QUANT.md's definition of what a quantized model means):

- integer ops (qnn.conv2d, qnn.matmul, qnn.batch_matmul, the int32 bias add, clip, max pools,
  reshapes, concatenation) are exact in int64: they are the real arithmetic;
- qnn.lut: the float function the table stands for (attribute ``real_fn``: op, attrs, scales and
  zero points) on the dequantized input in float64, quantized: the table itself (tinyfuse's, or
  TFLM's integer HARD_SWISH / LEAKY_RELU arithmetic for TFLite) is not trusted;
- qnn.requantize: ``y = sat(round((x − zp_in) · M) + zp_out)`` with the real multiplier M in float64
  (attribute ``real_multiplier``, e.g. s_x·s_w[c]/s_out, set where the scales are known:
  legalize_qdq, the TFLite frontend) instead of the Q31 multiplier and shift the C uses;
- qnn.add / qnn.mul: the dequantized inputs ``(q − z)·s`` added / multiplied in float64 (attribute
  ``real_scales``), quantized with the output's scale and zero point;
- qnn.softmax, qnn.avg_pool2d, qnn.layer_norm: the float op of the dequantized inputs in float64,
  quantized with the output's scale and zero point (layer norm's gamma/s_out and beta/s_out are the
  float32 tables of the IR, the closest real facts it keeps);
- qnn.quantize / qnn.dequantize: ``round(x / s) + z`` and ``(q − z)·s`` in float64.

``round`` is the model's: half to even for ONNX (QuantizeLinear), half away from zero for TFLite
(TfLiteRound). A kernel passes when every output element is within 1 LSB of its real value; the
1-LSB elements are counted (fixed-point rounding, half-to-even ties and the Q31 multiplier differ
from real arithmetic by at most 1 LSB). Kernels with a float output are outside this oracle (the
end-to-end comparison with onnxruntime covers them). An int8 kernel whose requantize, add, mul or
LUT lacks its real facts cannot be checked and fails: the oracle never falls back to tinyfuse's own
fixed-point arithmetic.

No exceptions are needed on the models measured (benchmarks/real_oracle.py): TFLM's fixed-point
softmax (gemmlowp exp, Q12.19 sum) and its average pool (integer sum, rounded division) stay within
1 LSB of the real values there; a kernel over 1 LSB is always a failure.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import quant
from ..frontend.detect import model_format
from ..ir import Call, Constant, Function, Tuple, Var, post_order
from ..ir.op import get_op

INT_DTYPES = ("int8", "uint8")
MAX_LSB = 1      # tolerance of every int8 kernel against real arithmetic, in output LSBs


class MissingRealFacts(Exception):
    """A qnn op of the kernel carries no real-arithmetic attribute (``str(e)`` names it)."""


def model_rounding(model_path) -> str:
    """'half_even' for an ONNX model (QuantizeLinear), 'half_away' for TFLite (TfLiteRound)."""
    return "half_away" if model_format(model_path) == "tflite" else "half_even"


def _round(x, rounding: str) -> np.ndarray:
    x = np.asarray(x, np.float64)
    return np.rint(x) if rounding == "half_even" else quant.round_half_away(x)


def _quantize(real_over_scale, zero_point: int, rounding: str, dtype: str = "int8") -> np.ndarray:
    return quant.saturate(_round(real_over_scale, rounding) + int(zero_point), dtype)


def _facts(node: Call, key: str):
    v = node.attrs.get(key)
    if v is None:
        raise MissingRealFacts(f"{node.op} '{node.span}' has no {key}")
    return np.asarray(v, np.float64)


def _requantize(node, args, rounding):
    x, mult = args[0], args[1]
    m = _facts(node, "real_multiplier").reshape(np.shape(mult) if np.size(mult) > 1 else ())
    a = node.attrs
    return _quantize((x.astype(np.int64) - a["input_zero_point"]) * m, a["output_zero_point"], rounding,
                     a["out_dtype"])


def _binary(node, args, rounding):
    (a, b), p = args, node.attrs
    sa, sb, so = _facts(node, "real_scales")
    ra = (a.astype(np.int64) - p["a_zero_point"]).astype(np.float64)
    rb = (b.astype(np.int64) - p["b_zero_point"]).astype(np.float64)
    real = ra * sa + rb * sb if node.op == "qnn.add" else ra * rb * (sa * sb)
    return _quantize(real / so, p["out_zero_point"], rounding)


def _softmax(node, args, rounding):
    p = node.attrs
    r = (args[0].astype(np.int64) - p["in_zero_point"]) * np.float64(p["in_scale"])
    e = np.exp(r - r.max(axis=p["axis"], keepdims=True))
    return _quantize(e / e.sum(axis=p["axis"], keepdims=True) / np.float64(p["out_scale"]), p["out_zero_point"],
                     rounding)


def _avg_pool(node, args, rounding):
    """Same input and output quantization: real mean of (q − z)·s over s, plus z = mean of q."""
    total = get_op("nn.avg_pool2d").compute(args[0].astype(np.float64), **node.attrs)
    return _quantize(total, 0, rounding)


def _layer_norm(node, args, rounding):
    x, g, b = args
    p = node.attrs
    r = (x.astype(np.int64) - p["in_zero_point"]).astype(np.float64) * np.float64(p["scale"])
    rows = r.reshape(int(np.prod(r.shape[:p["axis"]], dtype=np.int64)), -1)
    n = rows.shape[1]
    eps = np.float64(p["eps_l2"]) / (n * n)
    mean, var = rows.mean(axis=1, keepdims=True), rows.var(axis=1, keepdims=True)
    y = (rows - mean) / np.sqrt(var + eps) * g.astype(np.float64) + b.astype(np.float64)
    return _quantize(y, p["out_zero_point"], rounding).reshape(x.shape)


def _lut(node, args, rounding):
    """y = quantize(f(dequantize(x))) with the float op f the table was made from (``real_fn``)."""
    facts = node.attrs.get("real_fn")
    if facts is None:
        raise MissingRealFacts(f"qnn.lut '{node.span}' has no real_fn")
    op, attrs, s_in, z_in, s_out, z_out = facts
    r = (args[0].astype(np.int64) - z_in).astype(np.float64) * np.float64(s_in)
    f = np.asarray(get_op(op).compute(r, **dict(attrs)), np.float64)
    return _quantize(f / np.float64(s_out), z_out, rounding)


def _quantize_op(node, args, rounding):
    p = node.attrs
    s = np.asarray(p["scale"], np.float64)
    z = np.asarray(p["zero_point"], np.int64)
    x = args[0].astype(np.float64)
    if s.size > 1:
        shape = [1] * x.ndim
        shape[p["axis"] % x.ndim] = s.size
        s, z = s.reshape(shape), z.reshape(shape)
    return quant.saturate(_round(x / s, rounding) + z, p["out_dtype"])


def _dequantize(node, args, rounding):
    p = node.attrs
    s, z = np.asarray(p["scale"], np.float64), np.asarray(p["zero_point"], np.int64)
    q = args[0].astype(np.int64)
    if s.size > 1:
        shape = [1] * q.ndim
        shape[p["axis"] % q.ndim] = s.size
        s, z = s.reshape(shape), z.reshape(shape)
    return (q - z) * s


def _prelu(node, args, rounding):
    """y = x for x ≥ 0, α·x below, on the dequantized x and α (PRELU), quantized with the output's scale."""
    facts = node.attrs.get("real_scales")
    if facts is None:
        raise MissingRealFacts(f"qnn.prelu '{node.span}' has no real_scales")
    s_x, s_a, s_out = (np.float64(v) for v in facts)
    p = node.attrs
    x = (args[0].astype(np.int64) - p["input_zero_point"]) * s_x
    a = (args[1].astype(np.int64) - p["alpha_zero_point"]) * s_a
    return _quantize(np.where(x >= 0, x, x * a) / s_out, p["output_zero_point"], rounding)


def _resize(node, args, rounding):
    """int8 nn.resize2d: nearest copies elements (exact); linear interpolates the int8 values in
    float64 with the float tables' weights (w0 + w1 = 1, so the zero point cancels and the scale is
    kept: ONNX DequantizeLinear → Resize → QuantizeLinear), rounded once."""
    opdef, x = get_op("nn.resize2d"), args[0]
    a = {**opdef.attrs, **node.attrs}
    if a["method"] == "nearest":
        return opdef.compute(x, **node.attrs)
    hax, wax = (2, 3) if a["layout"] == "NCHW" else (1, 2)
    ty, tx = opdef.tables(x.shape, a, "float32")

    def along(arr, t, ax):
        shape = [1] * arr.ndim
        shape[ax] = -1
        w0, w1 = (np.asarray(w, np.float64).reshape(shape) for w in (t.w0, t.w1))
        return arr.take(t.i0, ax) * w0 + arr.take(t.i1, ax) * w1

    return _quantize(along(along(x.astype(np.float64), ty, hax), tx, wax), 0, rounding)


def _squared_difference(node, args, rounding):
    """((a − z_a)·s_a − (b − z_b)·s_b)² over s_out (TFLite SQUARED_DIFFERENCE int8)."""
    sa, sb, so = _facts(node, "real_scales")
    p = node.attrs
    d = (args[0].astype(np.int64) - p["a_zero_point"]) * sa - (args[1].astype(np.int64) - p["b_zero_point"]) * sb
    return _quantize(d * d / so, p["out_zero_point"], rounding)


def _add_n(node, args, rounding):
    """Σ (q_j − z)·s − z·s over s_out: TFLM's int8 ADD_N defines the sum with one more −z term (its sum
    starts from the rescaled input offset; ops/qelemwise.py)."""
    s, so = _facts(node, "real_scales")
    z = node.attrs["zero_point"]
    total = sum(a.astype(np.int64) - z for a in args) - z
    return _quantize(total * s / so, node.attrs["out_zero_point"], rounding)


REAL_RULES = {
    "qnn.requantize": _requantize, "qnn.add": _binary, "qnn.mul": _binary, "qnn.softmax": _softmax,
    "qnn.avg_pool2d": _avg_pool, "qnn.layer_norm": _layer_norm, "qnn.lut": _lut, "qnn.quantize": _quantize_op,
    "qnn.dequantize": _dequantize, "qnn.prelu": _prelu, "nn.resize2d": _resize,
    "qnn.squared_difference": _squared_difference, "qnn.add_n": _add_n,
}


def _interior_lsb(node, fx, rv) -> int:
    if str(np.asarray(fx).dtype) not in INT_DTYPES or not np.size(fx):
        return 0
    return int(np.max(np.abs(np.asarray(fx).astype(np.int64) - np.asarray(rv).astype(np.int64))))


def evaluate_real(fn: Function, inputs: list[np.ndarray], rounding: str, fixed: list | None = None):
    """The real-arithmetic value of one kernel (a fused group ``fn``) on ``inputs`` (one array per
    parameter): (value, interior): ``interior`` is the largest |fixed point − real| in LSBs over the
    int8 stage outputs inside the kernel.

    A kernel of several stages (a poly-fused conv → conv chain, a conv whose requantized output feeds
    a residual qnn.add) computes int8 values the C run does not expose. Each stage is evaluated in
    real arithmetic on *its* inputs: the kernel's inputs, or, inside the kernel, the previous stage's
    fixed-point output (``compute``), which is itself checked against its real value (``interior``).
    Evaluating the whole chain in real arithmetic instead would compare the C with a different
    computation: one interior LSB grows by the next stage's weights (3 LSB on pretrainedResnet).
    Ops in REAL_RULES use their real semantics (module doc), every other op its numpy ``compute``
    (integer ops exact). Raises MissingRealFacts."""
    fx = {id(p): np.asarray(x) for p, x in zip(fn.params, inputs if fixed is None else fixed)}
    rv = {id(p): np.asarray(x) for p, x in zip(fn.params, inputs)}
    interior = 0
    for node in post_order(fn.body):
        if isinstance(node, Var):
            continue
        if isinstance(node, Constant):
            fx[id(node)] = rv[id(node)] = node.value
        elif isinstance(node, Tuple):
            fx[id(node)] = tuple(fx[id(f)] for f in node.fields)
            rv[id(node)] = tuple(rv[id(f)] for f in node.fields)
        elif isinstance(node, Call):
            args = [fx[id(a)] for a in node.args]
            if isinstance(node.op, Function):
                rv[id(node)], inner = evaluate_real(node.op, [rv[id(a)] for a in node.args], rounding, args)
                fx[id(node)] = _evaluate_fixed(node.op, args)
                interior = max(interior, inner)
                continue
            opdef = get_op(node.op)
            fx[id(node)] = opdef.compute(*args, **node.attrs)
            if node.op == "horizontal":          # sibling branches packed in one kernel: each branch real
                parts, inner = evaluate_real(node.attrs["branches"].fn, [rv[id(a)] for a in node.args], rounding,
                                             args)
                rv[id(node)] = np.concatenate([np.asarray(v).reshape(-1) for v in parts])
                interior = max(interior, inner)
            elif node.op in REAL_RULES:
                rv[id(node)] = REAL_RULES[node.op](node, args, rounding)
                interior = max(interior, _interior_lsb(node, fx[id(node)], rv[id(node)]))
            else:
                _require_exact(node, opdef)
                rv[id(node)] = opdef.compute(*(rv[id(a)] for a in node.args), **node.attrs)
    return rv[id(fn.body)], interior


# ops outside REAL_RULES whose int8 result its numpy compute gives exactly (no rounding): data movement
# and clamps (a ``horizontal`` container is evaluated branch by branch above). Int8 concatenate and
# nn.pad copy elements (legalize_qdq requantizes the operands first, and an int8 pad's pad_value is
# already the integer round(v/s_out)+z_out), but are not ``moves_data`` ops (legalize_qdq treats those
# as scale-preserving): named here.
EXACT_COPIES = ("concatenate", "nn.pad")
# ops whose int8 result is one of their int8 operands (TFLite MAXIMUM, MINIMUM, SELECT_V2 and the int8 forms of
# ONNX Max, Min, Where: their operands in the output's quantization) or C's conversion of it (CAST)
EXACT_PICKS = ("maximum", "minimum", "select", "cast")


def _require_exact(node, opdef) -> None:
    """MissingRealFacts for an op with an int8/uint8 result that rounds and has no real rule: its
    fixed-point ``compute`` would otherwise stand in for real arithmetic."""
    if str(node.ty.dtype) not in INT_DTYPES:
        return
    if opdef.moves_data or opdef.is_view or opdef.clamps or node.op in EXACT_COPIES + EXACT_PICKS:
        return
    raise MissingRealFacts(f"{node.op} '{node.span}' has an int8 result and no real-arithmetic rule")


def _evaluate_fixed(fn: Function, inputs: list) -> np.ndarray:
    from ..ir.interpreter import evaluate
    return evaluate(fn, inputs)[0]


@dataclass
class KernelCheck:
    """One int8 kernel's C output against its real-arithmetic value, in output LSBs."""

    index: int
    kernel: str
    elements: int
    lsb0: int = 0
    lsb1: int = 0
    max_lsb: int = 0
    interior_lsb: int = 0            # largest |fixed point − real| of the stages inside the kernel
    missing: str | None = None       # why the kernel could not be checked (no real facts)

    @property
    def holds(self) -> bool:
        return self.missing is None and max(self.max_lsb, self.interior_lsb) <= MAX_LSB


@dataclass
class RealOracleReport:
    """Every int8 kernel's check; ``float_kernels`` counts the kernels with a float output."""

    kernels: list[KernelCheck] = field(default_factory=list)
    float_kernels: int = 0

    @property
    def holds(self) -> bool:
        return all(k.holds for k in self.kernels)

    def summary(self) -> dict:
        """checked, lsb0, lsb1, over (kernels beyond 1 LSB), unchecked (missing facts), max_lsb."""
        return {"checked": len(self.kernels), "lsb0": sum(k.lsb0 for k in self.kernels),
                "lsb1": sum(k.lsb1 for k in self.kernels),
                "over": sum(max(k.max_lsb, k.interior_lsb) > MAX_LSB for k in self.kernels),
                "unchecked": sum(k.missing is not None for k in self.kernels),
                "max_lsb": max((max(k.max_lsb, k.interior_lsb) for k in self.kernels), default=0)}

    def first_failure(self) -> KernelCheck | None:
        return next((k for k in self.kernels if not k.holds), None)


def kernel_inputs(result, inputs: list[np.ndarray], traced: list[np.ndarray]) -> list[list[np.ndarray]]:
    """Each kernel's input arrays as the C run produced them: the traced outputs of the kernels it
    reads (views between kernels evaluated on them), the model inputs, constants."""
    main = result.module.main
    env = {id(p): np.asarray(x) for p, x in zip(main.params, inputs)}
    env.update({id(s.call): t for s, t in zip(result.steps, traced)})
    for node in post_order(main.body):
        if id(node) in env or isinstance(node, Var):
            continue
        if isinstance(node, Constant):
            env[id(node)] = node.value
        elif isinstance(node, Tuple):
            env[id(node)] = tuple(env[id(f)] for f in node.fields)
        elif isinstance(node, Call) and isinstance(node.op, str):
            env[id(node)] = get_op(node.op).compute(*(env[id(a)] for a in node.args), **node.attrs)
    return [[env[id(a)] for a in s.call.args] for s in result.steps]


def check_traced(result, inputs, traced, rounding: str) -> RealOracleReport:
    """The oracle on a given trace (``traced``: every kernel's C output, in kernel order)."""
    report = RealOracleReport()
    for i, (s, got, args) in enumerate(zip(result.steps, traced, kernel_inputs(result, inputs, traced))):
        if str(got.dtype) not in INT_DTYPES:
            report.float_kernels += 1
            continue
        k = KernelCheck(i, s.kernel.name, int(got.size))
        try:
            want, k.interior_lsb = evaluate_real(s.call.op, args, rounding)
        except MissingRealFacts as e:
            k.missing = str(e)
        else:
            lsb = np.abs(got.astype(np.int64) - np.asarray(want).astype(np.int64).reshape(got.shape))
            k.lsb0, k.lsb1 = int(np.sum(lsb == 0)), int(np.sum(lsb == 1))
            k.max_lsb = int(lsb.max()) if lsb.size else 0
        report.kernels.append(k)
    return report


def check_kernels(result, inputs: list[np.ndarray], workdir: str | Path, rounding: str,
                  cc: str = "gcc") -> RealOracleReport:
    """Trace the generated C of the host build ``result`` on ``inputs`` (harness/per_layer.py) and
    check every int8 kernel against its real-arithmetic value. ``rounding``: 'half_even' (ONNX) or
    'half_away' (TFLite), see :func:`model_rounding`."""
    from .per_layer import trace_kernels
    traced = trace_kernels(result, inputs, workdir, cc)
    return check_traced(result, inputs, traced, rounding)


def report_lines(report: RealOracleReport, where: str = "") -> list[str]:
    """The text of ``run``: one summary line, plus the first kernel that fails. ``where`` names the
    build traced when it is not the one run (e.g. "host build")."""
    s = report.summary()
    lines = [f"real-arithmetic oracle{f' ({where})' if where else ''}: {s['checked']} int8 kernels checked, {s['lsb0']} elements exact, "
             f"{s['lsb1']} within 1 LSB, {s['over']} kernels over 1 LSB"
             + (f", {s['unchecked']} without real facts" if s["unchecked"] else "")]
    bad = report.first_failure()
    if bad is not None:
        why = bad.missing or f"{max(bad.max_lsb, bad.interior_lsb)} LSB from real arithmetic"
        lines.append(f"  first failing kernel: #{bad.index} {bad.kernel} ({why})")
    return lines
