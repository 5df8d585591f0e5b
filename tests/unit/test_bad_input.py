"""The bad-input contract of ``tinyfuse compile``: a model tinyfuse cannot compile gives exit code 2,
exactly one stderr line starting with ``error:`` that names the node, op type and opset (where a node
is involved) and the offending shape or attribute, and no output directory."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

from tinyfuse.cli import main
from tests.builders import good_model, model_bytes
from tests.conftest import ROOT

N = helper.make_node
F = TensorProto.FLOAT


def initializer_dims_lie() -> bytes:
    """good_model with its weight's dims claiming 2^31 x 3 x 3 x 3 elements it does not hold."""
    import onnx
    m = onnx.load_from_string(good_model())
    m.graph.initializer[0].dims[0] = 2**31
    return m.SerializeToString()


W4 = np.ones((4, 2, 3, 3), np.float32)
X4 = {"X": [1, 2, 6, 6]}

# id: (file contents, fragments the one error line must contain)
BAD = {
    "unsupported_op": (model_bytes([N("LRN", ["X"], ["Y"], name="lrn1", size=3)], X4),
                       ["node 'lrn1' (LRN, opset 13)", "not supported"]),
    "dynamic_dim": (model_bytes([N("Relu", ["X"], ["Y"])], {"X": ["batch", 3, "h", 8]}),
                    ["input 'X'", "dynamic shape", "'batch', 3, 'h', 8", "dim 2 ('h')", "--input-shape X="]),
    "no_input_shape": (model_bytes([N("Relu", ["X"], ["Y"])], {"X": None}), ["input 'X'", "shape"]),
    "float64_input": (model_bytes([N("Relu", ["X"], ["Y"])], {"X": (TensorProto.DOUBLE, [2, 3])}),
                      ["input 'X'", "float64"]),
    "missing_initializer": (model_bytes([N("Conv", ["X", "W"], ["Y"], name="conv0")], X4),
                            ["node 'conv0' (Conv, opset 13)", "input 'W'"]),
    "pad_reflect": (model_bytes([N("Pad", ["X", "p"], ["Y"], name="pad0", mode="reflect")], X4,
                                inits={"p": np.array([0, 0, -6, 0, 0, 0, 0, 1], np.int64)}),
                    ["node 'pad0' (Pad, opset 13)", "crop input", "to nothing"]),
    "conv_4d": (model_bytes([N("Conv", ["X", "W"], ["Y"], name="conv4d")], {"X": [1, 2, 4, 4, 4, 4]},
                            inits={"W": np.ones((3, 2, 2, 2, 2, 2), np.float32)}),
                ["node 'conv4d' (Conv, opset 13)", "3-D", "[3, 2, 2, 2, 2, 2]"]),
    "conv_weight_not_constant": (model_bytes([N("Conv", ["X", "W"], ["Y"], name="c")], {**X4, "W": [4, 2, 3, 3]}),
                                 ["node 'c' (Conv, opset 13)", "weight W", "constant"]),
    "conv_group_mismatch": (model_bytes([N("Conv", ["X", "W"], ["Y"], name="c", group=2)], X4, inits={"W": W4}),
                            ["node 'c' (Conv, opset 13)", "group 2", "[4, 2, 3, 3]"]),
    "conv_bad_auto_pad": (model_bytes([N("Conv", ["X", "W"], ["Y"], name="c", auto_pad="SAME")], X4,
                                      inits={"W": W4}), ["node 'c' (Conv, opset 13)", "auto_pad 'SAME'"]),
    "conv_empty_output": (model_bytes([N("Conv", ["X", "W"], ["Y"], name="c")], {"X": [1, 2, 2, 2]},
                                      inits={"W": W4}), ["node 'c' (Conv, opset 13)", "empty"]),
    "maxpool_4d": (model_bytes([N("MaxPool", ["X"], ["Y"], name="mp", kernel_shape=[2, 2, 2, 2])],
                               {"X": [1, 2, 4, 4, 4, 4]}), ["node 'mp' (MaxPool, opset 13)", "3-D pooling", "[2, 2, 2, 2]"]),
    "avgpool_pad_ge_kernel": (model_bytes([N("AveragePool", ["X"], ["Y"], name="ap", kernel_shape=[2, 2],
                                             pads=[0, 2, 0, 0])], X4),
                              ["node 'ap' (AveragePool, opset 13)", "pads [0, 2, 0, 0]", "kernel_shape [2, 2]"]),
    "maxpool_indices": (model_bytes([N("MaxPool", ["X"], ["Y", "I"], name="mp", kernel_shape=[2])], {"X": [1, 2, 8]}),
                        ["node 'mp' (MaxPool, opset 13)", "Indices", "1-D"]),
    "batchnorm_training": (model_bytes([N("BatchNormalization", ["X", "s", "s", "s", "s"], ["Y"], name="bn",
                                          training_mode=1)], X4, inits={"s": np.ones(2, np.float32)}, opset=15),
                           ["node 'bn' (BatchNormalization, opset 15)", "training_mode"]),
    "add_no_broadcast": (model_bytes([N("Add", ["X", "B"], ["Y"], name="add0")], {"X": [2, 3], "B": [4]}),
                         ["node 'add0' (Add, opset 13)", "[2, 3]", "[4]"]),
    "matmul_mismatch": (model_bytes([N("MatMul", ["X", "B"], ["Y"], name="mm")], {"X": [2, 3], "B": [4, 5]}),
                        ["node 'mm' (MatMul, opset 13)", "[2, 3]", "[4, 5]"]),
    "reshape_bad_shape": (model_bytes([N("Reshape", ["X", "s"], ["Y"], name="r")], X4,
                                      inits={"s": np.array([5, -1], np.int64)}),
                          ["node 'r' (Reshape, opset 13)", "[5, -1]"]),
    "squeeze_non_unit": (model_bytes([N("Squeeze", ["X", "a"], ["Y"], name="sq")], X4,
                                     inits={"a": np.array([1], np.int64)}),
                         ["node 'sq' (Squeeze, opset 13)", "axes [1]", "[1, 2, 6, 6]"]),
    "concat_mismatch": (model_bytes([N("Concat", ["X", "B"], ["Y"], name="cat", axis=1)],
                                    {"X": [1, 2, 6, 6], "B": [1, 2, 5, 6]}),
                        ["node 'cat' (Concat, opset 13)", "axis 1"]),
    "concat_no_axis": (model_bytes([N("Concat", ["X", "X"], ["Y"], name="cat")], X4),
                       ["node 'cat' (Concat, opset 13)", "'axis'"]),
    "softmax_bad_axis": (model_bytes([N("Softmax", ["X"], ["Y"], name="sm", axis=4)], X4),
                         ["node 'sm' (Softmax, opset 13)", "axis 4"]),
    "attr_wrong_type": (model_bytes([N("Conv", ["X", "W"], ["Y"], name="c", group="two")], X4, inits={"W": W4}),
                        ["node 'c' (Conv, opset 13)", "group", "STRING"]),
    "attr_unknown": (model_bytes([N("Relu", ["X"], ["Y"], name="r", alpha=0.1)], X4),
                     ["node 'r' (Relu, opset 13)", "alpha"]),
    "attr_required_missing": (model_bytes([N("MaxPool", ["X"], ["Y"], name="mp")], X4),
                              ["node 'mp' (MaxPool, opset 13)", "kernel_shape"]),
    "relu_two_inputs": (model_bytes([N("Relu", ["X", "X"], ["Y"], name="r")], X4),
                        ["node 'r' (Relu, opset 13)", "input size 2"]),
    "foreign_domain": (model_bytes([N("FusedConv", ["X"], ["Y"], name="fc", domain="com.microsoft")], X4,
                                   domain_opsets=[("com.microsoft", 1)]),
                       ["node 'fc' (FusedConv, opset 13)", "com.microsoft"]),
    "opset_too_new": (model_bytes([N("Relu", ["X"], ["Y"])], X4, opset=99), ["opset 99"]),
    "newline_in_name": (model_bytes([N("LRN", ["X\nZ"], ["Y"], name="a\nb", size=3)], {"X\nZ": [1, 2, 3, 3]}),
                        ["node 'a\\nb' (LRN, opset 13)"]),
    "op_type_not_utf8": (good_model().replace(b"Relu", b"\xffelu"), ["not valid UTF-8"]),
    "huge_input": (model_bytes([N("Relu", ["X"], ["Y"])], {"X": [2**20, 2**20, 4]}), ["input 'X'", "bytes"]),
    "huge_pad": (model_bytes([N("Pad", ["X", "p"], ["Y"], name="pad")], X4,
                             inits={"p": np.array([0, 0, 0, 2**40, 0, 0, 0, 0], np.int64)}),
                 ["node 'pad' (Pad, opset 13)", "bytes"]),
    "unknown_elem_type": (model_bytes([N("Relu", ["X"], ["Y"])], {"X": (77, [2, 3])}), ["input 'X'", "code 77"]),
    "cyclic_graph": (model_bytes([N("Relu", ["b"], ["a"], name="r1"), N("Relu", ["a"], ["b"], name="r2"),
                                  N("Add", ["X", "a"], ["Y"], name="add")], X4),
                     ["node 'r1' (Relu, opset 13)", "input 'b'", "topologically sorted"]),
    "conv_too_few_inputs": (model_bytes([N("Conv", ["X"], ["Y"], name="c")], X4),
                            ["node 'c' (Conv, opset 13)", "input size 1"]),
    "op_newer_than_opset": (model_bytes([N("Gelu", ["X"], ["Y"], name="g")], X4),
                            ["node 'g' (Gelu, opset 13)", "not defined in ai.onnx opset 13", "opset 20"]),
    "zero_size_initializer": (model_bytes([N("Add", ["X", "B"], ["Y"], name="a")], {"X": [2, 3]},
                                          inits={"B": np.zeros((0,), np.float32)}),
                              ["node 'a' (Add, opset 13)", "[2, 3]", "[0]"]),
    "conv_stride_0": (model_bytes([N("Conv", ["X", "W"], ["Y"], name="c", strides=[0, 1])], X4, inits={"W": W4}),
                      ["node 'c' (Conv, opset 13)", "strides [0, 1]", "positive"]),
    "conv_dilation_0": (model_bytes([N("Conv", ["X", "W"], ["Y"], name="c", dilations=[1, 0])], X4, inits={"W": W4}),
                        ["node 'c' (Conv, opset 13)", "dilations [1, 0]", "positive"]),
    "conv_group_0": (model_bytes([N("Conv", ["X", "W"], ["Y"], name="c", group=0)], X4, inits={"W": W4}),
                     ["node 'c' (Conv, opset 13)", "group 0"]),
    "pool_kernel_0": (model_bytes([N("MaxPool", ["X"], ["Y"], name="mp", kernel_shape=[0, 2])], X4),
                      ["node 'mp' (MaxPool, opset 13)", "kernel_shape [0, 2]", "positive"]),
    "input_2p31_elements": (model_bytes([N("Relu", ["X"], ["Y"])], {"X": [2**31]}),
                            ["input 'X'", "[2147483648]", "bytes"]),
    "reshape_2p31_elements": (model_bytes([N("Reshape", ["X", "s"], ["Y"], name="r")], X4,
                                          inits={"s": np.array([2**31, -1], np.int64)}),
                              ["node 'r' (Reshape, opset 13)", "[2147483648, -1]"]),
    "axis_2p40": (model_bytes([N("Softmax", ["X"], ["Y"], name="sm", axis=2**40)], X4),
                  ["node 'sm' (Softmax, opset 13)", "axis 1099511627776"]),
    "initializer_dims_lie": (initializer_dims_lie(), ["initializer 'W'", "[2147483648, 3, 3, 3]", "damaged"]),
    "not_protobuf": (b"this is a text file, not an ONNX model\n", ["not a valid ONNX file"]),
    "random_bytes": (np.random.default_rng(1).integers(0, 256, 4000, dtype=np.uint8).tobytes(), ["ONNX"]),
    "empty_file": (b"", ["bad.onnx: the file is empty"]),
}


