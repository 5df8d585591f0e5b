"""SVDF (TFLite builtin; TFLM kernels/svdf_common.cc): a rank-decomposed fully connected layer
over a sliding window of ``memory`` frames, its window the op's variable state tensor.

Operands: ``x`` [B, I]; ``wf`` (feature weights) [F, I]; ``wt`` (time weights) [F, M]; ``bias``
[U] (U = F / rank); ``state`` [B, F·M] (filter f's M most recent values at f·M .. f·M + M − 1,
oldest first). Per invocation, as TFLM's reference kernels:

    state' = state shifted left by one element (the whole [B, F·M] buffer, as TFLM's memmove);
    state'[b, f·M + M − 1] = new value of filter f:
        float: Σ_k wf[f, k] · x[b, k]
        int:   zp_s + sat_T(mbqm(Σ_k wf[f, k] · (x[b, k] − zp_x), m1, s1))  (T the state dtype,
               saturated before the zero point is added, stored as T)
    s[b, f] = Σ_j wt[f, j] · state'[b, f·M + j]          (int: state' − zp_s; int32)
    out[b, u] = act(bias[u] + Σ_{r < rank} s[b, u·rank + r])          float
    out[b, u] = sat8(zp_out + mbqm(bias[u] + Σ_r s[b, u·rank + r], m2, s2))   int8 (TFLM's integer
                kernel applies no fused activation)

Output: one packed tensor of the state's dtype, [B·F·M + B·U]: the new state, then the output
(for int8 outputs of an int16 state: int8 values the converter casts). The converter slices it.
"""
from __future__ import annotations

import numpy as np

from .. import quant
from ..errors import TinyfuseError
from ..ir.op import OpDef, OpPattern, register_op
from ..ir.types import TensorType

ACTIVATIONS = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGMOID")


def _shapes(name: str, args, attrs, state_dtypes, x_dtype) -> tuple[int, int, int, int, int]:
    """(B, I, F, M, U) after checking the operands; TinyfuseError otherwise."""
    x, wf, wt, bias, state = args
    rank = attrs["rank"]
    ok = x.ndim == 2 and wf.ndim == 2 and wt.ndim == 2 and rank > 0
    batch, inp = x.shape if x.ndim == 2 else (0, 0)
    filters, memory = wt.shape if wt.ndim == 2 else (0, 0)
    units = filters // rank if ok else 0
    ok = ok and filters % rank == 0 and wf.shape == (filters, inp) and bias.shape == (units,) \
        and state.shape == (batch, filters * memory) and x.dtype == x_dtype and state.dtype in state_dtypes
    if not ok:
        raise TinyfuseError(f"{name}: x {x}, feature weights {wf}, time weights {wt}, bias {bias}, state {state} "
                            f"do not fit rank {rank}")
    return batch, inp, filters, memory, units


def _shift_in(state: np.ndarray, new: np.ndarray, memory: int) -> np.ndarray:
    """The whole buffer shifted left by one element, then the new value of every filter at its end."""
    flat = state.reshape(-1).copy()
    flat[:-1] = flat[1:]
    out = flat.reshape(state.shape[0], -1, memory)
    out[:, :, memory - 1] = new
    return out.reshape(state.shape)


def apply_activation(v: np.ndarray, act: str) -> np.ndarray:
    """tflite::ops::micro::ActivationValFloat."""
    if act == "RELU":
        return np.maximum(v, 0)
    if act == "RELU_N1_TO_1":
        return np.clip(v, -1, 1)
    if act == "RELU6":
        return np.clip(v, 0, 6)
    if act == "TANH":
        return np.tanh(v)
    if act == "SIGMOID":
        return 1 / (1 + np.exp(-v))
    return v


@register_op
class SVDF(OpDef):
    """float32 SVDF (module docstring): x, wf, wt, bias, state → float32 [B·F·M + B·U]."""
    name, pattern, num_inputs = "nn.svdf", OpPattern.OPAQUE, 5
    attrs = {"rank": 1, "activation": "NONE"}
    cost_family = "dense"

    def infer(self, args, attrs):
        if attrs["activation"] not in ACTIVATIONS:
            raise TinyfuseError(f"nn.svdf: activation {attrs['activation']} is not one of {ACTIVATIONS}")
        b, _, f, m, u = _shapes(self.name, args, attrs, ("float32",), "float32")
        return TensorType((b * f * m + b * u,), "float32")

    def compute(self, x, wf, wt, bias, state, rank, activation):
        memory = wt.shape[1]
        new = _shift_in(state.astype(np.float32), (x @ wf.T).astype(np.float32), memory)
        s = (new.reshape(x.shape[0], -1, memory) * wt[None]).sum(axis=2, dtype=np.float32)
        out = bias[None] + s.reshape(x.shape[0], -1, rank).sum(axis=2, dtype=np.float32)
        return np.concatenate([new.reshape(-1), apply_activation(out, activation).reshape(-1)]).astype(np.float32)


@register_op
class QSVDF(OpDef):
    """int8 SVDF with an int16 or int8 state (module docstring): → state dtype [B·F·M + B·U]."""
    name, pattern, num_inputs = "qnn.svdf", OpPattern.OPAQUE, 5
    attrs = {"rank": 1, "x_zp": 0, "state_zp": 0, "out_zp": 0, "m1": 0, "s1": 0, "m2": 0, "s2": 0}
    cost_family = "dense"

    def infer(self, args, attrs):
        b, _, f, m, u = _shapes(self.name, args, attrs, ("int16", "int8"), "int8")
        _, wf, wt, bias, state = args
        if wf.dtype != "int8" or wt.dtype != state.dtype or bias.dtype != "int32":
            raise TinyfuseError(f"qnn.svdf: needs int8 feature weights, time weights of the state's dtype and "
                                f"int32 bias; got {wf}, {wt}, {bias}, state {state}")
        return TensorType((b * f * m + b * u,), state.dtype)

    def compute(self, x, wf, wt, bias, state, rank, x_zp, state_zp, out_zp, m1, s1, m2, s2):
        info = np.iinfo(state.dtype)
        memory = wt.shape[1]
        dot = (x.astype(np.int64) - x_zp) @ wf.astype(np.int64).T
        new_val = state_zp + np.clip(quant.mbqm(dot, m1, s1), info.min, info.max)
        new_val = ((new_val - info.min) % (1 << info.bits) + info.min).astype(state.dtype)   # stored as T
        new = _shift_in(state, new_val, memory)
        s = ((new.reshape(x.shape[0], -1, memory).astype(np.int64) - state_zp) * wt.astype(np.int64)[None]).sum(2)
        acc = bias.astype(np.int64)[None] + s.reshape(x.shape[0], -1, rank).sum(axis=2)
        out = np.clip(out_zp + quant.mbqm(acc, m2, s2), -128, 127)
        return np.concatenate([new.reshape(-1), out.reshape(-1).astype(state.dtype)])
