"""One-op tests of the data-movement and small element-wise ops (Slice, Split, Gather, Cast, Expand,
Tile, Where, PRelu): ONNX models built with onnx.helper, compiled → gcc → run, compared with
onnxruntime (and the interpreter) within 1e-4 x max|ref|."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.builders import rand
from tests.conftest import assert_close_to, check

N = helper.make_node
I64 = np.int64
BIG = np.iinfo(np.int64).max

SLICE_CASES = {  # id: (input shape, starts, ends, axes, steps)
    "outer_axis": ((6, 5), [1], [4], [0], None),
    "inner_axis_neg_axis": ((2, 3, 7), [2], [-1], [-1], None),
    "steps2_two_axes": ((5, 9, 4), [0, 1], [5, 9], [0, 1], [2, 3]),
    "negative_step": ((4, 7), [-1, 5], [-BIG, 0], [0, 1], [-1, -2]),
    "clamped_starts_ends": ((3, 8), [-100, 2], [100, BIG], [0, 1], [1, 1]),
    "default_axes": ((4, 6, 5), [1, 0, 2], [3, 6, 5], None, None),
    "neg_start_step_minus3": ((1, 3, 10, 4), [-2], [-11], [2], [-3]),
}


@pytest.mark.parametrize("case", list(SLICE_CASES))
def test_slice(tmp_path, case):
    shape, starts, ends, axes, steps = SLICE_CASES[case]
    inits = {"s": np.array(starts, I64), "e": np.array(ends, I64)}
    names = ["X", "s", "e"]
    if axes is not None or steps is not None:
        inits["a"] = np.array(axes if axes is not None else range(len(starts)), I64)
        names.append("a")
    if steps is not None:
        inits["t"] = np.array(steps, I64)
        names.append("t")
    check(tmp_path, [N("Slice", names, ["Y"])], {"X": rand(*shape)}, ["Y"], inits=inits)


def test_slice_feeds_conv_and_add(tmp_path):
    """A slice between compute ops (the copy kernel reads the producer's buffer, feeds a conv)."""
    nodes = [N("Relu", ["X"], ["r"]), N("Slice", ["r", "s", "e", "a", "t"], ["sl"]),
             N("Conv", ["sl", "W"], ["Y"], pads=[1, 1, 1, 1])]
    inits = {"s": np.array([1, 0], I64), "e": np.array([9, 7], I64), "a": np.array([2, 3], I64),
             "t": np.array([2, 1], I64), "W": rand(4, 3, 3, 3, seed=1)}
    check(tmp_path, nodes, {"X": rand(1, 3, 9, 7)}, ["Y"], inits=inits)


@pytest.mark.parametrize("case", ["equal_axis0", "sizes_neg_axis", "opset18_num_outputs_uneven"])
def test_split(tmp_path, case):
    if case == "equal_axis0":
        check(tmp_path, [N("Split", ["X"], ["A", "B", "C"], axis=0)], {"X": rand(6, 5)}, ["A", "B", "C"])
    elif case == "sizes_neg_axis":
        nodes = [N("Split", ["X", "sp"], ["A", "B"], axis=-1), N("Add", ["A", "A"], ["Y"])]
        check(tmp_path, nodes, {"X": rand(2, 3, 7)}, ["Y", "B"], inits={"sp": np.array([3, 4], I64)})
    else:
        check(tmp_path, [N("Split", ["X"], ["A", "B", "C"], axis=1, num_outputs=3)], {"X": rand(2, 8, 3)},
              ["A", "B", "C"], opset=18)


def test_split_outer_axis_is_a_view(tmp_path):
    """Split of [1, 6, 4] along axis 1 cuts contiguous ranges of the relu's buffer: the consumers read
    it at their offsets (slice_view), no copy kernel runs and no kernel writes over an offset view."""
    nodes = [N("Relu", ["X"], ["r"]), N("Split", ["r", "sp"], ["a", "b", "c"], axis=1),
             N("Sigmoid", ["a"], ["Y1"]), N("Mul", ["b", "b"], ["Y2"]), N("Tanh", ["c"], ["Y3"]),
             N("Slice", ["r", "s", "e", "ax"], ["w"]), N("Relu", ["w"], ["Y4"])]
    inits = {"sp": np.array([2, 3, 1], I64), "s": np.array([-4], I64), "e": np.array([5], I64),
             "ax": np.array([1], I64)}
    result = check(tmp_path, nodes, {"X": rand(1, 6, 4)}, ["Y1", "Y2", "Y3", "Y4"], inits=inits)
    assert sorted(k.ops[0] for k in result.kernels) == ["multiply", "nn.relu", "nn.relu", "sigmoid", "tanh"]


GATHER_CASES = {  # id: (input shape, indices, axis)
    "axis0_rows": ((5, 4), [[0, 3], [4, 1]], 0),
    "axis1_negative": ((2, 6, 3), [-1, 0, -3], 1),
    "axis_last_progression": ((3, 4, 8), [1, 3, 5], -1),
    "single_index_rank1": ((4, 5), [2], 1),
    # a 0-d index drops the axis (Gather-13: output rank r - 1 + q, q = 0)
    **{f"scalar_axis{a}": ((3, 4, 5, 2), 1, a) for a in range(4)},
    **{f"scalar_negative_axis{a}": ((3, 4, 5, 2), -1, a) for a in (-4, -2, -1)},
    "scalar_rank2": ((6, 7), -6, 1),
}


@pytest.mark.parametrize("case", list(GATHER_CASES))
def test_gather(tmp_path, case):
    shape, idx, axis = GATHER_CASES[case]
    check(tmp_path, [N("Gather", ["X", "i"], ["Y"], axis=axis)], {"X": rand(*shape)}, ["Y"],
          inits={"i": np.array(idx, I64)})


def test_gather_scalar_index_shufflenet_channel_split(tmp_path):
    """ShuffleNetV2's channel split: Reshape [1, 48, H, W] → [1, 2, 24, H, W] → Transpose → Reshape
    [2, 1, 24, H, W] → Gather(0) and Gather(1) with 0-d indices ([1, 24, H, W] each) → Conv, Add."""
    h = 44
    nodes = [N("Reshape", ["X", "s1"], ["r1"]), N("Transpose", ["r1"], ["t"], perm=[1, 0, 2, 3, 4]),
             N("Reshape", ["t", "s2"], ["r2"]), N("Gather", ["r2", "i0"], ["g0"], axis=0),
             N("Gather", ["r2", "i1"], ["g1"], axis=0), N("Conv", ["g1", "w"], ["c"], pads=[1, 1, 1, 1]),
             N("Relu", ["c"], ["r"]), N("Concat", ["g0", "r"], ["Y"], axis=1)]
    inits = {"s1": np.array([1, 2, 24, h, h], I64), "s2": np.array([-1, 1, 24, h, h], I64),
             "i0": np.array(0, I64), "i1": np.array(1, I64), "w": rand(24, 24, 3, 3, seed=3) * 0.2}
    result = check(tmp_path, nodes, {"X": rand(1, 48, h, h)}, ["Y"], inits=inits)
    assert result.kernels


def test_cast_float_int_float(tmp_path):
    """float → int32 truncates toward zero, → int8 and back to float; a cast to the same type is dropped."""
    nodes = [N("Mul", ["X", "k"], ["m"]), N("Cast", ["m"], ["i"], to=TensorProto.INT32),
             N("Cast", ["i"], ["Y"], to=TensorProto.FLOAT), N("Cast", ["X"], ["Z"], to=TensorProto.FLOAT),
             N("Cast", ["m"], ["b"], to=TensorProto.INT8), N("Cast", ["b"], ["W"], to=TensorProto.FLOAT)]
    check(tmp_path, nodes, {"X": rand(3, 7)}, ["Y", "Z", "W"], inits={"k": np.array(20.0, np.float32)})


@pytest.mark.parametrize("case", ["channel", "rank_up", "both_directions"])
def test_expand(tmp_path, case):
    shape, target = {"channel": ((1, 3, 1, 1), [2, 3, 4, 5]), "rank_up": ((5,), [3, 1, 5]),
                     "both_directions": ((3, 1), [2, 1, 6])}[case]
    check(tmp_path, [N("Expand", ["X", "s"], ["Y"])], {"X": rand(*shape)}, ["Y"],
          inits={"s": np.array(target, I64)})


@pytest.mark.parametrize("case", ["two_axes", "inner_only", "rank4"])
def test_tile(tmp_path, case):
    shape, reps = {"two_axes": ((2, 3), [3, 2]), "inner_only": ((3, 5), [1, 4]),
                   "rank4": ((1, 2, 3, 1), [2, 1, 2, 3])}[case]
    check(tmp_path, [N("Tile", ["X", "r"], ["Y"])], {"X": rand(*shape)}, ["Y"],
          inits={"r": np.array(reps, I64)})


def test_where_constant_condition(tmp_path):
    nodes = [N("Where", ["c1", "X", "Z"], ["Y1"]), N("Where", ["c0", "X", "Z"], ["Y2"])]
    check(tmp_path, nodes, {"X": rand(2, 1, 4), "Z": rand(3, 4, seed=2)}, ["Y1", "Y2"],
          inits={"c1": np.ones((3, 1), bool), "c0": np.zeros((1, 4), bool)})


@pytest.mark.parametrize("case", ["per_channel", "scalar", "last_axis"])
def test_prelu(tmp_path, case):
    shape, slope = {"per_channel": ((1, 4, 5, 3), (4, 1, 1)), "scalar": ((3, 7), (1,)),
                    "last_axis": ((2, 3, 6), (6,))}[case]
    check(tmp_path, [N("PRelu", ["X", "s"], ["Y"])], {"X": rand(*shape)}, ["Y"], inits={"s": rand(*slope, seed=3)})


def test_prelu_fuses_into_conv_epilogue(tmp_path):
    nodes = [N("Conv", ["X", "W", "B"], ["c"], pads=[1, 1, 1, 1]), N("PRelu", ["c", "s"], ["Y"])]
    result = check(tmp_path, nodes, {"X": rand(1, 3, 6, 6)}, ["Y"],
                   inits={"W": rand(5, 3, 3, 3, seed=1), "B": rand(5, seed=2), "s": rand(5, 1, 1, seed=3)})
    assert ["nn.conv2d", "add", "nn.prelu"] in [k.ops for k in result.kernels]     # the epilogue of the conv


# ----------------------------------------------------------------------------------------- TFLite one-ops vs TFLM

def tflite_vs_tflm(tmp_path, model: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Compile the .tflite bytes, run them, and assert every output equals TFLM's (int8: exactly;
    float: within 1e-6 x max|ref|, data movement is exact too). Returns tinyfuse's outputs."""
    from tests.builders import tflm_oneop
    from tests.conftest import compile_and_run
    got, _ = compile_and_run(model, inputs, tmp_path)
    want = tflm_oneop().run(model, inputs)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape, g.dtype, w.dtype)
        if w.dtype == np.int8:
            assert np.array_equal(g, w), f"output {i}: {np.sum(g != w)} of {g.size} int8 values differ from TFLM"
        else:
            assert_close_to(g, w, rel=1e-6)
    return got