def compile_error(tmp_path, capsys, data: bytes, *options: str) -> str:
    path = tmp_path / "bad.onnx"
    path.write_bytes(data)
    out = tmp_path / "out"
    rc = main(["compile", str(path), "-o", str(out), *options])
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert rc == 2, (rc, captured.err)
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["bad.onnx"]
    return lines[0]


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_model_is_one_line_error(tmp_path, capsys, case):
    data, fragments = BAD[case]
    line = compile_error(tmp_path, capsys, data)
    for f in fragments:
        assert f in line, f"{f!r} not in {line!r}"


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.99])
def test_truncated_file_is_one_line_error(tmp_path, capsys, fraction):
    data = good_model()
    line = compile_error(tmp_path, capsys, data[:int(len(data) * fraction)])
    assert "ONNX" in line or "node '" in line


def test_good_model_compiles(tmp_path, capsys):
    """The model the truncation cases cut up is fine when whole."""
    path = tmp_path / "good.onnx"
    path.write_bytes(good_model())
    assert main(["compile", str(path), "-o", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "good.c").exists() and capsys.readouterr().err == ""


def test_unused_domain_import_is_fine(tmp_path, capsys):
    """A model may import a domain (at any version) none of its nodes uses."""
    path = tmp_path / "m.onnx"
    path.write_bytes(model_bytes([N("Relu", ["X"], ["Y"])], X4, domain_opsets=[("com.example.future", 1000)]))
    assert main(["compile", str(path), "-o", str(tmp_path / "out")]) == 0 and capsys.readouterr().err == ""


def test_model_too_large_for_target_compiles_with_a_warning_and_run_refuses(tmp_path, capsys):
    """cortex-m0's largest qemu board (MPS2 AN385) has 4 MiB of RAM: a 4.2 MB activation fits no board.
    compile writes the sources with one ``warning:`` line naming the sizes (a real board may have
    external RAM); run, which needs a board, refuses with one ``error:`` line and builds nothing."""
    path = tmp_path / "big.onnx"
    path.write_bytes(model_bytes([N("Relu", ["X"], ["Y"])], {"X": [1, 1100 * 1000]}))
    assert main(["compile", str(path), "-o", str(tmp_path / "out"), "--target", "cortex-m0"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("warning: "), err
    for f in ("bytes of RAM for its arena", "cortex-m0", "mps2-an385", "4194304 bytes of RAM", "fits no qemu board"):
        assert f in err[0], f"{f!r} not in {err[0]!r}"
    assert int(re.search(r"needs (\d+) bytes of RAM", err[0]).group(1)) >= 4_400_000
    assert (tmp_path / "out" / "big.c").exists()
    for cmd in ("run", "bench"):
        assert main([cmd, str(path), "--target", "cortex-m0"]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith("error: model 'big' needs "), err
        assert "mps2-an385" in err[0]


def test_cli_process_exit_code(tmp_path):
    """The same contract through ``python -m tinyfuse`` (the real process boundary)."""
    path = tmp_path / "bad.onnx"
    path.write_bytes(BAD["pad_reflect"][0])
    proc = subprocess.run([sys.executable, "-m", "tinyfuse", "compile", str(path), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: node 'pad0' (Pad, opset 13)")
    assert not (tmp_path / "out").exists()
