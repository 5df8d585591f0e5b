"""legalize_qdq: dequantize → float op → quantize becomes int8 qnn ops (TVM's
FakeQuantizationToInteger, with TFLite int8 arithmetic).

For each ``qnn.quantize(y)`` the pass peels the activations between the op and the quantize
(relu, clip: they become the output clamp) and rewrites the op when all its data inputs are
dequantized int8 tensors and its weights dequantized int8 constants:

    quantize(relu(add(conv2d(dq(x), dq(W)), dq(B))))
      → clip(qnn.requantize(add(qnn.conv2d(x, W), B), M, shift), lo, hi)

M = double(s_x)·double(s_w[c]) / double(s_out) per output channel (never the bias scale; QUANT.md),
encoded as Q31 multiplier + shift at compile time. Pools, reshapes, transposes and concat move to
int8 unchanged when the scales agree (else an explicit requantize); add and mul use the TFLite
arithmetic; softmax and layer norm have their own int8 ops (layer norm's exact arithmetic:
ops/norm.py); a matmul of two activations becomes qnn.batch_matmul + one requantize; mean and
subtract get TFLM's MEAN and SUB (legalize_qdq_misc.py); other unary
float ops (gelu, erf, sigmoid ...) become 256-entry lookup tables.
A float op with no int8 form stays float and a warning names it. Dequantized constants that remain
(weights of float ops, as in hybrid models) are folded into float constants.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir import Call, Constant, Expr, IRModule, Var, call, get_op, post_order, rewrite, users
from ..ops import ops_where
from ..ops.resize_taps import uses_taps
from .legalize_prelu import prelu_rule
from .legalize_qdq_misc import mean_rule, sub_rule
from .rules import QDQ_RULES, qdq_rule, register
from .shift_uint8 import fold_shifts, shift_uint8

ACTIVATIONS = ops_where(lambda d: d.clamps)       # relu, clip
LUT_OPS = ops_where(lambda d: d.lut)              # sigmoid, tanh, hard_sigmoid, hard_swish, leaky_relu, gelu, erf
MOVE_OPS = ops_where(lambda d: d.moves_data)      # reshape, transpose, max_pool2d


def _constant_only(e: Expr) -> bool:
    """True when ``e`` reads no model input or state (an SSD's tiled anchor constants): fold_constant computes it
    at compile time, so no kernel runs in float for it."""
    return not any(isinstance(n, Var) for n in post_order(e))


def _is(e, *ops) -> bool:
    return isinstance(e, Call) and isinstance(e.op, str) and e.op in ops


def _scalar(v) -> float:
    a = np.asarray(v).reshape(-1)
    return float(a[0]) if a.size == 1 or np.all(a == a[0]) else None


#: the activation dtypes legalize_qdq gives integer kernels: the TFLite int8 spec and 16x8 (int16 activations)
QDTYPES = ("int8", "int16")


def _dq_tensor(e: Expr, dtypes=("int8",)):
    """(tensor, scale, zero_point) if e = dequantize(a per-tensor activation of one of ``dtypes``), else
    None. A rule that has the int16 (16x8) arithmetic too asks for ``QDTYPES``."""
    if _is(e, "qnn.dequantize") and e.args[0].ty.dtype in dtypes and not isinstance(e.args[0], Constant):
        s, z = _scalar(e.attrs["scale"]), _scalar(e.attrs["zero_point"])
        if s is not None and z is not None:
            return e.args[0], float(np.float32(s)), int(z)
    return None


def _dq_const(e: Expr):
    """(int array, per-axis scales as float32 array, axis) if e = [reshape](dequantize(Constant))."""
    while _is(e, "reshape"):
        e = e.args[0]
    if _is(e, "qnn.dequantize") and isinstance(e.args[0], Constant):
        z = np.asarray(e.attrs["zero_point"])
        if np.any(z != 0):
            return None
        return e.args[0].value, np.asarray(e.attrs["scale"], np.float32).reshape(-1), e.attrs["axis"]
    return None


def _dq_weight(e: Expr):
    """_dq_const of a conv/matmul weight, a nonzero zero point folded in: (W − z) as int8 when every
    value fits, else int16 (uint8 weights quantized asymmetrically, e.g. onnxruntime's
    weight_type=QUInt8; the portable kernels take int16 weights, the SIMD variants refuse them)."""
    while _is(e, "reshape"):
        e = e.args[0]
    if not (_is(e, "qnn.dequantize") and isinstance(e.args[0], Constant)) or e.args[0].ty.dtype != "int8":
        return _dq_const(e)
    z = np.asarray(e.attrs["zero_point"], np.int64)
    if not np.any(z != 0):
        return _dq_const(e)
    w = e.args[0].value
    if z.size > 1:
        shape = [1] * w.ndim
        shape[e.attrs["axis"] % w.ndim] = z.size
        z = z.reshape(shape)
    wz = w.astype(np.int64) - (z if z.size > 1 else z.reshape(()))
    fits = wz.min() >= -128 and wz.max() <= 127
    return wz.astype(np.int8 if fits else np.int16), np.asarray(e.attrs["scale"], np.float32).reshape(-1), e.attrs["axis"]


def _dq_qconst(e: Expr):
    """(Constant, scale, zero_point) if e = dequantize(int8 Constant) per tensor, any zero point (a
    constant operand of add/mul, e.g. a bias quantized as an activation)."""
    if _is(e, "qnn.dequantize") and isinstance(e.args[0], Constant) and e.args[0].ty.dtype == "int8":
        s, z = _scalar(e.attrs["scale"]), _scalar(e.attrs["zero_point"])
        if s is not None and z is not None:
            return e.args[0], float(np.float32(s)), int(z)
    return None


def _const_eval(e: Expr):
    """The value of an expression whose leaves are all Constants (e.g. dequantize(Constant)), else None."""
    from ..ir import Function, Var, post_order
    from ..ir.interpreter import evaluate
    if isinstance(e, Constant):
        return e.value
    if any(isinstance(n, Var) for n in post_order(e)):
        return None
    return evaluate(Function((), e), [])[0]


def _clamp(y: Expr, acts: list[Call], scale: float, zp: int, dtype: str = "int8") -> Expr:
    bounds = [(0.0, None) if a.op == "nn.relu" else (a.attrs["a_min"], a.attrs["a_max"]) for a in acts]
    lo, hi = quant.activation_range(bounds, scale, zp, dtype)
    info = np.iinfo(dtype)
    return call("clip", y, a_min=lo, a_max=hi) if (lo, hi) != (info.min, info.max) else y


def real_facts(real) -> tuple[float, ...]:
    """A real multiplier (scalar or per-channel array) as the tuple of float64 the IR carries for the
    real-arithmetic oracle (attribute ``real_multiplier`` of qnn.requantize; the C ignores it)."""
    return tuple(float(v) for v in np.asarray(real, np.float64).reshape(-1))


def _requantize(x: Expr, real, zp_in: int, zp_out: int, rounding: str, shape=None, dtype: str = "int8") -> Expr:
    m, sh = quant.quantize_multipliers(np.asarray(real, np.float64))
    if shape is not None:
        m, sh = m.reshape(shape), sh.reshape(shape)
    return call("qnn.requantize", x, Constant(m), Constant(sh), input_zero_point=zp_in,
                output_zero_point=zp_out, rounding=rounding, real_multiplier=real_facts(real),
                **({"out_dtype": dtype} if dtype != "int8" else {}))


def _same_q(a, b) -> bool:
    return a[1] == b[1] and a[2] == b[2]



def bias_and_requantize(acc: Expr, bias, s_x: float, s_w: np.ndarray, out: tuple, out_q: tuple, rounding: str,
                        dtype: str = "int8"):
    """The epilogue of a quantized conv-like anchor: ``acc`` (int32, or int64 in 16x8 kernels with an int64
    bias) + the bias of its dtype (``bias``: the dequantize of a constant, or None), requantized to
    (s_out, z_out) = ``out_q`` in ``dtype``; ``out`` is (n_out, broadcast shape of a per-channel constant).
    None when the bias is not of the accumulator's dtype (no integer kernel).

    The multiplier is TFLM's (GetQuantizedConvolutionMultipler): double(s_in) · double(s_w) /
    double(s_out), per tensor (FULLY_CONNECTED) and per channel alike; a float32 product of the two scales
    differs in the last multiplier bits, which changes ~1 output in 10^4-10^5 (ad01_int8: 1 of 192,000
    on random inputs)."""
    n_out, shape = out
    if bias is not None:
        b = _dq_const(bias)
        if b[0].dtype != np.dtype(acc.ty.dtype):
            return None
        acc = call("add", acc, Constant(np.broadcast_to(b[0].reshape(-1), (n_out,)).reshape(shape).astype(acc.ty.dtype)))
    real = np.float64(s_x) * np.broadcast_to(s_w.astype(np.float64), (n_out,)) / out_q[0]
    return _requantize(acc, real, 0, out_q[1], rounding, shape, dtype)

class _Legalizer:
    def __init__(self, mod: IRModule, rounding: str):
        self.rounding = rounding
        self.uses = users(mod.main.body)

    def single_use(self, orig: Expr) -> bool:
        return len(self.uses.get(id(orig), [])) == 1

    def visit(self, node: Expr, orig: Expr):
        if not _is(node, "qnn.quantize"):
            return None
        if node.attrs["out_dtype"] not in QDTYPES:    # uint8 at a model boundary: only Q(DQ(x)) → requantize
            return self.boundary(node)
        self.dtype = node.attrs["out_dtype"]          # what the rules of this quantize produce
        s_out, z_out = _scalar(node.attrs["scale"]), _scalar(node.attrs["zero_point"])
        if s_out is None or z_out is None:
            return None
        s_out, z_out = float(np.float32(s_out)), int(z_out)
        y, oy, acts = node.args[0], orig.args[0], []
        while _is(y, *ACTIVATIONS) and self.single_use(oy):
            acts.insert(0, y)
            y, oy = y.args[0], oy.args[0]
        if not self.single_use(oy) and not _dq_tensor(y, QDTYPES):
            return None
        new = self.rewrite_op(y, s_out, z_out)
        if new is None:
            if isinstance(y, Call) and not _is(y, "qnn.dequantize") and not _constant_only(y):   # constants fold
                warnings.warn(f"legalize_qdq: node '{y.span or y.op}' ({y.op}) has no int8 kernel; it runs in float")
            return None
        return _clamp(new, acts, s_out, z_out, self.dtype)

    def boundary(self, q: Call):
        """quantize_u8(dequantize(x)) or quantize_i8(dequantize(x_u8)): one integer requantize."""
        y = q.args[0]
        s_out, z_out = _scalar(q.attrs["scale"]), _scalar(q.attrs["zero_point"])
        if not _is(y, "qnn.dequantize") or s_out is None or z_out is None or isinstance(y.args[0], Constant):
            return None
        s, z = _scalar(y.attrs["scale"]), _scalar(y.attrs["zero_point"])
        if s is None or z is None:
            return None
        real = float(np.float32(s)) / float(np.float32(s_out))
        m, sh = quant.quantize_multiplier(real)
        return call("qnn.requantize", y.args[0], Constant(np.array(m, np.int32)), Constant(np.array(sh, np.int32)),
                    input_zero_point=int(z), output_zero_point=int(z_out), rounding=self.rounding,
                    out_dtype=q.attrs["out_dtype"], real_multiplier=real_facts(real))

    def rewrite_op(self, y: Expr, s_out: float, z_out: int):
        """The int8 form of the float op ``y`` whose output is quantized to (s_out, z_out), by its
        first rule of QDQ_RULES (passes/rules.py) that gives one, or None (it stays float)."""
        rules = QDQ_RULES.get(y.op, ()) if isinstance(y, Call) and isinstance(y.op, str) else ()
        return next((r for r in (rule(self, y, s_out, z_out) for rule in rules) if r is not None), None)

    def avg_pool_as_conv(self, y: Call, s_out: float, z_out: int):
        """An average pool whose output scale differs from its input's (or that counts the padding):
        Σ(x − z) over the window as a depthwise qnn.conv2d of ones, then one requantize by
        s / (s_out · count), TFLM MEAN's arithmetic. (Rounding to the input scale first and
        requantizing after, as TFLM's same-scale AVERAGE_POOL does, is off by several LSB once
        s / s_out is large, e.g. a global pool.) Only for windows that all count the same taps."""
        x, s, z = _dq_tensor(y.args[0], QDTYPES)
        a = y.attrs
        (kh, kw), (sh, sw), (pt, pl, pb, pr) = a["pool_size"], a["strides"], a["padding"]
        padded = any(a["padding"])
        if tuple(a.get("dilation", (1, 1))) != (1, 1):
            return None
        if ((s, z) == (s_out, z_out) and not (a["count_include_pad"] and padded)) or a.get("layout", "NCHW") != "NCHW" \
                or (padded and not a["count_include_pad"]):
            return None
        n, c, h, w = x.ty.shape
        if y.ty.shape[2:] != ((h + pt + pb - kh) // sh + 1, (w + pl + pr - kw) // sw + 1):   # a ceil_mode tail
            return None
        acc = call("qnn.conv2d", x, Constant(np.ones((c, 1, kh, kw), np.int8)), input_zero_point=z, strides=(sh, sw),
                   padding=(pt, pl, pb, pr), dilation=(1, 1), groups=c, span=y.span)
        return _requantize(acc, np.full(c, np.float64(s) / (np.float64(s_out) * kh * kw)), 0, z_out, self.rounding,
                           (1, c, 1, 1), self.dtype)

    def anchor(self, op: Call, bias: Expr | None, s_out: float, z_out: int):
        """conv2d / matmul of a dequantized activation and dequantized constant weights (+ bias): the integer
        anchor; int16 activations (16x8) take int8 weights and accumulate in int64 with an int64 bias, as
        TFLM's 16x8 kernels (int32 with an int32 bias or none)."""
        t, w = _dq_tensor(op.args[0], QDTYPES), _dq_weight(op.args[1])
        if t is None or w is None or w[0].dtype not in (np.int8, np.int16):
            return None
        x, s_x, z_x = t
        w_int, s_w, axis = w
        wide = x.ty.dtype == "int16"
        if wide and w_int.dtype != np.int8:
            return None
        acc64 = {"acc_dtype": "int64"} if wide and bias is not None and _dq_const(bias)[0].dtype == np.int64 else {}
        conv = op.op == "nn.conv2d"
        n_out = op.ty.shape[1] if conv else op.ty.shape[-1]
        if s_w.size not in (1, n_out) or (s_w.size > 1 and axis % w_int.ndim != (0 if conv else 1)):
            raise TinyfuseError(f"node '{op.span}' ({op.op}): weight scales of size {s_w.size} on axis {axis} "
                                f"do not match {n_out} output channels")
        if conv:
            acc = call("qnn.conv2d", x, Constant(w_int), input_zero_point=z_x, span=op.span,
                       **{k: v for k, v in op.attrs.items()}, **acc64)
            shape = (1, n_out, 1, 1)
        else:
            acc = call("qnn.matmul", x, Constant(w_int), input_zero_point=z_x, span=op.span, **acc64)
            shape = (n_out,)
        return bias_and_requantize(acc, bias, s_x, s_w, (n_out, shape), (s_out, z_out), self.rounding, self.dtype)

    def binary(self, y: Call, s_out: float, z_out: int):
        """add / multiply of two quantized operands of the output's dtype: TFLite's ADD (15 bits of headroom
        for int16) and MUL (int16: zero points 0, as TFLM requires)."""
        ops = []
        for a in y.args:
            t = _dq_tensor(a, QDTYPES)
            if t is None:
                c = _dq_const(a)
                if c is None or c[0].dtype != np.int8 or c[1].size != 1 or np.asarray(a.attrs.get("zero_point", 0)).size != 1:
                    t = _dq_qconst(a)
                    if t is None:
                        return None
                else:
                    t = (Constant(c[0]), float(c[1][0]), 0)
            ops.append(t)
        (a, sa, za), (b, sb, zb) = ops
        if a.ty.dtype != self.dtype or b.ty.dtype != self.dtype or \
                (self.dtype == "int16" and y.op != "add" and (za, zb, z_out) != (0, 0, 0)):
            return None
        real = real_facts((sa, sb, s_out))
        if y.op == "add":
            p = quant.add_params(sa, sb, s_out, quant.LEFT_SHIFTS[self.dtype])
            return call("qnn.add", a, b, a_zero_point=za, b_zero_point=zb, out_zero_point=z_out, span=y.span,
                        real_scales=real, **p)
        m, sh = quant.quantize_multiplier(np.float64(sa) * np.float64(sb) / s_out)
        return call("qnn.mul", a, b, a_zero_point=za, b_zero_point=zb, out_zero_point=z_out, multiplier=m,
                    shift=sh, span=y.span, real_scales=real)


    def batch_matmul(self, y: Call, s_out: float, z_out: int):
        """activation × activation (attention's Q·Kᵀ, P·V): qnn.batch_matmul, then one requantize by
        double(s_a)·double(s_b)/double(s_out) (TFLM BATCH_MATMUL)."""
        ta, tb = _dq_tensor(y.args[0]), _dq_tensor(y.args[1])
        if ta is None or tb is None or y.args[0].ty.ndim < 2:
            return None
        (a, sa, za), (b, sb, zb) = ta, tb
        acc = call("qnn.batch_matmul", a, b, a_zero_point=za, b_zero_point=zb, span=y.span)
        return _requantize(acc, np.float64(sa) * np.float64(sb) / np.float64(s_out), 0, z_out, self.rounding)

    def layer_norm(self, y: Call, s_out: float, z_out: int):
        """qnn.layer_norm (its arithmetic: compiler/ops/norm.py) when x is a dequantized int8 tensor and
        scale and bias are constants; gamma/s_out and beta/s_out become float32 [L] tables."""
        t, gamma, beta = _dq_tensor(y.args[0]), _const_eval(y.args[1]), _const_eval(y.args[2])
        if t is None or gamma is None or beta is None:
            return None
        x, s, z = t
        axis = y.attrs["axis"]
        norm = x.ty.shape[axis:]
        length = int(np.prod(norm))
        g, b = ((np.broadcast_to(v.astype(np.float64), norm).reshape(-1) / np.float64(s_out)).astype(np.float32)
                for v in (gamma, beta))
        eps = float(np.float32(y.attrs["epsilon"]))
        return call("qnn.layer_norm", x, Constant(g), Constant(b), axis=axis, scale=s, scale_sq=s * s,
                    eps_l2=eps * length * length, in_zero_point=z, out_zero_point=z_out, span=y.span)