def i8(rng, shape):
    return rng.integers(-128, 128, shape).astype(np.int8)


Q = (0.05, -7)
STRIDED_CASES = {  # id: (x shape, out shape, begin, end, strides, masks)
    "okay_nabu_tail": ((1, 11, 1, 64), (1, 10, 1, 64), [0, -10, 0, 0], [0, 0, 0, 64], [1, 1, 1, 1],
                       dict(beginMask=13, endMask=15)),
    "steps_neg_begin": ((2, 9, 7), (2, 3, 3), [0, -8, 1], [2, 9, 7], [1, 3, 2], {}),
    "negative_stride": ((5, 6), (3, 2), [4, -1], [-6, 0], [-2, -3], dict(endMask=1)),
    "shrink_axis": ((3, 4, 5), (4, 2), [1, 0, 1], [2, 4, 5], [1, 1, 2], dict(shrinkAxisMask=1)),
    "clamped_end": ((4, 6), (2, 6), [2, 0], [100, 6], [1, 1], {}),
}


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("case", list(STRIDED_CASES))
def test_tflite_strided_slice(tmp_path, case, dtype):
    from tests.builders import tflm_misc
    xs, ys, b, e, s, masks = STRIDED_CASES[case]
    rng = np.random.default_rng(1)
    x = i8(rng, xs) if dtype == "int8" else rand(*xs)
    tflite_vs_tflm(tmp_path, tflm_misc.strided_slice(xs, ys, b, e, s, Q if dtype == "int8" else None, **masks), [x])


