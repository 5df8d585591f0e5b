"""fuse_horizontal and fold_views: what each rewrites (before → after op lists) and the numpy
interpreter before vs after on random inputs (exact for int8, 1e-5 relative for float)."""
from __future__ import annotations

import numpy as np
import pytest

from tinyfuse import quant
from tinyfuse.ir import Constant, Function, IRModule, Tuple, Var, call, iter_calls
from tinyfuse.ir.interpreter import run_module
from tinyfuse.ops.view import contiguous, read_view, reshape_view, slice_view, transpose_view
from tinyfuse.passes.fold_views import fold_views
from tinyfuse.passes.fuse_horizontal import find_groups, fuse_horizontal

RNG = np.random.default_rng(7)


def module(params, outputs) -> IRModule:
    body = outputs[0] if len(outputs) == 1 else Tuple(tuple(outputs))
    return IRModule(Function(tuple(params), body), "t", tuple(f"y{i}" for i in range(len(outputs))))


def ops(mod: IRModule) -> list[str]:
    return [c.op for c in iter_calls(mod.main)]


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def randi8(*shape, lo=-128, hi=128):
    return RNG.integers(lo, hi, shape).astype(np.int8)


def assert_same(before: IRModule, after: IRModule, inputs, exact: bool):
    for b, a in zip(run_module(before, inputs), run_module(after, inputs)):
        assert a.shape == b.shape and a.dtype == b.dtype
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-5 * max(float(np.abs(b).max()), 1e-30))


# ----------------------------------------------------------------------------------------- attention blocks

