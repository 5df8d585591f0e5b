"""Issue 19 item 9: the scale and zero point of an int8 model's input and output in the header and
metadata.json, and the header's ``<name>_quantize_input`` / ``<name>_dequantize_output`` helpers.

Oracles, independent of tinyfuse: the scale and zero point are read from the model file itself (the
ONNX DequantizeLinear/QuantizeLinear initializers at the graph's input and output; the .tflite
tensors' quantization through tflite-micro's schema); the helpers' results are the TFLite reference
arithmetic in numpy (AffineQuantize: round(x / scale) half away from zero, + zero point, saturate
to int8; Dequantize: scale * (q - zero_point)).
"""
from __future__ import annotations

import json
import subprocess

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from tests.conftest import shared_or_skip

VIEWS = ("Transpose", "Reshape", "Squeeze", "Unsqueeze", "Flatten")


def onnx_io_quant(path) -> tuple[tuple[np.float32, int], tuple[np.float32, int]]:
    """(scale, zero_point) of the graph input's DequantizeLinear and the graph output's QuantizeLinear."""
    g = onnx.load(str(path)).graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    by_input = {}
    by_output = {o: n for n in g.node for o in n.output}
    for n in g.node:
        by_input.setdefault(n.input[0], []).append(n)

    def qp(node):
        zp = inits[node.input[2]] if len(node.input) > 2 and node.input[2] else np.zeros((), np.int8)
        return np.float32(inits[node.input[1]]), int(zp)
    name = g.input[0].name
    while True:
        (node,) = by_input[name]
        if node.op_type == "DequantizeLinear":
            inq = qp(node)
            break
        assert node.op_type in VIEWS, node.op_type
        name = node.output[0]
    node = by_output[g.output[0].name]
    while node.op_type in VIEWS:
        node = by_output[node.input[0]]
    assert node.op_type == "QuantizeLinear", node.op_type
    return inq, qp(node)


def tflite_io_quant(path) -> tuple[tuple[np.float32, int], tuple[np.float32, int]]:
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as S
    m = S.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
    sg = m.subgraphs[0]

    def qp(i):
        q = sg.tensors[i].quantization
        return np.float32(q.scale[0]), int(q.zeroPoint[0])
    return qp(sg.inputs[0]), qp(sg.outputs[0])


def tflite_quantize(x: np.ndarray, scale: np.float32, zp: int) -> np.ndarray:
    with np.errstate(over="ignore"):                             # +-3.4e38 / scale: +-inf, saturates
        r = (x.astype(np.float32) / scale).astype(np.float64)    # float division, as TFLM's AffineQuantize
    rounded = np.sign(r) * np.floor(np.abs(r) + 0.5)              # std::round: half away from zero
    return np.clip(rounded + zp, -128, 127).astype(np.int8)


def tflite_dequantize(q: np.ndarray, scale: np.float32, zp: int) -> np.ndarray:
    return (np.float64(scale) * (q.astype(np.int64) - zp)).astype(np.float32)   # TFLM: double product


MAIN_C = r"""
#include <stdio.h>
#include "{name}.h"
static float x[{NAME}_INPUT0_BYTES], y[{NAME}_OUTPUT0_BYTES];
static int8_t q[{NAME}_INPUT0_BYTES], qo[{NAME}_OUTPUT0_BYTES];
int main(int argc, char **argv)
{{
  FILE *f = fopen(argv[1], "rb");
  (void)argc;
  if (!f || fread(x, sizeof x, 1, f) != 1 || fread(qo, sizeof qo, 1, f) != 1) return 3;
  fclose(f);
  {name}_quantize_input(x, q);
  {name}_dequantize_output(qo, y);
  f = fopen(argv[2], "wb");
  if (!f || fwrite(q, sizeof q, 1, f) != 1 || fwrite(y, sizeof y, 1, f) != 1) return 4;
  return fclose(f);
}}
"""


def _inputs(n: int, scale: np.float32, zp: int, rng) -> np.ndarray:
    """Reals across and beyond the int8 range, exact ties k + 0.5 in scale units, and NaN-free edges."""
    span = float(scale) * 300
    x = rng.uniform(-span, span, n).astype(np.float32)
    k = rng.integers(-140, 140, n)
    ties = ((k + 0.5) * np.float32(scale)).astype(np.float32)
    x[::3] = ties[::3]
    x[:4] = [0.0, -0.0, 3.4e38, -3.4e38]
    return x