@pytest.mark.parametrize("case", ["split_axis1", "split_neg_axis", "split_v_rest", "split_v_okay_nabu"])
def test_tflite_split(tmp_path, case):
    from tests.builders import tflm_misc
    rng = np.random.default_rng(2)
    if case == "split_axis1":
        model, xs = tflm_misc.split((2, 6, 5), 1, 3, Q), (2, 6, 5)
    elif case == "split_neg_axis":
        model, xs = tflm_misc.split((3, 1, 8), -1, 2, Q), (3, 1, 8)
    elif case == "split_v_rest":
        model, xs = tflm_misc.split_v((4, 9), [2, -1, 3], 1, Q), (4, 9)
    else:
        model, xs = tflm_misc.split_v((1, 11, 1, 64), [32, 32], -1, Q), (1, 11, 1, 64)
    tflite_vs_tflm(tmp_path, model, [i8(rng, xs)])


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_tflite_gather(tmp_path, dtype):
    from tests.builders import tflm_misc
    rng = np.random.default_rng(3)
    x = i8(rng, (3, 7, 4)) if dtype == "int8" else rand(3, 7, 4)
    tflite_vs_tflm(tmp_path, tflm_misc.gather((3, 7, 4), [[6, 0], [2, 5]], 1, Q if dtype == "int8" else None), [x])


