"""The generated C API: every entry point returns a status, and a NULL or misaligned arena, state or
caller-owned I/O buffer is a status (<NAME>_ERR_NULL, _ERR_ARENA_ALIGN, _ERR_STATE_ALIGN,
_ERR_IO_ALIGN) instead of a fault; one form <name>_run_frame(arena, state) for stateless and stateful
models; inputs and outputs addressable by name macros, element types as <NAME>_TYPE_* macros with
TFLite's TensorType numbers (the ``tflite`` schema package is the oracle). Built with gcc and clang,
-std=c99 -Wall -Wextra -Werror -pedantic."""
from __future__ import annotations

import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tinyfuse.driver import compile_model
from tests.builders.c_api import status_main
from tests.builders.io_models import two_io_model
from tests.conftest import require_programs, shared_or_skip

PEDANTIC = ["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic"]


def _build_and_run(result, main_c: str, tmp_path, cc: str) -> subprocess.CompletedProcess:
    src = result.write(tmp_path / "src")
    main = tmp_path / "main.c"
    main.write_text(main_c)
    exe = tmp_path / f"app_{cc}"
    proc = subprocess.run([cc, *PEDANTIC, f"-I{src}", str(main), *(str(src / f) for f in sorted(result.files)
                                                                     if f.endswith(".c")), "-lm", "-o", str(exe)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[:3000]
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)


def _models():
    return {"kws": (shared_or_skip("models", "tflite", "kws_ref_model.tflite"), {}),
            "nabu": (shared_or_skip("models", "real", "okay_nabu.tflite"), {}),
            "two_io": (two_io_model(), {}),
            "two_io_caller": (two_io_model(), {"io_buffers": "caller"}),
            "ad01_steps": (shared_or_skip("models", "tflite", "ad01_fp32.tflite"),
                           {"realtime": {"max_step_instructions": 20000}})}


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("case", ["kws", "nabu", "two_io", "two_io_caller", "ad01_steps"])
def test_null_and_misaligned_buffers_return_a_status(tmp_path, cc, case):
    """Stateless (arena form, one and two I/O), stateful (okay_nabu: reset, run, run_frame with a NULL
    or misaligned state), caller-owned I/O and step fission: every bad call returns its status, the
    good ones <NAME>_OK, and no call faults (the host main exits with the number of wrong statuses)."""
    require_programs(cc)
    model, options = _models()[case]
    result = compile_model(model, name=case, **options)
    proc = _build_and_run(result, status_main(result), tmp_path, cc)
    assert proc.returncode == 0 and "check" not in proc.stdout, (proc.returncode, proc.stdout, proc.stderr)


def _collision_model() -> onnx.ModelProto:
    """Inputs "x:0", "x_0", "size" and outputs "y", "Y": names whose C identifiers meet."""
    nodes = [helper.make_node("Add", ["x:0", "x_0"], ["y"]), helper.make_node("Relu", ["size"], ["Y"])]
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in
          (("x:0", [1, 4]), ("x_0", [1, 4]), ("size", [2, 3]), ("y", [1, 4]), ("Y", [2, 3]))]
    graph = helper.make_graph(nodes, "names", io[:3], io[3:])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_name_macros_are_unique_c_identifiers(tmp_path):
    """Each tensor's macros by name (index, bytes, shape, rank, type) and the per-index type macro; names
    that collide take their index as suffix, and "size" does not redefine <NAME>_INPUT_SIZE (a
    redefinition is an error under -Werror)."""
    require_programs("gcc")
    import tflite
    result = compile_model(_collision_model(), name="names")
    expected = {"INPUT_X_0": (0, [1, 4]), "INPUT_X_0_1": (1, [1, 4]), "INPUT_SIZE_2": (2, [2, 3]),
                "OUTPUT_Y": (0, [1, 4]), "OUTPUT_Y_1": (1, [2, 3])}
    checks = [("NAMES_INPUT_SIZE", "16")]         # bytes of input 0, as before
    for macro, (index, shape) in expected.items():
        checks += [(f"NAMES_{macro}", str(index)), (f"NAMES_{macro}_SIZE", str(4 * int(np.prod(shape)))),
                   (f"NAMES_{macro}_RANK", str(len(shape))), (f"NAMES_{macro}_TYPE", str(tflite.TensorType.FLOAT32))]
        checks += [(f"((const int[]){{ 0, {d} }})[1]", f"((const int[])NAMES_{macro}_SHAPE)[{k}]")
                   for k, d in enumerate(shape)]
    checks += [("NAMES_INPUT0_TYPE", str(tflite.TensorType.FLOAT32)), ("NAMES_OUTPUT1_TYPE", "NAMES_TYPE_FLOAT32")]
    proc = _build_and_run(result, status_main(result, checks), tmp_path, "gcc")
    assert proc.returncode == 0 and "check" not in proc.stdout, (proc.returncode, proc.stdout, proc.stderr)


@pytest.mark.parametrize("dtype", ["INT8", "UINT8", "INT16", "INT32", "INT64", "FLOAT32", "BOOL"])
def test_type_macros_are_tflite_tensor_types(dtype):
    """<NAME>_TYPE_<DTYPE> equals the TFLite schema's TensorType number (an independent table)."""
    import tflite
    header = compile_model(two_io_model(), name="m").files["m.h"]
    assert f"#define M_TYPE_{dtype} {getattr(tflite.TensorType, dtype)}\n" in header


def test_int8_model_types_by_index_and_name():
    import tflite
    header = compile_model(shared_or_skip("models", "tflite", "kws_ref_model.tflite"), name="kws").files["kws.h"]
    assert "#define KWS_INPUT0_TYPE KWS_TYPE_INT8\n" in header
    assert f"#define KWS_TYPE_INT8 {tflite.TensorType.INT8}\n" in header
    assert "#define KWS_INPUT_INPUT_1 0 " in header and "#define KWS_INPUT_INPUT_1_SHAPE { 1, 49, 10, 1 }\n" in header
    assert "#define KWS_OUTPUT_IDENTITY_SIZE 12\n" in header and "#define KWS_STATE_SIZE 0 " in header


def test_arena_attribute_keeps_the_checked_alignment_under_a_smaller_align():
    """--align 8 aligns the weights to 8, but <NAME>_ARENA_ATTR still gives the 16 bytes _run checks."""
    result = compile_model(two_io_model(), name="m", align=8)
    assert "#define M_ALIGN 8 " in result.files["m.h"]
    assert "aligned(16)))" in result.files["m.h"] and "aligned(M_ALIGN)" not in result.files["m.h"]
    assert "aligned(8)" in result.files["m_weights.c"]
