"""One-op tests of the data-movement and small element-wise ops (Slice, Split, Gather, Cast, Expand,
Tile, Where, PRelu): ONNX models built with onnx.helper, compiled → gcc → run, compared with
onnxruntime (and the interpreter) within 1e-4 x max|ref|."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.builders import rand
from tests.conftest import check

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


GATHER_CASES = {  # id: (input shape, indices, axis)
    "axis0_rows": ((5, 4), [[0, 3], [4, 1]], 0),
    "axis1_negative": ((2, 6, 3), [-1, 0, -3], 1),
    "axis_last_progression": ((3, 4, 8), [1, 3, 5], -1),
    "single_index_rank1": ((4, 5), [2], 1),
}


@pytest.mark.parametrize("case", list(GATHER_CASES))
def test_gather(tmp_path, case):
    shape, idx, axis = GATHER_CASES[case]
    check(tmp_path, [N("Gather", ["X", "i"], ["Y"], axis=axis)], {"X": rand(*shape)}, ["Y"],
          inits={"i": np.array(idx, I64)})


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