PRELU_CASES = {  # id: (x shape, alpha shape, in_q, alpha_q, out_q)
    "per_channel": ((1, 5, 4, 6), (1, 1, 6), (0.05, -7), (0.01, 3), (0.04, 10)),
    "scalar_alpha_big_scale": ((2, 9, 3), (1,), (0.2, 5), (0.003, -20), (0.02, -100)),
    "negative_alpha_row": ((3, 8), (8,), (0.1, 0), (0.02, 0), (0.08, -3)),
}


@pytest.mark.parametrize("case", list(PRELU_CASES))
def test_tflite_prelu_int8_exact(tmp_path, case):
    """TFLM's PRELU arithmetic: two multipliers (identity for x >= z_x, s_x·s_α/s_y below)."""
    from tests.builders import tflm_misc
    xs, as_, in_q, a_q, out_q = PRELU_CASES[case]
    rng = np.random.default_rng(4)
    alpha = i8(rng, as_)
    tflite_vs_tflm(tmp_path, tflm_misc.prelu(xs, alpha, in_q, a_q, out_q), [i8(rng, xs)])


def test_tflite_prelu_float(tmp_path):
    from tests.builders import tflm_misc
    tflite_vs_tflm(tmp_path, tflm_misc.prelu((1, 4, 3, 5), rand(1, 1, 5, seed=2)), [rand(1, 4, 3, 5)])


# ----------------------------------------------------------------------------------------- ONNX QDQ int8 vs onnxruntime

