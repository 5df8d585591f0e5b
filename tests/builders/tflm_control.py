""".tflite models with control flow (IF, WHILE: subgraphs) and the TFLM custom ops CIRCULAR_BUFFER and
BasicClassifier, built with tflite-micro's model editor; TFLM runs the same bytes as the oracle.

- :func:`if_model`: y = IF(cond, x) with then = x * 2 + 1 and else = x * 3 (float32, or int8 ADD / MUL
  with requantization); ``cond`` a constant, a comparison of constants (folded), or a run-time input;
- :func:`while_model`: (i, y) = WHILE(i0 = 0, x) with cond ``i < n`` and body (i + 1, y * 0.5 + 1)
  (float32): ``n`` a constant, or a run-time input.
"""
from __future__ import annotations

import numpy as np

from tests.builders.tflm_misc import _mods, act, const, operator

Q = (0.05, -3)


def _tensor(shape, dtype: str, name: str, data=None):
    me, S = _mods()
    return me.Tensor(shape=tuple(shape), dtype=getattr(S.TensorType, dtype.upper()), name=name, data=data)


def _branch(kind: str, shape, q, tag: str):
    """(ops, input, output) of a branch: 'then' = ADD(x, x) then ADD 1 (x * 2 + 1), 'else' = MUL(x, 3)."""
    x, y = act(shape, q, f"{tag}_x"), act(shape, q, f"{tag}_y")
    if kind == "then":
        twice = act(shape, q, f"{tag}_2x")
        one = const(np.array([1.0], np.float32), f"{tag}_one") if q is None else \
            const(np.array([64], np.int8), f"{tag}_one", (1 / 64, 0))
        ops = [operator("ADD", [x, x], [twice], "AddOptions"), operator("ADD", [twice, one], [y], "AddOptions")]
    else:
        three = const(np.array([3.0], np.float32), f"{tag}_three") if q is None else \
            const(np.array([100], np.int8), f"{tag}_three", (0.03, 0))
        ops = [operator("MUL", [x, three], [y], "MulOptions")]
    return ops, x, y


def if_model(cond: str = "true", q=None, shape=(1, 6)) -> bytes:
    """IF(cond, x) → y (module doc). ``cond``: 'true' / 'false' (a constant bool [1]), 'less' (LESS of
    two int32 constants: 2 < 5, folded), 'input' (a bool [1] model input: decided at run time)."""
    me, S = _mods()
    x, y = act(shape, q, "x"), act(shape, q, "y")
    ops, inputs = [], [x]
    if cond in ("true", "false"):
        c = _tensor((1,), "bool", "cond", np.array([cond == "true"]))
    elif cond == "less":
        c = _tensor((1,), "bool", "cond")
        ops.append(operator("LESS", [const(np.array([2], np.int32), "a"), const(np.array([5], np.int32), "b")], [c]))
    else:
        c = _tensor((1,), "bool", "cond")
        inputs.append(c)
    ops.append(operator("IF", [c, x], [y], "IfOptions", thenSubgraphIndex=1, elseSubgraphIndex=2))
    m = me.Model(description="tinyfuse tflm_control if")
    m.add_subgraph(tensors=[x, y, c], operators=ops, inputs=inputs, outputs=[y], name="main")
    for tag in ("then", "else"):
        b_ops, bx, by = _branch(tag, shape, q, tag)
        m.add_subgraph(tensors=[bx, by], operators=b_ops, inputs=[bx], outputs=[by], name=tag)
    return bytes(m.build())


