"""Issue 19 item 3: .tflite files are read with the pure-Python ``tflite`` schema package; tflite-micro
(a Linux-x86-only nightly) is only the test oracle and must not be needed to compile.

Oracle for the reader: tflite-micro's own flatc object API (``ModelT.InitFromPackedBuf``), an
independent reading of the same bytes, field by field.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.conftest import ROOT, shared_or_skip

TFLITE_MODELS = ["ad01_fp32", "ad01_int8", "kws_ref_model", "kws_ref_model_float32"]


# the fields compiler/frontend/tflite*.py reads: these must exist (fields of schemas newer than the
# ``tflite`` package's, e.g. Tensor.externalBuffer, are compared only where the package has them)
USED = {"buffers", "data", "offset", "size", "operatorCodes", "builtinCode", "deprecatedBuiltinCode",
        "customCode", "version", "subgraphs", "tensors", "inputs", "outputs", "operators", "opcodeIndex",
        "builtinOptions", "type", "shape", "name", "isVariable", "sparsity", "quantization", "scale",
        "zeroPoint", "quantizedDimension", "buffer", "strideH", "strideW", "dilationHFactor",
        "dilationWFactor", "padding", "weightsFormat", "filterHeight", "filterWidth", "alpha", "beta",
        "axis", "keepDims", "fusedActivationFunction"}


def _same(mine, theirs, path: str, missing: set) -> None:
    """Every field tflite-micro's object API has, equal in ``mine`` (recursively)."""
    if theirs is None:
        assert mine is None or (isinstance(mine, np.ndarray) and mine.size == 0), path
    elif hasattr(theirs, "__dict__") and not isinstance(theirs, np.ndarray):
        for field, value in vars(theirs).items():
            if hasattr(mine, field):
                _same(getattr(mine, field), value, f"{path}.{field}", missing)
            else:
                missing.add(field)
    elif isinstance(theirs, list):
        assert isinstance(mine, list) and len(mine) == len(theirs), path
        for k, (a, b) in enumerate(zip(mine, theirs)):
            _same(a, b, f"{path}[{k}]", missing)
    elif isinstance(theirs, np.ndarray):
        assert np.array_equal(np.asarray(mine), theirs), path
    else:
        assert mine == theirs, f"{path}: {mine!r} != {theirs!r}"


@pytest.mark.parametrize("model", TFLITE_MODELS)
def test_reader_equals_tflite_micro_object_api(model):
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as tflm_schema

    from tinyfuse.frontend.tflite.schema import read_model
    data = shared_or_skip("models", "tflite", f"{model}.tflite").read_bytes()
    missing = set()
    _same(read_model(data), tflm_schema.ModelT.InitFromPackedBuf(data, 0), "model", missing)
    assert not missing & USED, missing & USED


def test_builtin_code_stored_only_in_the_new_field():
    """A file that stores CONV_2D (3) only in builtin_code, deprecated_builtin_code left at 0 (the
    ``tflite`` package's accessor would answer 0 = ADD)."""
    import flatbuffers
    import tflite

    from tinyfuse.frontend.tflite.schema import read_model
    b = flatbuffers.Builder(64)
    tflite.OperatorCodeStart(b)
    tflite.OperatorCodeAddBuiltinCode(b, tflite.BuiltinOperator.CONV_2D)
    tflite.OperatorCodeAddVersion(b, 3)
    code = tflite.OperatorCodeEnd(b)
    tflite.ModelStartOperatorCodesVector(b, 1)
    b.PrependUOffsetTRelative(code)
    codes = b.EndVector()
    tflite.ModelStart(b)
    tflite.ModelAddVersion(b, 3)
    tflite.ModelAddOperatorCodes(b, codes)
    b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
    (op_code,) = read_model(bytes(b.Output())).operatorCodes
    assert (op_code.builtinCode, op_code.deprecatedBuiltinCode, op_code.version) == (3, 0, 3)


def test_tflite_compiles_without_tflite_micro():
    """Compile an int8 .tflite in a fresh interpreter where ``import tflite_micro`` fails."""
    path = shared_or_skip("models", "tflite", "ad01_int8.tflite")
    code = textwrap.dedent(f"""
        import sys
        sys.modules["tflite_micro"] = None          # any import of it raises ImportError
        from tinyfuse.driver import compile_model
        r = compile_model({str(path)!r}, target="host")
        assert "tflite_micro" not in [m for m in sys.modules if sys.modules[m] is not None]
        print(len(r.kernels), r.arena_bytes)
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    kernels, arena = map(int, proc.stdout.split())
    assert kernels > 0 and arena > 0