def qdq_model(op: str, x_shape, q, out_q, consts=(), slope=None, **attrs):
    """int8 x → DequantizeLinear → op(x, *consts) [PRelu: dq(int8 slope)] → QuantizeLinear → int8 y."""
    from tests.builders.qdq import _Graph
    g = _Graph()
    x = g.dq(g.input("x", x_shape), q)
    ins = [x] + [g.const("c", c) for c in consts]
    if slope is not None:
        ins.append(g.node("DequantizeLinear", [g.const("a", slope[0]), g.const("as", np.float32(slope[1][0])),
                                                g.const("az", np.int8(slope[1][1]))], "dqa"))
    return g.finish(g.node(op, ins, **attrs), out_q, False, nchw=False)


QDQ_CASES = {
    "Slice": ((2, 9, 6), dict(consts=(np.array([1, -1], I64), np.array([9, -BIG], I64), np.array([1, 2], I64),
                                      np.array([2, -2], I64)))),
    "Gather": ((4, 6), dict(consts=(np.array([3, 0, -1], I64),), axis=1)),
    "Tile": ((2, 3), dict(consts=(np.array([2, 3], I64),))),
    "Expand": ((3, 1), dict(consts=(np.array([2, 3, 4], I64),))),
    "PRelu": ((1, 3, 4, 5), dict(slope=(np.array([[[40]], [[-90]], [[127]]], np.int8), (0.004, 0)))),
}


@pytest.mark.parametrize("op", list(QDQ_CASES))
def test_qdq_int8_within_one_lsb_of_ort(tmp_path, op):
    from tests.conftest import compile_and_run, ort_run
    xs, kw = QDQ_CASES[op]
    out_q = (0.05, -7) if op != "PRelu" else (0.04, 12)
    model = qdq_model(op, xs, (0.05, -7), out_q, **kw)
    x = i8(np.random.default_rng(5), xs)
    (got,), result = compile_and_run(model, [x], tmp_path)
    (want,) = ort_run(model, {"x": x})
    diff = np.abs(np.asarray(got).astype(int) - want.astype(int))
    assert got.shape == want.shape and diff.max() <= (1 if op == "PRelu" else 0), diff.max()
    for k in result.kernels:              # int8 end to end
        assert not {"qnn.dequantize", "qnn.quantize"} & set(k.ops), k.ops


def test_qdq_conv_prelu_int8_fuses_and_is_within_one_lsb(tmp_path):
    """int8 conv → requantize → qnn.prelu (per-channel int8 slope) in one kernel, within 1 LSB of ORT."""
    from tests.builders.qdq import _Graph
    from tests.conftest import compile_and_run, ort_run
    rng = np.random.default_rng(6)
    g = _Graph()
    x = g.dq(g.input("x", (1, 3, 6, 5)), (0.05, -7))
    w = g.dq_const(rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8), 0.01, np.int8)
    c = g.node("Conv", [x, w], "conv", pads=[1, 1, 1, 1])
    c = g.dq(g.node("QuantizeLinear", [c, g.const("cs", np.float32(0.06)), g.const("cz", np.int8(3))], "qc"),
             (0.06, 3))
    a = g.node("DequantizeLinear", [g.const("a", rng.integers(-127, 128, (4, 1, 1)).astype(np.int8)),
                                    g.const("as", np.float32(0.005)), g.const("az", np.int8(0))], "dqa")
    model = g.finish(g.node("PRelu", [c, a]), (0.05, -20), False, nchw=False)
    xv = i8(rng, (1, 3, 6, 5))
    (got,), result = compile_and_run(model, [xv], tmp_path)
    (want,) = ort_run(model, {"x": xv})
    assert np.abs(np.asarray(got).astype(int) - want.astype(int)).max() <= 1
    assert any("qnn.conv2d" in k.ops and "qnn.prelu" in k.ops for k in result.kernels), [k.ops for k in result.kernels]