@pytest.mark.parametrize("model", ["onnx/kws_ref_model.onnx", "onnx/ad01_int8.onnx", "tflite/ad01_int8.tflite"])
def test_int8_io_quantization_header_and_helpers(model, tmp_path):
    from tinyfuse.driver import compile_model
    path = shared_or_skip("models", *model.split("/"))
    (in_s, in_z), (out_s, out_z) = tflite_io_quant(path) if path.suffix == ".tflite" else onnx_io_quant(path)
    result = compile_model(str(path), target="host", name="m")
    out = result.write(tmp_path / "out")

    meta = json.loads((out / "metadata.json").read_text())
    assert (np.float32(meta["inputs"][0]["scale"]), meta["inputs"][0]["zero_point"]) == (in_s, in_z)
    assert (np.float32(meta["outputs"][0]["scale"]), meta["outputs"][0]["zero_point"]) == (out_s, out_z)

    n_in, n_out = result.inputs[0].nbytes, result.outputs[0].nbytes
    rng = np.random.default_rng(7)
    x = _inputs(n_in, in_s, in_z, rng)
    qo = rng.integers(-128, 128, n_out).astype(np.int8)
    (tmp_path / "in.bin").write_bytes(x.tobytes() + qo.tobytes())
    (tmp_path / "main.c").write_text(MAIN_C.format(name="m", NAME="M"))
    exe = tmp_path / "main"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-Wconversion", "-Wcast-align",
                    f"-I{out}", str(tmp_path / "main.c"), "-o", str(exe)], check=True)
    subprocess.run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True)
    got = (tmp_path / "out.bin").read_bytes()
    q = np.frombuffer(got[:n_in], np.int8)
    y = np.frombuffer(got[n_in:], np.float32)
    want_q = tflite_quantize(x, in_s, in_z)
    assert np.array_equal(q, want_q), f"{int(np.sum(q != want_q))} of {n_in} quantized values differ"
    assert np.array_equal(y, tflite_dequantize(qo, out_s, out_z))
    assert {-128, 127} <= set(q.tolist())                       # the saturating inputs reached both ends


def test_float_model_has_no_quantization():
    from tinyfuse.driver import compile_model
    result = compile_model(str(shared_or_skip("models", "onnx", "kws_ref_model_float32.onnx")), name="f")
    meta = json.loads(result.files["metadata.json"])
    assert [(t["scale"], t["zero_point"]) for t in meta["inputs"] + meta["outputs"]] == [(None, None)] * 2
    header = result.files["f.h"]
    assert "_SCALE" not in header and "quantize_input" not in header


def test_per_axis_header_macros_compile(tmp_path):
    from tinyfuse.codegen.emit import TYPE_CODES
    from tinyfuse.codegen.templates import template
    from tinyfuse.passes.io_quant import QParams
    from tinyfuse.driver import TensorInfo
    from tinyfuse.targets import Placement
    t = TensorInfo("x", (1, 3), "int8", 3)
    q = QParams((0.5, 1e-3, 3.0), (-1, 0, 5), 1)
    header = template("model/model.h.j2").render(
        name="m", NAME="M", version="0", model_hash="0", arena_bytes=16, placement=Placement(),
        inputs=[t], outputs=[t], in_q=[q], out_q=[None], ctype=lambda d: "int8_t", states=[],
        io_caller=False, step_api=None, rows_api=None, arena_align="M_ALIGN", type_codes=TYPE_CODES, io_ids=(["X"], ["X"]),
        labels=[], specialized=[])
    assert "#define M_INPUT0_SCALES { 0.5f, 0.00100000005f, 3.0f }" in header
    assert "#define M_INPUT0_ZERO_POINTS { -1, 0, 5 }" in header and "quantize_input" not in header
    (tmp_path / "m.h").write_text(header)
    (tmp_path / "main.c").write_text('#include "m.h"\nstatic const float s[] = M_INPUT0_SCALES;\n'
                                     'static const int z[] = M_INPUT0_ZERO_POINTS;\n'
                                     'int main(void)\n{\n  return (int)(s[2] * 2.0f) - 6 + z[0] + 1'
                                     ' + M_INPUT0_QUANT_AXIS - 1;\n}\n')
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-o", str(tmp_path / "m"),
                    str(tmp_path / "main.c")], check=True)
    assert subprocess.run([str(tmp_path / "m")]).returncode == 0
