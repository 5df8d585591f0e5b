"""Per-op tests: small ONNX models built with onnx.helper, compiled → gcc → run, compared with
onnxruntime within 1e-4 x max|ref|. Several ops share one model (one output each) where natural,
to keep the gcc runs few."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.builders import rand
from tests.conftest import check

N = helper.make_node


def transposes(result) -> int:
    return sum("transpose" in k.ops for k in result.kernels)


# ----------------------------------------------------------------------------------------- Conv

CONV_CASES = {  # id: (input shape, weight shape, attributes)
    "3x3_pad1_odd": ((1, 3, 7, 9), (5, 3, 3, 3), dict(pads=[1, 1, 1, 1])),
    "s2_asym_pads": ((1, 3, 9, 8), (4, 3, 3, 3), dict(strides=[2, 2], pads=[0, 1, 2, 1])),
    "dilation2": ((1, 2, 11, 10), (3, 2, 3, 3), dict(dilations=[2, 2], pads=[2, 1, 2, 1])),
    "depthwise_mult3_s2": ((1, 4, 9, 9), (12, 1, 3, 3), dict(group=4, strides=[2, 2], pads=[1, 1, 1, 1])),
    "groups2": ((1, 4, 6, 7), (6, 2, 3, 3), dict(group=2, pads=[1, 0, 1, 2])),
    "same_lower_k4": ((1, 2, 7, 6), (3, 2, 4, 4), dict(auto_pad="SAME_LOWER")),
    "same_lower_s2_k2x3": ((1, 2, 8, 9), (3, 2, 2, 3), dict(auto_pad="SAME_LOWER", strides=[2, 2])),
    "same_upper_s2_even": ((1, 2, 8, 8), (3, 2, 3, 3), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
    "valid_d2_s3": ((1, 3, 13, 12), (2, 3, 3, 2), dict(auto_pad="VALID", dilations=[2, 2], strides=[3, 3])),
    "1x1_batch2": ((2, 5, 4, 3), (7, 5, 1, 1), {}),
    "k3x5_s1x2": ((1, 2, 8, 11), (3, 2, 3, 5), dict(strides=[1, 2], pads=[1, 2, 1, 2])),
    "1d_s2_d2_pads": ((2, 3, 17), (4, 3, 3), dict(strides=[2], dilations=[2], pads=[1, 2])),
    "1d_depthwise_same": ((1, 4, 10), (8, 1, 5), dict(group=4, auto_pad="SAME_UPPER")),
}
NO_BIAS = ["3x3_pad1_odd", "depthwise_mult3_s2", "1d_s2_d2_pads"]


@pytest.mark.parametrize("case,bias", [(c, True) for c in CONV_CASES] + [(c, False) for c in NO_BIAS],
                         ids=list(CONV_CASES) + [c + "_nobias" for c in NO_BIAS])
def test_conv(tmp_path, case, bias):
    xs, ws, attrs = CONV_CASES[case]
    inits = {"W": rand(*ws, seed=1)} | ({"B": rand(ws[0], seed=2)} if bias else {})
    check(tmp_path, [N("Conv", ["X", "W"] + (["B"] if bias else []), ["Y"], **attrs)],
          {"X": rand(*xs)}, ["Y"], inits=inits)


def same_pads(size, kernel, strides, dilations, upper: bool) -> list[int]:
    """Explicit pads of auto_pad SAME_* from the ONNX Conv spec formula (odd pixel at the end for
    SAME_UPPER, at the beginning for SAME_LOWER)."""
    begin, end = [], []
    for n, k, s, d in zip(size, kernel, strides, dilations):
        total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
        begin.append(total // 2 if upper else total - total // 2)
        end.append(total - begin[-1])
    return begin + end


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_conv_same_with_dilation(tmp_path, auto_pad):
    """onnxruntime refuses auto_pad SAME with dilation; its oracle is the same conv with the pads
    of the spec formula written out (onnx.reference agrees with that formula)."""
    xs, ws, strides, dil = (1, 3, 10, 9), (4, 3, 3, 2), [2, 2], [2, 3]
    pads = same_pads(xs[2:], ws[2:], strides, dil, auto_pad == "SAME_UPPER")
    check(tmp_path, [N("Conv", ["X", "W"], ["Y"], auto_pad=auto_pad, strides=strides, dilations=dil)],
          {"X": rand(*xs)}, ["Y"], inits={"W": rand(*ws, seed=1)},
          oracle_nodes=[N("Conv", ["X", "W"], ["Y"], pads=pads, strides=strides, dilations=dil)])


def test_conv_batchnorm_relu_and_standalone_batchnorm(tmp_path):
    c = 4
    bn = {f"{p}{i}": v for i in (1, 2) for p, v in (
        ("s", rand(c, seed=3)), ("b", rand(c, seed=4)), ("m", rand(c, seed=5)), ("v", rand(c, seed=6, low=0.1)))}
    nodes = [N("Conv", ["X", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
             N("BatchNormalization", ["c", "s1", "b1", "m1", "v1"], ["bn"], epsilon=1e-3),
             N("Relu", ["bn"], ["Y1"]),
             N("BatchNormalization", ["X", "s2", "b2", "m2", "v2"], ["Y2"]),          # on the input: scale+shift
             N("BatchNormalization", ["Z", "s2", "b2", "m2", "v2"], ["Y3"])]          # rank 3
    check(tmp_path, nodes, {"X": rand(2, c, 6, 5), "Z": rand(2, c, 7, seed=9)}, ["Y1", "Y2", "Y3"],
          inits={"W": rand(c, c, 3, 3, seed=1), "B": rand(c, seed=2), **bn})


# ----------------------------------------------------------------------------------------- element-wise

def activations(x: str, suffix: str = ""):
    return [N("Relu", [x], ["relu" + suffix]),
            N("LeakyRelu", [x], ["leaky" + suffix], alpha=0.1),
            N("Sigmoid", [x], ["sigmoid" + suffix]),
            N("Tanh", [x], ["tanh" + suffix]),
            N("HardSigmoid", [x], ["hsig" + suffix], alpha=0.3, beta=0.4),
            N("HardSwish", [x], ["hswish" + suffix]),
            N("Clip", [x, "lo", "hi"], ["clip" + suffix]),
            N("Clip", [x, "", "hi"], ["clip_max" + suffix]),
            N("Clip", [x, "lo"], ["clip_min" + suffix]),
            N("Clip", [x], ["clip_none" + suffix])]


ACT_OUTS = ["relu", "leaky", "sigmoid", "tanh", "hsig", "hswish", "clip", "clip_max", "clip_min", "clip_none"]
BOUNDS = {"lo": np.array(-0.5, np.float32), "hi": np.array(0.7, np.float32)}


@pytest.mark.parametrize("shape", [(1, 3, 5, 7), (4, 9)], ids=["rank4", "rank2"])
def test_activations(tmp_path, shape):
    check(tmp_path, activations("X"), {"X": rand(*shape) * 4}, ACT_OUTS, opset=14, inits=BOUNDS)


def test_activations_fused_after_conv(tmp_path):
    """Each activation as the epilogue of its own conv (NHWC inside, fused into the conv kernel)."""
    nodes, outs = [], []
    for i, act in enumerate(activations("c", "")):
        nodes.append(N("Conv", ["X", "W"], [f"c{i}"], pads=[1, 1, 1, 1]))
        act.input[0] = f"c{i}"
        act.output[0] = f"y{i}"
        nodes.append(act)
        outs.append(f"y{i}")
    result = check(tmp_path, nodes, {"X": rand(1, 3, 6, 5) * 3}, outs, opset=14,
                   inits={"W": rand(4, 3, 3, 3, seed=1), **BOUNDS})
    assert any(len(k.ops) > 1 and k.ops[0] == "nn.conv2d" for k in result.kernels)


@pytest.mark.parametrize("opset", [6, 11])
def test_clip_old_opsets(tmp_path, opset):
    """Clip-6 has min/max attributes, Clip-11 inputs; both are upgraded by onnx.version_converter."""
    if opset == 6:
        nodes = [N("Clip", ["X"], ["Y"], min=-0.5, max=1.0), N("Clip", ["X"], ["Y2"], max=0.25)]
        inits = None
    else:
        nodes = [N("Clip", ["X", "lo", "hi"], ["Y"]), N("Clip", ["X", "", "hi"], ["Y2"])]
        inits = BOUNDS
    check(tmp_path, nodes, {"X": rand(2, 3, 4)}, ["Y", "Y2"], opset=opset, inits=inits)


BROADCAST = {  # id: (shape of A, shape of B)
    "same": ((2, 3, 4, 5), (2, 3, 4, 5)),
    "trailing_vec": ((2, 3, 4, 5), (5,)),
    "channel": ((2, 3, 4, 5), (3, 1, 1)),
    "both_ways": ((1, 3, 1, 5), (2, 1, 4, 1)),
    "lower_rank_lhs": ((4, 5), (2, 3, 4, 5)),
    "scalar": ((3, 4), ()),
}


@pytest.mark.parametrize("case", BROADCAST, ids=list(BROADCAST))
def test_binary_broadcast(tmp_path, case):
    sa, sb = BROADCAST[case]
    nodes = [N(op, ["A", "B"], [op]) for op in ("Add", "Sub", "Mul", "Div")]
    check(tmp_path, nodes, {"A": rand(*sa), "B": rand(*sb, seed=1, low=0.5)}, ["Add", "Sub", "Mul", "Div"])


def test_binary_with_constants_and_after_conv(tmp_path):
    """Constant operands of lower rank, and operands meeting an NHWC conv output (4-D input is
    transposed to NHWC, a 3-D one makes the conv output go back to NCHW)."""
    nodes = [N("Add", ["X", "k"], ["Y1"]), N("Div", ["kd", "X"], ["Y2"]),
             N("Conv", ["X", "W"], ["c1"]), N("Mul", ["c1", "G4"], ["Y3"]),
             N("Conv", ["X", "W"], ["c2"]), N("Sub", ["c2", "G3"], ["Y4"])]
    inputs = {"X": rand(1, 3, 4, 5, low=0.5), "G4": rand(1, 2, 1, 5, seed=1), "G3": rand(2, 4, 1, seed=2)}
    check(tmp_path, nodes, inputs, ["Y1", "Y2", "Y3", "Y4"],
          inits={"k": rand(3, 1, 1, seed=3), "kd": np.array([2.0], np.float32), "W": rand(2, 3, 1, 1, seed=4)})


# ----------------------------------------------------------------------------------------- MatMul / Gemm

MATMUL = {  # id: (shape of A, shape of B, B constant?)
    "2d_const": ((3, 4), (4, 5), True),
    "3d_x_2d_var": ((2, 3, 4), (4, 5), False),
    "batched_var": ((2, 3, 4), (2, 4, 5), False),
    "batched_broadcast_const": ((2, 1, 3, 4), (3, 4, 5), True),
    "a_1d": ((4,), (4, 5), True),
    "b_1d": ((2, 3, 4), (4,), False),
}


@pytest.mark.parametrize("case", MATMUL, ids=list(MATMUL))
def test_matmul(tmp_path, case):
    sa, sb, const = MATMUL[case]
    b = rand(*sb, seed=1)
    inputs = {"A": rand(*sa)} | ({} if const else {"B": b})
    check(tmp_path, [N("MatMul", ["A", "B"], ["Y"])], inputs, ["Y"], inits={"B": b} if const else None)


def test_gemm_variants(tmp_path):
    m, k, n = 3, 5, 4
    nodes = [N("Gemm", ["A", "B", "C1"], ["Y_bias_n"]),
             N("Gemm", ["At", "B", "C1n"], ["Y_transA_1xN"], transA=1, alpha=0.5),
             N("Gemm", ["A", "Bt", "C1"], ["Y_transB_alpha_beta"], transB=1, alpha=1.5, beta=-0.75),
             N("Gemm", ["At", "Bt", "Cs"], ["Y_transAB_scalar"], transA=1, transB=1),
             N("Gemm", ["A", "B"], ["Y_no_bias"], alpha=2.0),
             N("Gemm", ["A", "B", "CM1"], ["Y_bias_mx1"], beta=0.5),
             N("Gemm", ["A", "Bv", "Cv"], ["Y_var_b_c"], beta=2.0, alpha=0.25),
             N("Gemm", ["A", "Bvt", "CMN"], ["Y_var_bt_mn"], transB=1)]
    inputs = {"A": rand(m, k), "At": rand(k, m, seed=1), "Bv": rand(k, n, seed=2), "Bvt": rand(n, k, seed=3),
              "Cv": rand(n, seed=4)}
    inits = {"B": rand(k, n, seed=5), "Bt": rand(n, k, seed=6), "C1": rand(n, seed=7), "C1n": rand(1, n, seed=8),
             "Cs": rand(1, seed=9), "CM1": rand(m, 1, seed=10), "CMN": rand(m, n, seed=11)}
    outs = [nd.output[0] for nd in nodes]
    check(tmp_path, nodes, inputs, outs, inits=inits)


# ----------------------------------------------------------------------------------------- pooling

POOL_CASES = {  # id: (op, input shape, attributes)
    "max_k3s2p1": ("MaxPool", (1, 3, 9, 8), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    "max_k2s2_ceil_odd": ("MaxPool", (1, 2, 7, 7), dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)),
    "max_ceil_asym_pads": ("MaxPool", (1, 2, 8, 9), dict(kernel_shape=[3, 2], strides=[2, 3], pads=[0, 1, 1, 0],
                                                         ceil_mode=1)),
    "max_ceil_drop_last": ("MaxPool", (1, 1, 5, 5), dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1],
                                                         ceil_mode=1)),
    "max_same_lower": ("MaxPool", (1, 2, 6, 7), dict(kernel_shape=[2, 3], strides=[2, 2], auto_pad="SAME_LOWER")),
    "avg_k3p1_excl": ("AveragePool", (1, 3, 6, 7), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),
    "avg_k3p1_incl": ("AveragePool", (1, 3, 6, 7), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)),
    "avg_ceil_incl_p1": ("AveragePool", (1, 2, 8, 8), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                                                           ceil_mode=1, count_include_pad=1)),
    "avg_ceil_excl_asym": ("AveragePool", (1, 2, 9, 8), dict(kernel_shape=[2, 3], strides=[2, 2], pads=[1, 0, 0, 1],
                                                             ceil_mode=1)),
    "avg_ceil_incl_nopad": ("AveragePool", (1, 2, 7, 7), dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
                                                              count_include_pad=1)),
    "avg_same_upper_incl": ("AveragePool", (1, 2, 7, 6), dict(kernel_shape=[3, 3], strides=[2, 2],
                                                              auto_pad="SAME_UPPER", count_include_pad=1)),
    "max_1d_s2_ceil": ("MaxPool", (2, 3, 11), dict(kernel_shape=[3], strides=[2], pads=[1, 0], ceil_mode=1)),
    "avg_1d_incl": ("AveragePool", (1, 3, 10), dict(kernel_shape=[4], strides=[3], pads=[2, 1], count_include_pad=1)),
}


@pytest.mark.parametrize("case", POOL_CASES, ids=list(POOL_CASES))
def test_pool(tmp_path, case):
    op, shape, attrs = POOL_CASES[case]
    check(tmp_path, [N(op, ["X"], ["Y"], **attrs)], {"X": rand(*shape)}, ["Y"])


def test_global_average_pool(tmp_path):
    nodes = [N("GlobalAveragePool", ["X"], ["Y4"]), N("GlobalAveragePool", ["Z"], ["Y3"]),
             N("Conv", ["X", "W"], ["c"]), N("GlobalAveragePool", ["c"], ["g"]), N("Flatten", ["g"], ["Yc"])]
    check(tmp_path, nodes, {"X": rand(2, 3, 5, 7), "Z": rand(1, 4, 9, seed=1)}, ["Y4", "Y3", "Yc"],
          inits={"W": rand(6, 3, 1, 1, seed=2)})


# ----------------------------------------------------------------------------------------- shapes and data movement

def test_reshape_flatten_squeeze_unsqueeze(tmp_path):
    x = rand(2, 3, 1, 4)
    ints = lambda *v: np.array(v, np.int64)  # noqa: E731
    nodes = [N("Reshape", ["X", "s0"], ["r0"]), N("Relu", ["r0"], ["Y_reshape_0_m1"]),
             N("Reshape", ["X", "s1"], ["Y_reshape_m1_0"]),
             N("Reshape", ["X", "s2"], ["Y_reshape_allowzero"], allowzero=1),            # Reshape-14
             N("Flatten", ["X"], ["Y_flatten"]), N("Flatten", ["X"], ["Y_flatten0"], axis=0),
             N("Flatten", ["X"], ["Y_flatten_m1"], axis=-1),
             N("Squeeze", ["X", "a2"], ["Y_squeeze2"]), N("Squeeze", ["X"], ["Y_squeeze_all"]),
             N("Unsqueeze", ["X", "am1"], ["Y_unsqueeze_m1"]), N("Unsqueeze", ["X", "a0_3"], ["Y_unsqueeze_0_3"]),
             N("Identity", ["X"], ["Y_identity"]), N("Dropout", ["X", "ratio"], ["Y_dropout"])]
    inits = {"s0": ints(0, -1), "s1": ints(-1, 0, 1), "s2": ints(6, 4), "a2": ints(2), "am1": ints(-1),
             "a0_3": ints(0, 3), "ratio": np.array(0.3, np.float32)}
    check(tmp_path, nodes, {"X": x}, [nd.output[0] for nd in nodes if nd.output[0].startswith("Y")], opset=14,
          inits=inits)


def test_squeeze_unsqueeze_dropout_opset11(tmp_path):
    """Attribute forms (Squeeze-11, Unsqueeze-11, Dropout-10), upgraded by onnx.version_converter."""
    nodes = [N("Squeeze", ["X"], ["s"], axes=[0]), N("Unsqueeze", ["s"], ["u"], axes=[-1, 1]),
             N("Dropout", ["u"], ["d"], ratio=0.5), N("Relu", ["d"], ["Y"])]
    check(tmp_path, nodes, {"X": rand(1, 3, 4)}, ["Y"], opset=11)


@pytest.mark.parametrize("shape,perm", [((2, 3, 4), (2, 0, 1)), ((1, 3, 4, 5), (0, 2, 3, 1)), ((2, 3, 4, 5), None),
                                        ((1, 3, 1, 5), (2, 0, 3, 1))], ids=["rank3", "nchw_to_nhwc", "default",
                                                                            "view_only"])
def test_transpose(tmp_path, shape, perm):
    check(tmp_path, [N("Transpose", ["X"], ["Y"], **({"perm": list(perm)} if perm else {}))],
          {"X": rand(*shape)}, ["Y"])


def test_concat(tmp_path):
    nodes = [N("Concat", ["A", "B", "A"], ["Y_axis1"], axis=1), N("Concat", ["A", "K"], ["Y_const_m1"], axis=-1),
             N("Concat", ["P", "Q"], ["Y_rank2_axis0"], axis=0), N("Concat", ["P"], ["Y_single"], axis=1)]
    inputs = {"A": rand(2, 3, 4), "B": rand(2, 5, 4, seed=1), "P": rand(3, 6, seed=2), "Q": rand(1, 6, seed=3)}
    check(tmp_path, nodes, inputs, [nd.output[0] for nd in nodes], inits={"K": rand(2, 3, 2, seed=4)})


def test_concat_follows_nhwc_without_transposes(tmp_path):
    """conv → concat(channels) → conv stays NHWC: only the model's output is transposed (the first convs
    read the NCHW input through the permutation: fold_input_transpose), and the concat is its own kernel."""
    nodes = [N("Conv", ["X", "W1"], ["a"], pads=[1, 1, 1, 1]), N("Relu", ["a"], ["ar"]),
             N("Conv", ["X", "W2"], ["b"]), N("Concat", ["ar", "b", "ar"], ["c"], axis=1),
             N("Conv", ["c", "W3"], ["Y"])]
    inits = {"W1": rand(4, 3, 3, 3, seed=1), "W2": rand(2, 3, 1, 1, seed=2), "W3": rand(5, 10, 1, 1, seed=3)}
    result = check(tmp_path, nodes, {"X": rand(1, 3, 6, 7)}, ["Y"], inits=inits)
    assert transposes(result) == 1
    assert ["concatenate"] in [k.ops for k in result.kernels]


# ----------------------------------------------------------------------------------------- Softmax

def test_softmax_opset13_axes(tmp_path):
    nodes = [N("Softmax", ["X"], ["Y_axis1"], axis=1), N("Softmax", ["X"], ["Y_default"]),
             N("Softmax", ["X"], ["Y_axis0"], axis=0), N("Conv", ["X4", "W"], ["c"]),
             N("Softmax", ["c"], ["Y_conv_axis1"], axis=1)]
    result = check(tmp_path, nodes, {"X": rand(2, 3, 4), "X4": rand(1, 3, 4, 5, seed=1)},
                   ["Y_axis1", "Y_default", "Y_axis0", "Y_conv_axis1"], inits={"W": rand(6, 3, 1, 1, seed=2)})
    assert transposes(result) == 1   # the conv's result back to NCHW (the conv reads X4 as NCHW)


@pytest.mark.parametrize("axis", [None, 1, 0, 2])
def test_softmax_opset11_coerce_to_2d(tmp_path, axis):
    """Softmax-11 normalises over all dims from ``axis`` on (default 1)."""
    attrs = {} if axis is None else {"axis": axis}
    check(tmp_path, [N("Softmax", ["X"], ["Y"], **attrs)], {"X": rand(2, 3, 4) * 3}, ["Y"], opset=11)


# ----------------------------------------------------------------------------------------- Pad

def test_pad_constant(tmp_path):
    ints = lambda *v: np.array(v, np.int64)  # noqa: E731
    nodes = [N("Pad", ["X", "p4"], ["Y_zero"]),
             N("Pad", ["X", "p4", "cv"], ["Y_value"]),
             N("Pad", ["X", "pneg", "cv"], ["Y_crop"]),
             N("Pad", ["Z", "p2"], ["Y_rank2"]),
             N("Conv", ["X", "W"], ["c"]), N("Pad", ["c", "p4"], ["pc"]), N("Conv", ["pc", "W2"], ["Y_conv_pad_conv"])]
    inits = {"p4": ints(0, 1, 2, 0, 1, 0, 1, 3), "pneg": ints(0, 0, -1, 1, 0, 1, 1, -2), "p2": ints(1, 0, 0, 2),
             "cv": np.array(1.5, np.float32), "W": rand(4, 3, 1, 1, seed=1), "W2": rand(2, 5, 3, 3, seed=2)}
    result = check(tmp_path, nodes, {"X": rand(1, 3, 5, 6), "Z": rand(3, 4, seed=3)},
                   ["Y_zero", "Y_value", "Y_crop", "Y_rank2", "Y_conv_pad_conv"], inits=inits)
    assert sum(k.ops == ["nn.pad"] for k in result.kernels) == 5
    assert transposes(result) == 1   # the conv-pad-conv result back (the conv reads X as NCHW); pad follows


@pytest.mark.parametrize("opset", [2, 11, 18])
def test_pad_opsets(tmp_path, opset):
    """Pad-2 (pads/value attributes, upgraded), Pad-11 (inputs), Pad-18 (axes input)."""
    if opset == 2:
        nodes, inits = [N("Pad", ["X"], ["Y"], pads=[0, 1, 0, 2, 0, 1], value=-2.0)], None
    elif opset == 11:
        nodes, inits = [N("Pad", ["X", "p", "v"], ["Y"])], {"p": np.array([0, 1, 0, 2, 0, 1], np.int64),
                                                             "v": np.array(-2.0, np.float32)}
    else:
        nodes, inits = [N("Pad", ["X", "p", "v", "ax"], ["Y"])], {"p": np.array([2, 1, 0, 3], np.int64),
                                                                   "v": np.array(-2.0, np.float32),
                                                                   "ax": np.array([-1, 1], np.int64)}
    check(tmp_path, nodes, {"X": rand(2, 3, 4)}, ["Y"], opset=opset, inits=inits)


# ----------------------------------------------------------------------------------------- ReduceMean

def test_reduce_mean_opset13(tmp_path):
    nodes = [N("ReduceMean", ["X"], ["Y_hw_keep"], axes=[2, 3]),
             N("ReduceMean", ["X"], ["Y_hw"], axes=[-1, -2], keepdims=0),
             N("ReduceMean", ["X"], ["Y_c"], axes=[1], keepdims=0),
             N("ReduceMean", ["X"], ["Y_all"], keepdims=0),
             N("ReduceMean", ["X"], ["Y_all_keep"]),
             N("Conv", ["X", "W"], ["c"]), N("ReduceMean", ["c"], ["Y_conv_hw"], axes=[2, 3], keepdims=0),
             N("Conv", ["X", "W"], ["c2"]), N("ReduceMean", ["c2"], ["Y_conv_w"], axes=[3], keepdims=0),
             N("Conv", ["X", "W"], ["c3"]), N("ReduceMean", ["c3"], ["m3"], axes=[1]), N("Relu", ["m3"], ["Y_conv_c"])]
    result = check(tmp_path, nodes, {"X": rand(2, 3, 4, 5)},
                   [nd.output[0] for nd in nodes if nd.output[0].startswith("Y")], inits={"W": rand(4, 3, 1, 1, seed=1)})
    assert transposes(result) == 1   # c2 back: a mean over W alone cannot follow NHWC (the convs read X as NCHW)


def test_reduce_mean_opset18(tmp_path):
    """ReduceMean-18: axes is an input; without it every axis is reduced, unless noop_with_empty_axes."""
    nodes = [N("ReduceMean", ["X", "ax"], ["Y_axes_input"], keepdims=0), N("ReduceMean", ["X"], ["Y_all"]),
             N("ReduceMean", ["X"], ["r"], noop_with_empty_axes=1), N("Relu", ["r"], ["Y_noop"])]
    check(tmp_path, nodes, {"X": rand(3, 4, 5)}, ["Y_axes_input", "Y_all", "Y_noop"], opset=18,
          inits={"ax": np.array([0, 2], np.int64)})
