"""int8 one-op cases for MaxPool, ReduceMean, Sub and broadcasting Mul (issue 14): the same seeded
integers and quantization go into a one-op TFLite model run by TFLM (the exact oracle; SUB, which
../shared/tools/tflm_oneop.py has no builder for, is built with tflm_misc.model) and into its ONNX QDQ
twin (DQ → op → Q), which tinyfuse compiles."""
from __future__ import annotations

import numpy as np
import onnx

from tests.builders.qdq import OPSET, _Graph, binary, onnx_pads
from tests.builders.tflm_cases import Case, _act_q, _case, _i8, _out_q, tflm_oneop
from tests.builders.tflm_misc import act, const, model

assert OPSET == 13                        # ReduceMean-13: axes is an attribute


_ACT = {"NONE": 0, "RELU": 1, "RELU6": 3}        # tflite ActivationFunctionType


def tflm_sub(a_shape, b_shape, a_q, b_q, out_q, activation="NONE") -> bytes:
    """SUB with numpy-style broadcasting and a fused NONE / RELU / RELU6."""
    out = np.broadcast_shapes(tuple(a_shape), tuple(b_shape))
    return model("SUB", [act(a_shape, a_q, "a"), act(b_shape, b_q, "b")], [act(out, out_q, "y")], "SubOptions",
                 fusedActivationFunction=_ACT[activation])


def qdq_mean(x_shape, axes, in_q, out_q, keep_dims=False, probe=False):
    """MEAN twin: ReduceMean-13 over ``axes`` of the (NHWC, as in TFLite) int8 input."""
    g = _Graph()
    x = g.dq(g.input("x", x_shape), in_q)
    y = g.node("ReduceMean", [x], "reducemean", axes=list(axes), keepdims=int(keep_dims))
    return g.finish(y, out_q, probe, nchw=False)


def binary_case(kind, seed, a_shape, b_shape, act="NONE") -> Case:
    """'sub' or 'mul' of two int8 activations with numpy broadcasting, random scales and zero points."""
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    a_q, b_q = _act_q(rng, 0.01, 0.1), _act_q(rng, 0.01, 0.1)
    a, b = _i8(rng, a_shape, a_q[1]), _i8(rng, b_shape, b_q[1])
    op = {"sub": "Sub", "mul": "Mul"}[kind]
    out_q = _out_q(rng, binary(op, a_shape, b_shape, a_q, b_q, None, probe=True), {"a": a, "b": b})
    onnx_model = binary(op, a_shape, b_shape, a_q, b_q, out_q, activation=act)
    build = tflm_sub if kind == "sub" else oneop.mul
    tflm = build(a_shape, b_shape, a_q, b_q, out_q, activation=act)
    return _case(kind, tflm, onnx_model, [a, b], f"a_q={a_q} b_q={b_q} out_q={out_q}")


def mean_case(seed, x_shape, axes, keep_dims=False) -> Case:
    """MEAN over ``axes`` with a different output scale (TFLM requantizes)."""
    oneop, rng = tflm_oneop(), np.random.default_rng(seed)
    in_q = _act_q(rng, 0.01, 0.1)
    x = _i8(rng, x_shape, in_q[1])
    out_q = _out_q(rng, qdq_mean(x_shape, axes, in_q, None, keep_dims, probe=True), {"x": x})
    return _case("mean", oneop.mean(x_shape, axes, in_q, out_q, keep_dims), qdq_mean(x_shape, axes, in_q, out_q,
                 keep_dims), [x], f"in_q={in_q} out_q={out_q}")


def qdq_max_pool_requant(x_shape, in_q, out_q) -> onnx.ModelProto:
    """MaxPool 2x2/2 whose output (scale, zero point) differs from its input's: legalize_qdq moves the
    int8 data and requantizes once (TFLM's MAX_POOL_2D has no such form, so no TFLM twin)."""
    g = _Graph()
    x = g.dq(g.nchw_input("x", x_shape), in_q)
    y = g.node("MaxPool", [x], "maxpool", kernel_shape=[2, 2], strides=[2, 2],
               pads=onnx_pads(x_shape, (2, 2), (2, 2), (1, 1), "VALID"))
    return g.finish(y, out_q, False, nchw=True)


def sub_const_case(seed, a_shape, b_shape) -> Case:
    """a − B with B an int8 constant of its own (scale, zero point), e.g. a mean subtracted in a
    preprocessing layer: TFLM SUB with a constant input; the twin is DQ(a) − DQ(B constant)."""
    rng = np.random.default_rng(seed)
    a_q, b_q = _act_q(rng, 0.01, 0.1), _act_q(rng, 0.01, 0.1)
    a, b = _i8(rng, a_shape, a_q[1]), _i8(rng, b_shape, b_q[1])

    def twin(out_q, probe=False):
        g = _Graph()
        x = g.dq(g.input("a", a_shape), a_q)
        bq = g.node("DequantizeLinear", [g.const("b", b), g.const("bs", np.float32(b_q[0])),
                                         g.const("bz", np.int8(b_q[1]))], "dqb")
        return g.finish(g.node("Sub", [x, bq]), out_q, probe, nchw=False)

    out_q = _out_q(rng, twin(None, probe=True), {"a": a})
    out = np.broadcast_shapes(tuple(a_shape), tuple(b_shape))
    tflm = model("SUB", [act(a_shape, a_q, "a"), const(b, "b", b_q)], [act(out, out_q, "y")], "SubOptions",
                 fusedActivationFunction=0)
    return _case("sub", tflm, twin(out_q), [a], f"a_q={a_q} b_q={b_q} out_q={out_q}")