def while_model(n: int = 5, runtime_n: bool = False, shape=(1, 4)) -> bytes:
    """(i, y) = WHILE(0, x): while i < n: i += 1, y = y * 0.5 + 1 (float32). ``runtime_n``: n is an
    int32 [1] model input (the trip count is decided at run time)."""
    me, S = _mods()
    x, y = act(shape, None, "x"), act(shape, None, "y")
    i0, i_out = const(np.array([0], np.int32), "i0"), _tensor((1,), "int32", "i_out")
    inputs = [x]
    if runtime_n:
        n_t = _tensor((1,), "int32", "n")
        inputs.append(n_t)
        loop_in, loop_out = [i0, x, n_t], [i_out, y, _tensor((1,), "int32", "n_out")]
    else:
        loop_in, loop_out = [i0, x], [i_out, y]
    m = me.Model(description="tinyfuse tflm_control while")
    m.add_subgraph(tensors=[x, y, i0, i_out], inputs=inputs, outputs=[y, i_out], name="main",
                   operators=[operator("WHILE", loop_in, loop_out, "WhileOptions", condSubgraphIndex=1,
                                       bodySubgraphIndex=2)])
    ci, cx, flag = _tensor((1,), "int32", "c_i"), act(shape, None, "c_x"), _tensor((1,), "bool", "c_flag")
    c_in = [ci, cx] + ([_tensor((1,), "int32", "c_n")] if runtime_n else [])
    limit = c_in[2] if runtime_n else const(np.array([n], np.int32), "c_limit")
    m.add_subgraph(tensors=[*c_in, flag], operators=[operator("LESS", [ci, limit], [flag])], inputs=c_in,
                   outputs=[flag], name="cond")
    bi, bx = _tensor((1,), "int32", "b_i"), act(shape, None, "b_x")
    b_in = [bi, bx] + ([_tensor((1,), "int32", "b_n")] if runtime_n else [])
    bi2, half, by = _tensor((1,), "int32", "b_i2"), act(shape, None, "b_half"), act(shape, None, "b_y")
    ops = [operator("ADD", [bi, const(np.array([1], np.int32), "b_one")], [bi2], "AddOptions"),
           operator("MUL", [bx, const(np.array([0.5], np.float32), "b_05")], [half], "MulOptions"),
           operator("ADD", [half, const(np.array([1.0], np.float32), "b_1f")], [by], "AddOptions")]
    m.add_subgraph(tensors=[*b_in, bi2, half, by], operators=ops, inputs=b_in,
                   outputs=[bi2, by] + b_in[2:], name="body")
    return bytes(m.build())


# ----------------------------------------------------------------------------- TFLM custom ops
def _custom(name: str, inputs, outputs, options: bytes | None = None):
    me, S = _mods()
    op = me.Operator(opcode=S.BuiltinOperator.CUSTOM, inputs=list(inputs), outputs=list(outputs), custom_code=name)
    if options is not None:
        op._fb.customOptions = list(options)
    return op


def cycles_option(cycles: int | None) -> bytes | None:
    """CIRCULAR_BUFFER's custom options: the flexbuffer map {cycles_max} (None: no options)."""
    from flatbuffers import flexbuffers
    return None if cycles is None else bytes(flexbuffers.Dumps({"cycles_max": int(cycles)}))


def circular_buffer_model(slots: int = 3, h: int = 1, d: int = 4, cycles: int | None = 2, stages: int = 1) -> bytes:
    """x int8 [1, 1, h, d] → ``stages`` times (CIRCULAR_BUFFER [1, slots, h, d] → AVERAGE_POOL_2D over
    the slots → [1, 1, h, d]). Outputs: every buffer and every pool result (all model outputs, so
    TFLM's planner keeps their bytes from one invocation to the next)."""
    me, S = _mods()
    x = act((1, 1, h, d), Q, "x")
    ops, outs, cur = [], [], x
    for k in range(stages):
        buf, pooled = act((1, slots, h, d), Q, f"buf{k}"), act((1, 1, h, d), Q, f"pool{k}")
        ops.append(_custom("CIRCULAR_BUFFER", [cur], [buf], cycles_option(cycles)))
        ops.append(operator("AVERAGE_POOL_2D", [buf], [pooled], "Pool2DOptions", padding=1, strideH=1, strideW=1,
                            filterHeight=slots, filterWidth=1))
        outs += [buf, pooled]
        cur = pooled
    m = me.Model(description="tinyfuse tflm_control circular buffer")
    m.add_subgraph(tensors=[x, *outs], operators=ops, inputs=[x], outputs=outs, name="main")
    return bytes(m.build())


def basic_classifier_model(n: int = 8, indices=(1, 5, 6), thresholds=(0, 100, -50), flat: bool = False) -> bytes:
    """BasicClassifier(scores int32 [1, n] (or [n]), target_indices, thresholds) → (detected bool [K],
    posteriors int32 [K]); indices and thresholds constants."""
    me, S = _mods()
    x = _tensor((n,) if flat else (1, n), "int32", "scores")
    k = len(indices)
    det, post = _tensor((k,), "bool", "detected"), _tensor((k,), "int32", "posteriors")
    idx = const(np.array(indices, np.int32), "target_indices")
    thr = const(np.array(thresholds, np.int32), "thresholds")
    m = me.Model(description="tinyfuse tflm_control basic classifier")
    m.add_subgraph(tensors=[x, idx, thr, det, post], operators=[_custom("BasicClassifier", [x, idx, thr], [det, post])],
                   inputs=[x], outputs=[det, post], name="main")
    return bytes(m.build())