# Per-op rules of ``_Legalizer.rewrite_op``: rule(legalizer, y, s_out, z_out) -> int8 expr or None.

def _requantize_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    """Q(DQ(x)): one requantize (nothing when the parameters agree)."""
    t = _dq_tensor(y, QDTYPES)
    if t is None:
        return lg.boundary(call("qnn.quantize", y, scale=s_out, zero_point=z_out, out_dtype=lg.dtype))
    x, s, z = t
    if (s, z) == (s_out, z_out) and x.ty.dtype == lg.dtype:
        return x
    return _requantize(x, s / s_out, z, z_out, lg.rounding, dtype=lg.dtype)


def _add_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    """conv/matmul + dequantized bias: the anchor with its int32 bias; else an int8 add."""
    if _is(y.args[0], "nn.conv2d", "nn.matmul") and _dq_const(y.args[1]) is not None:
        return lg.anchor(y.args[0], y.args[1], s_out, z_out)
    return lg.binary(y, s_out, z_out)


def _matmul_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    """activation x activation: qnn.batch_matmul; activation x weights: qnn.matmul."""
    if _dq_tensor(y.args[1]) is not None:
        return lg.batch_matmul(y, s_out, z_out)
    return lg.anchor(y, None, s_out, z_out)


def _conv2d_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    return lg.anchor(y, None, s_out, z_out)


