"""End to end: ONNX → C → gcc (-std=c99 -Wall -Wextra -Werror) → run, against onnxruntime."""
import subprocess

import numpy as np
import pytest

import tinyfuse
from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tests.conftest import assert_close_to, compile_and_run, ort_run, shared_or_skip
from tests.builders import build_dscnn

REAL_FLOAT_MODELS = ["kws_ref_model_float32", "pretrainedResnet", "ad01_fp32", "mobilenetv2_035_96", "resnet10_w16_64"]


@pytest.fixture(scope="module")
def dscnn(tmp_path_factory):
    return build_dscnn(tmp_path_factory.mktemp("demo"))


@pytest.mark.parametrize("disabled", [(), ("fuse_ops",)])
def test_demo_dscnn_matches_onnxruntime(dscnn, tmp_path, disabled):
    x = np.random.default_rng(0).standard_normal((1, 1, 49, 10)).astype(np.float32)
    (y,), result = compile_and_run(dscnn, [x], tmp_path, disabled_passes=disabled)
    assert_close_to(y, ort_run(dscnn, {"input": x})[0])
    # fused: conv1, 4 x (dw, pw), pool, gemm, softmax (the C=1 input's NCHW→NHWC is a view);
    # unfused: 9 x (conv, bias add, relu), pool, matmul, add, softmax
    assert len(result.steps) == (12 if not disabled else 31)


def test_demo_dscnn_arena_holds_io_and_beats_naive(dscnn):
    r = tinyfuse.compile(dscnn)
    activation = 64 * 25 * 5 * 4  # one conv output, float32
    assert r.arena_bytes >= r.plan.lower_bound >= 2 * activation
    assert r.arena_bytes < r.naive_bytes
    starts = {(t.offset, t.offset + t.nbytes) for t in r.inputs + r.outputs}
    assert all(0 <= a < b <= r.arena_bytes for a, b in starts)


@pytest.mark.parametrize("model", REAL_FLOAT_MODELS)
def test_real_float_model_matches_onnxruntime(model, tmp_path):
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    x = np.load(path.with_suffix(".io.npz"))["input"]
    (y,), result = compile_and_run(path, [x], tmp_path)
    import onnxruntime as ort
    name = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).get_inputs()[0].name
    assert_close_to(y, ort_run(path, {name: x})[0])
    assert result.arena_bytes < result.naive_bytes


def test_kws_float_fused_vs_unfused_same_outputs(tmp_path):
    path = shared_or_skip("models", "onnx", "kws_ref_model_float32.onnx")
    x = np.load(path.with_suffix(".io.npz"))["input"]
    (fused,), rf = compile_and_run(path, [x], tmp_path / "f")
    (unfused,), ru = compile_and_run(path, [x], tmp_path / "u", disabled_passes=("fuse_ops",))
    np.testing.assert_allclose(fused, unfused, rtol=1e-5, atol=1e-7)
    assert len(rf.steps) == 12 and len(ru.steps) == 31  # 9 conv + 9 add + 9 relu + pool + matmul + add + softmax


def test_generated_api_invoke_from_user_code(dscnn, tmp_path):
    """A user main calling <name>_invoke with its own arena, as a firmware would."""
    r = tinyfuse.compile(dscnn, name="kws")
    src = r.write(tmp_path / "out")
    assert sorted(r.files) == ["kws.c", "kws.cmake", "kws.h", "kws.mk", "kws_weights.c", "metadata.json"]
    header = r.files["kws.h"]
    for needle in ("KWS_ARENA_SIZE", "KWS_INPUT0_SHAPE { 1, 1, 49, 10 }", "int kws_run(void *arena);",
                   "void *kws_input(void *arena);", "const void *kws_output(const void *arena);",
                   "int kws_invoke(const float *in, float *out, void *arena);", "KWS_MODEL_HASH"):
        assert needle in header
    for banned in ("malloc", "#include <stdio.h>", "#include <stdlib.h>"):
        assert banned not in r.files["kws.c"]
    main = tmp_path / "main.c"
    main.write_text("""
#include <stdio.h>
#include "kws.h"
static unsigned char arena[KWS_ARENA_SIZE] __attribute__((aligned(16)));
int main(void) {
  float in[490], out[12]; int i;
  for (i = 0; i < 490; ++i) in[i] = (float)((i * 37) % 11) / 5.0f - 1.0f;
  if (kws_invoke(in, out, arena) != 0) return 1;
  for (i = 0; i < 12; ++i) printf("%.9g\\n", out[i]);
  return 0;
}
""")
    exe = tmp_path / "app"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{src}", str(main),
                    str(src / "kws.c"), str(src / "kws_weights.c"), "-lm", "-o", str(exe)], check=True)
    got = np.array([float(v) for v in subprocess.run([str(exe)], capture_output=True, text=True,
                                                     check=True).stdout.split()], np.float32)
    x = np.array([((i * 37) % 11) / 5.0 - 1.0 for i in range(490)], np.float32).reshape(1, 1, 49, 10)
    assert_close_to(got.reshape(1, 12), ort_run(dscnn, {"input": x})[0])


def test_outputs_do_not_depend_on_arena_contents(dscnn, tmp_path):
    from tinyfuse.harness import build_host, run_host
    r = tinyfuse.compile(dscnn)
    x = np.random.default_rng(5).standard_normal((1, 1, 49, 10)).astype(np.float32)
    a = run_host(build_host(r, tmp_path / "zero", arena_fill=0), r, [x])[0]
    b = run_host(build_host(r, tmp_path / "a5", arena_fill=0xA5), r, [x])[0]
    assert np.array_equal(a, b)


@pytest.mark.parametrize("model", ["kws_ref_model", "pretrainedResnet"])
def test_real_model_outputs_do_not_depend_on_arena_contents(tmp_path, model):
    """0x00 vs 0xA5 in the arena before the run: same outputs (the sanitizer tests repeat this for every
    real model)."""
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    x = np.load(path.with_suffix(".io.npz"))["input"]
    r = compile_model(path)
    zero = run_host(build_host(r, tmp_path / "zero", arena_fill=0x00), r, [x])[0]
    a5 = run_host(build_host(r, tmp_path / "a5", arena_fill=0xA5), r, [x])[0]
    assert zero.dtype == a5.dtype and np.array_equal(zero, a5)
