"""--weights-dtype float16 (issue 14): float constants in flash as binary16 bit patterns, converted
at each read by tf_h2f (runtime_c/include/tinyfuse/half.h). Oracles: numpy's binary16 → binary32
conversion for all 65536 patterns; the float32 build of the same model whose constants hold the
binary16-rounded values (outputs equal bit for bit: the conversion is exact); onnxruntime / the
float32 build for closeness; a model whose weights already are binary16 (face_detection_short_range,
float16 DEQUANTIZE folded) is unchanged bit for bit."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from tinyfuse.cli import main
from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.harness import build_host, run_host
from tinyfuse.harness.inputs import random_inputs
from tinyfuse.resources import runtime_dir
from tests.builders.half_weights import compile_rounded_twin
from tests.builders.uint8_models import small_conv_net
from tests.conftest import ort_run, require_programs, shared_or_skip


def test_tf_h2f_is_exact_for_every_binary16_pattern(tmp_path):
    require_programs("gcc")
    src = tmp_path / "h.c"
    src.write_text('#include <stdio.h>\n#include "half.h"\nint main(void) {\n'
                   '  for (unsigned h = 0; h < 65536u; h++) { float f = tf_h2f((uint16_t)h); '
                   'fwrite(&f, sizeof f, 1, stdout); }\n  return 0;\n}\n')
    exe = tmp_path / "h"
    subprocess.run(["gcc", "-O2", "-std=c99", "-Wall", "-Werror", f"-I{runtime_dir() / 'include' / 'tinyfuse'}",
                    str(src), "-o", str(exe)], check=True)
    got = np.frombuffer(subprocess.run([str(exe)], check=True, capture_output=True).stdout, np.float32)
    want = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    nan = np.isnan(want)
    assert got.size == 65536 and np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))   # signed zeros too


def test_float_net_equals_its_rounded_float32_twin(tmp_path, monkeypatch):
    require_programs("gcc")
    model = small_conv_net()
    half = compile_model(model, weights_dtype="float16")
    full = compile_model(model)
    twin = compile_rounded_twin(monkeypatch, model)
    assert half.weights_bytes * 2 == full.weights_bytes == twin.weights_bytes
    assert "tinyfuse_half.h" in half.files and "tf_h2f(" in half.files[f"{half.name}.c"]
    assert "uint16_t" in half.files[f"{half.name}_weights.c"]
    x = np.random.default_rng(1).standard_normal((1, 3, 12, 12)).astype(np.float32)
    (got,) = run_host(build_host(half, tmp_path / "h"), half, [x])
    (want,) = run_host(build_host(twin, tmp_path / "t"), twin, [x])
    assert np.array_equal(got, want)
    (ref,) = ort_run(model, {"X": x})
    assert np.max(np.abs(got - ref)) <= 2e-3 * np.max(np.abs(ref))    # binary16 weights: 11-bit mantissa


def test_binary16_tflite_weights_are_kept_bit_for_bit(tmp_path):
    """face_detection_short_range stores float16 weights: float16 in flash halves the constants and
    gives exactly the float32 build's outputs."""
    require_programs("gcc")
    path = shared_or_skip("models", "real", "face_detection_short_range.tflite")
    half, full = compile_model(path, weights_dtype="float16"), compile_model(path)
    assert half.weights_bytes * 2 == full.weights_bytes
    xs = random_inputs(full.inputs, 0)
    got = run_host(build_host(half, tmp_path / "h"), half, xs)
    want = run_host(build_host(full, tmp_path / "f"), full, xs)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_refused_on_a_core_without_fp16_conversion(tmp_path, capsys):
    with pytest.raises(TinyfuseError, match="cortex-m0 has no FP16 conversion"):
        compile_model(small_conv_net(), target="cortex-m0", weights_dtype="float16")
    path = tmp_path / "m.onnx"
    path.write_bytes(small_conv_net().SerializeToString())
    assert main(["compile", str(path), "--target", "cortex-m3", "--weights-dtype", "float16",
                 "-o", str(tmp_path / "out")]) == 2
    assert "error: --weights-dtype float16: target cortex-m3 has no FP16 conversion" in capsys.readouterr().err