def _layer_norm_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    return lg.layer_norm(y, s_out, z_out)


def _binary_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    return lg.binary(y, s_out, z_out)


def _avg_pool_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    """A depthwise conv of ones + requantize where the scales differ (avg_pool_as_conv), else moved."""
    if _dq_tensor(y.args[0], QDTYPES) is not None:
        pooled = lg.avg_pool_as_conv(y, s_out, z_out)
        if pooled is not None:
            return pooled
    return _move_rule(lg, y, s_out, z_out)


def _move_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    """Data movement and pools on the int8 tensor, then a requantize if the scales differ."""
    t = _dq_tensor(y.args[0], QDTYPES)
    if t is None:
        return None
    x, s, z = t
    op = "qnn.avg_pool2d" if y.op == "nn.avg_pool2d" else y.op
    if op == "qnn.avg_pool2d" and ((y.attrs["count_include_pad"] and any(y.attrs["padding"]))
                                   or tuple(y.attrs.get("dilation", (1, 1))) != (1, 1)):
        return None
    moved = call(op, x, span=y.span, **y.attrs)
    if (s, z) == (s_out, z_out) and x.ty.dtype == lg.dtype:
        return moved
    return _requantize(moved, s / s_out, z, z_out, lg.rounding, dtype=lg.dtype)