def circular_buffer_last_model(slots: int, h: int, d: int, cycles: int | None, q=Q) -> bytes:
    """x int8 [1, 1, h, d] → CIRCULAR_BUFFER [1, slots, h, d] → STRIDED_SLICE of the newest slot → y: the
    part of the buffer one invocation determines (the older slots hold TFLM's arena bytes at first)."""
    me, S = _mods()
    x, buf, y = act((1, 1, h, d), q, "x"), act((1, slots, h, d), q, "buf"), act((1, 1, h, d), q, "y")
    ops = [_custom("CIRCULAR_BUFFER", [x], [buf], cycles_option(cycles)),
           operator("STRIDED_SLICE", [buf, const(np.array([0, slots - 1, 0, 0], np.int32), "begin"),
                                      const(np.array([1, slots, h, d], np.int32), "end"),
                                      const(np.array([1, 1, 1, 1], np.int32), "strides")], [y], "StridedSliceOptions")]
    m = me.Model(description="tinyfuse tflm_control circular buffer, newest slot")
    m.add_subgraph(tensors=[x, buf, y], operators=ops, inputs=[x], outputs=[y], name="main")
    return bytes(m.build())


def buffer_in_branch_model(slots: int = 3, branch_slots: int = 2, d: int = 4) -> bytes:
    """x int8 [1, 1, 1, d] → CIRCULAR_BUFFER [1, slots, 1, d] (operator 0 of the main subgraph) and IF(true, x)
    whose then branch is CIRCULAR_BUFFER [1, branch_slots, 1, d] (operator 0 of its subgraph); cycles_max 1.
    Outputs: both buffers (each operator keeps a buffer of its own)."""
    me, S = _mods()
    x, buf, y = act((1, 1, 1, d), Q, "x"), act((1, slots, 1, d), Q, "buf"), act((1, branch_slots, 1, d), Q, "y")
    cond = _tensor((1,), "bool", "cond", np.array([True]))
    ops = [_custom("CIRCULAR_BUFFER", [x], [buf], cycles_option(1)),
           operator("IF", [cond, x], [y], "IfOptions", thenSubgraphIndex=1, elseSubgraphIndex=1)]
    m = me.Model(description="tinyfuse tflm_control buffer in a branch")
    m.add_subgraph(tensors=[x, buf, y, cond], operators=ops, inputs=[x], outputs=[buf, y], name="main")
    bx, by = act((1, 1, 1, d), Q, "b_x"), act((1, branch_slots, 1, d), Q, "b_y")
    m.add_subgraph(tensors=[bx, by], operators=[_custom("CIRCULAR_BUFFER", [bx], [by], cycles_option(1))],
                   inputs=[bx], outputs=[by], name="then")
    return bytes(m.build())


def recursive_if_model(shape=(1, 4)) -> bytes:
    """IF(true, x) whose then branch (subgraph 1) is IF(true, x) calling subgraph 1 again: a damaged model."""
    me, S = _mods()
    x, y = act(shape, None, "x"), act(shape, None, "y")
    c = _tensor((1,), "bool", "cond", np.array([True]))
    m = me.Model(description="tinyfuse tflm_control recursive if")
    m.add_subgraph(tensors=[x, y, c], inputs=[x], outputs=[y], name="main",
                   operators=[operator("IF", [c, x], [y], "IfOptions", thenSubgraphIndex=1, elseSubgraphIndex=1)])
    bx, by = act(shape, None, "b_x"), act(shape, None, "b_y")
    bc = _tensor((1,), "bool", "b_cond", np.array([True]))
    m.add_subgraph(tensors=[bx, by, bc], inputs=[bx], outputs=[by], name="then",
                   operators=[operator("IF", [bc, bx], [by], "IfOptions", thenSubgraphIndex=1, elseSubgraphIndex=1)])
    return bytes(m.build())