def split_heads(t, heads, k_transposed=False):
    n, s, d = t.ty.shape
    r = call("reshape", t, newshape=(n, s, heads, d // heads))
    return call("transpose", r, axes=(0, 2, 3, 1) if k_transposed else (0, 2, 1, 3))


def float_attention(seq=8, dim=16, heads=2):
    from tinyfuse.ir import TensorType
    x = Var("x", TensorType((1, seq, dim), "float32"))
    q, k, v = (call("add", call("nn.matmul", x, Constant(randn(dim, dim))), Constant(randn(dim))) for _ in range(3))
    s = call("multiply", call("nn.matmul", split_heads(q, heads), split_heads(k, heads, True)),
             Constant(np.array(0.25, np.float32)))
    p = call("nn.softmax", s, axis=3)
    o = call("transpose", call("nn.matmul", p, split_heads(v, heads)), axes=(0, 2, 1, 3))
    y = call("reshape", o, newshape=(1, seq, dim))
    return module([x], [y]), [randn(1, seq, dim)]


def test_float_qkv_become_one_horizontal_and_heads_are_views():
    mod, inputs = float_attention()
    assert ops(mod).count("nn.matmul") == 5 and ops(mod).count("transpose") == 4
    fused = fuse_horizontal(mod)
    assert_same(mod, fused, inputs, exact=False)
    assert ops(fused).count("horizontal") == 1 and ops(fused).count("nn.matmul") == 2   # Q·Kᵀ and P·V
    (h,) = [c for c in iter_calls(fused.main) if c.op == "horizontal"]
    assert len(h.attrs["branches"].outputs) == 3 and h.ty.shape == (3 * 8 * 16,)
    folded = fold_views(fused)
    assert_same(mod, folded, inputs, exact=False)
    assert "transpose" not in ops(folded) and "slice_axis" not in ops(folded)
    assert ops(folded).count("nn.batch_matmul") == 2
    assert sorted(set(ops(folded))) == ["horizontal", "multiply", "nn.batch_matmul", "nn.softmax", "reshape"]


def test_fold_views_without_horizontal():
    mod, inputs = float_attention(seq=5, dim=12, heads=3)
    folded = fold_views(mod)
    assert_same(mod, folded, inputs, exact=False)
    assert "transpose" not in ops(folded) and ops(folded).count("nn.batch_matmul") == 2


def int8_attention(seq=6, dim=8, heads=2):
    """The legalized QDQ form: qnn.matmul → requantize → qnn.add(bias) per projection, each with its
    own quantization, then int8 heads → qnn.batch_matmul → requantize."""
    from tinyfuse.ir import TensorType
    x = Var("x", TensorType((1, seq, dim), "int8"))
    proj = []
    for j in range(3):
        acc = call("qnn.matmul", x, Constant(randi8(dim, dim, lo=-127)), input_zero_point=-3)
        m, sh = quant.quantize_multipliers(RNG.uniform(0.002, 0.01, dim))
        y = call("qnn.requantize", acc, Constant(m), Constant(sh), output_zero_point=int(RNG.integers(-5, 5)))
        p = quant.add_params(0.02, RNG.uniform(0.01, 0.03), 0.03)
        proj.append(call("qnn.add", Constant(randi8(dim)), y, a_zero_point=j, b_zero_point=-j, out_zero_point=2 * j,
                         **p))
    q, k, v = proj
    s = call("qnn.batch_matmul", split_heads(q, heads), split_heads(k, heads, True), a_zero_point=1, b_zero_point=-2)
    m, sh = quant.quantize_multiplier(0.004)
    s8 = call("qnn.requantize", s, Constant(np.array(m, np.int32)), Constant(np.array(sh, np.int32)),
              output_zero_point=3)
    o = call("qnn.batch_matmul", s8, split_heads(v, heads), a_zero_point=3, b_zero_point=0)
    m, sh = quant.quantize_multiplier(0.003)
    o8 = call("qnn.requantize", o, Constant(np.array(m, np.int32)), Constant(np.array(sh, np.int32)))
    y = call("reshape", call("transpose", o8, axes=(0, 2, 1, 3)), newshape=(1, seq, dim))
    return module([x], [y]), [randi8(1, seq, dim)]


def test_int8_qkv_with_different_epilogues_exact():
    mod, inputs = int8_attention()
    fused = fold_views(fuse_horizontal(mod))
    assert_same(mod, fused, inputs, exact=True)
    assert ops(fused).count("horizontal") == 1 and "qnn.matmul" not in ops(fused)
    assert "transpose" not in ops(fused)                # the head merge became out_axes of P·V
    (pv,) = [c for c in iter_calls(fused.main) if c.op == "qnn.batch_matmul" and c.attrs["out_axes"]]
    assert pv.attrs["out_axes"] == (0, 2, 1, 3)


# ----------------------------------------------------------------------------------------- policy, convs, element-wise

def conv_siblings(layout="NHWC", op="nn.conv2d"):
    from tinyfuse.ir import TensorType
    int8 = op.startswith("qnn")
    shape = (1, 6, 5, 4) if layout == "NHWC" else (1, 4, 6, 5)
    x = Var("x", TensorType(shape, "int8" if int8 else "float32"))
    outs = []
    for j, o in enumerate((3, 5, 2)):
        w = randi8(o, 1, 1, 4, lo=-127) if int8 else randn(o, 1, 1, 4)
        if layout == "NCHW":
            w = np.ascontiguousarray(w.transpose(0, 3, 1, 2))
        kw = dict(data_layout=layout, kernel_layout="OHWI" if layout == "NHWC" else "OIHW")
        y = call(op, x, Constant(w), **kw, **({"input_zero_point": 5} if int8 else {}))
        if int8:
            m, sh = quant.quantize_multipliers(RNG.uniform(0.001, 0.01, o))
            y = call("qnn.requantize", y, Constant(m.reshape((1, 1, 1, o) if layout == "NHWC" else (1, o, 1, 1))),
                     Constant(sh.reshape((1, 1, 1, o) if layout == "NHWC" else (1, o, 1, 1))), output_zero_point=j)
            y = call("clip", y, a_min=-100 + j, a_max=120)
        else:
            y = call("nn.relu", call("add", y, Constant(np.array(0.1 * j, np.float32))))
        outs.append(y)
    outs[1] = call("nn.conv2d" if not int8 else "qnn.conv2d", outs[1], Constant(
        (randi8(2, 1, 1, 5, lo=-127) if int8 else randn(2, 1, 1, 5)) if layout == "NHWC" else
        (randi8(2, 5, 1, 1, lo=-127) if int8 else randn(2, 5, 1, 1))),
        data_layout=layout, kernel_layout="OHWI" if layout == "NHWC" else "OIHW")
    xin = randi8(*shape) if int8 else randn(*shape)
    return module([x], outs), [xin]


def test_policy_views_only_keeps_conv_siblings_with_conv_consumers():
    mod, _ = conv_siblings()
    assert find_groups(mod.main) == []                       # a consumer would need a copy
    assert fuse_horizontal(mod) is mod
    assert len(find_groups(mod.main, views_only=False)) == 1


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
@pytest.mark.parametrize("op", ["nn.conv2d", "qnn.conv2d"])
def test_conv_siblings_equivalent(layout, op):
    mod, inputs = conv_siblings(layout, op)
    fused = fuse_horizontal(mod, views_only=False)
    assert ops(fused).count("horizontal") == 1 and ops(fused).count(op) == 1   # the consumer conv remains
    (h,) = [c for c in iter_calls(fused.main) if c.op == "horizontal"]
    assert h.attrs["branches"].fn.body.fields[0].ty.shape[-1 if layout == "NHWC" else 1] == 3
    assert_same(mod, fused, inputs, exact=op.startswith("qnn"))


def test_elementwise_siblings_equivalent():
    from tinyfuse.ir import TensorType
    x = Var("x", TensorType((2, 3, 5), "float32"))
    s = call("sigmoid", x)
    t = call("multiply", call("tanh", x), x)            # chain reads x again: allowed
    r = call("nn.relu", x)
    y = call("multiply", s, t)
    mod = module([x], [y, r])
    fused = fuse_horizontal(mod, views_only=False)
    assert_same(mod, fused, [randn(2, 3, 5) * 3], exact=False)
    (h,) = [c for c in iter_calls(fused.main) if c.op == "horizontal"]
    assert [o.op for o in h.attrs["branches"].outputs] == ["sigmoid", "multiply", "nn.relu"]
    assert fuse_horizontal(mod) is mod


# ----------------------------------------------------------------------------------------- view algebra

def test_views_match_numpy():
    x = np.arange(2 * 3 * 4 * 6).reshape(2, 3, 4, 6)
    v = contiguous(x.shape)
    v = slice_view(v, 3, 2, 6)                       # [2, 3, 4, 4]
    ref = x[..., 2:6]
    v = transpose_view(v, (0, 2, 1, 3))              # [2, 4, 3, 4]
    ref = ref.transpose(0, 2, 1, 3)
    np.testing.assert_array_equal(read_view(x, v), ref)
    w = reshape_view(v, (2, 4, 3, 2, 2))             # split the last dim: always a view
    np.testing.assert_array_equal(read_view(x, w), ref.reshape(2, 4, 3, 2, 2))
    assert reshape_view(v, (2, 4, 12)) is None       # merging strided dims needs a copy
    c = contiguous((4, 6))
    np.testing.assert_array_equal(read_view(x[0, 0], reshape_view(transpose_view(c, (1, 0)), (6, 1, 4))),
                                  x[0, 0].T.reshape(6, 1, 4))