def _concatenate_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    """Requantize the inputs whose (scale, zp) differ, then copy."""
    parts = [_dq_tensor(a, QDTYPES) for a in y.args]
    if any(t is None for t in parts):
        return None
    ins = [x if (s, z) == (s_out, z_out) and x.ty.dtype == lg.dtype else
           _requantize(x, s / s_out, z, z_out, lg.rounding, dtype=lg.dtype) for x, s, z in parts]
    return call("concatenate", *ins, span=y.span, **y.attrs)


def _pad_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    """Requantize first, then pad with the value quantized in the output's scale: a value outside the
    input's range (a real 0.5 after a tiny activation) would saturate in the input's scale."""
    t = _dq_tensor(y.args[0], QDTYPES)
    if t is None:
        return None
    x, s, z = t
    if (s, z) != (s_out, z_out) or x.ty.dtype != lg.dtype:
        x = _requantize(x, s / s_out, z, z_out, lg.rounding, dtype=lg.dtype)
    value = int(quant.saturate(quant.round_half_away(y.attrs["pad_value"] / s_out) + z_out, lg.dtype))
    return call("nn.pad", x, span=y.span, **{**y.attrs, "pad_value": value})


def _softmax_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    """qnn.softmax of an int8 input to int8 or int16 (TFLM's int8 → int16 kernel), of an int16 input to
    int16 (TFLM's table kernel: input zero point 0, output (1/32768, 0))."""
    t = _dq_tensor(y.args[0], QDTYPES)
    if t is None:
        return None
    x, s, z = t
    if not quant.softmax_supported(x.ty.dtype, lg.dtype, s, z, s_out, z_out):
        return None
    return call("qnn.softmax", x, axis=y.attrs["axis"], in_scale=s, in_zero_point=z, out_scale=s_out,
                out_zero_point=z_out, span=y.span, **({"out_dtype": lg.dtype} if lg.dtype != "int8" else {}))


def _lut_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    """A unary float op as a 256-entry table over the int8 input values."""
    t = _dq_tensor(y.args[0])
    if t is None:
        return None
    x, s, z = t
    real = (np.arange(-128, 128, dtype=np.float64) - z) * s
    f = get_op(y.op).compute(real.astype(np.float32), **y.attrs).astype(np.float64)
    table = quant.saturate(quant.round_half_away(f / s_out) + z_out)
    return call("qnn.lut", x, table=table, span=y.span,
                real_fn=(y.op, tuple(sorted(y.attrs.items())), s, z, float(s_out), int(z_out)))


def _resize_rule(lg: _Legalizer, y: Call, s_out: float, z_out: int):
    """nn.resize2d on the int8 tensor (nearest copies bytes; linear: TFLM's 10-bit fixed point,
    ops/resize.py) with the compilation's rounding, then a requantize if the scales differ. The
    multi-tap forms (cubic, antialias, tf_crop_and_resize) have no int8 kernel: they stay float."""
    t = _dq_tensor(y.args[0])
    if t is None or uses_taps(y.attrs):
        return None
    x, s, z = t
    moved = call("nn.resize2d", x, span=y.span, **{**y.attrs, "rounding": lg.rounding})
    return moved if (s, z) == (s_out, z_out) else _requantize(moved, s / s_out, z, z_out, lg.rounding)


register({
    "qnn.dequantize": _requantize_rule,
    "add": _add_rule, "multiply": _binary_rule,
    "nn.matmul": _matmul_rule, "nn.conv2d": _conv2d_rule, "nn.layer_norm": _layer_norm_rule,
    "nn.avg_pool2d": _avg_pool_rule,
    **{op: _move_rule for op in MOVE_OPS},
    "concatenate": _concatenate_rule, "nn.pad": _pad_rule, "nn.softmax": _softmax_rule,
    **{op: _lut_rule for op in LUT_OPS},
    "nn.prelu": prelu_rule,
    "nn.resize2d": _resize_rule,
    "mean": mean_rule, "subtract": sub_rule,
}, qdq_rule)


def fold_dequantized_constants(mod: IRModule) -> IRModule:
    """dequantize(Constant) left after legalization (weights of float ops) → float Constant."""
    def visit(node, _orig):
        if _is(node, "qnn.dequantize") and isinstance(node.args[0], Constant):
            return Constant(get_op(node.op).compute(node.args[0].value, **node.attrs), node.args[0].name)
        return None
    return mod.with_main(rewrite(mod.main, visit))


def legalize_qdq(mod: IRModule, rounding: str = "double") -> IRModule:
    mod = shift_uint8(mod)         # uint8 activations → int8 twins (exact; passes/shift_uint8.py)
    mod = mod.with_main(rewrite(mod.main, _Legalizer(mod, rounding).visit))
    return fold_dequantized_constants(fold_shifts(mod))
