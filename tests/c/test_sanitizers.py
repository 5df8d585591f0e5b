"""Generated C under sanitizers and strict warnings, on every real model of ../shared/models/onnx (float
and int8) and the demo model. Besides the plain build (gcc, STRICT_CFLAGS, arena filled with 0x00),
checked against the oracle (onnxruntime for float models, the numpy reference for int8 ones), each
model is built and run once per configuration:

    gcc_asan_ubsan_guard   gcc -fsanitize=address,undefined, 256-byte guard regions around the arena
                           (poisoned for ASan and checked for the pattern after the run)
    gcc_wconversion        gcc   -Wall -Wextra -Werror -Wconversion
    clang_wconversion      clang -Wall -Wextra -Werror -Wconversion

with the arena filled with 0xA5 instead of 0x00. Every configuration must give outputs bit-identical to
the plain build, which also shows that outputs do not depend on the arena's initial contents.
A missing clang skips its configuration locally and fails in CI (the Makefile's setup installs it).
"""
from __future__ import annotations

import functools
import warnings
from pathlib import Path

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.harness import build_host, run_host
from tinyfuse.ir.interpreter import run_module
from tests.builders.sanit_families import CONFIGS
from tests.conftest import assert_close_to, ort_run, require_programs, shared_or_skip

FLOAT_MODELS = ["kws_ref_model_float32", "pretrainedResnet", "ad01_fp32", "mobilenetv2_035_96", "resnet10_w16_64",
                "tiny_transformer_block_op20"]
INT8_MODELS = ["kws_ref_model", "pretrainedResnet_quant", "ad01_int8", "mobilenetv2_035_96_qdq",
               "resnet10_w16_64_qdq", "mobilenetv2_035_96_qop", "resnet10_w16_64_qop",
               "tiny_transformer_block_op20_qdq", "tiny_transformer_block_op20_qop"]
MODELS = ["demo_dscnn"] + FLOAT_MODELS + INT8_MODELS



def model_and_input(model: str, tmp: Path):
    if model == "demo_dscnn":
        from tests.builders import build_dscnn
        return build_dscnn(tmp), np.random.default_rng(3).standard_normal((1, 1, 49, 10)).astype(np.float32)
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    base = model.rsplit("_", 1)[0] if model.endswith(("_qdq", "_qop")) else model
    return path, np.load(path.parent / f"{base}.io.npz")["input"]


@functools.lru_cache(maxsize=None)
def plain(model: str, tmp: str):
    """Compile once, build with gcc (arena 0x00), run, check against the oracle."""
    path, x = model_and_input(model, Path(tmp))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = compile_model(path)
    except TinyfuseError as e:      # every model listed compiles: an unsupported op is a failure, not a skip
        pytest.fail(f"{model}: {e}")
    (y,) = run_host(build_host(result, Path(tmp) / "plain"), result, [x])
    if model in INT8_MODELS:
        assert np.array_equal(y, run_module(result.module, [x])[0]), "C differs from the numpy reference"
    else:
        import onnx
        name = next(i.name for i in onnx.load(str(path), load_external_data=False).graph.input)
        assert_close_to(y, ort_run(path, {name: x})[0])
    return result, x, y


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("sanitize")


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("model", MODELS)
def test_model_clean_under(model, config, workdir, tmp_path):
    opts = CONFIGS[config]
    require_programs(opts["cc"])                          # make setup installs clang for CI
    result, x, want = plain(model, str(workdir / model))
    exe = build_host(result, tmp_path, **opts)          # -Werror: any warning fails the build
    (got,) = run_host(exe, result, [x])                  # a sanitizer report or a guard hit fails the run
    assert got.dtype == want.dtype and np.array_equal(got, want), \
        f"{model} under {config}: {int(np.sum(got != want))} outputs differ from the plain gcc build"


def test_guard_catches_a_write_past_the_arena(tmp_path):
    """The guard check itself: a model whose run writes one byte past the arena exits with 3."""
    from tests.builders import good_model
    import onnx
    result = compile_model(onnx.load_from_string(good_model()), name="g")
    run = result.files["g.c"]
    marker = "  return 0;\n}"
    assert marker in run
    result.files["g.c"] = run.replace(marker, "  ((uint8_t *)arena)[G_ARENA_SIZE + 7] = 1;\n" + marker, 1)
    exe = build_host(result, tmp_path, guard=64)
    with pytest.raises(TinyfuseError, match="exited with 3.*guard overwritten: byte 7 after the arena"):
        run_host(exe, result, [np.zeros((1, 3, 8, 8), np.float32)])


def test_asan_catches_a_read_before_the_arena(tmp_path):
    from tests.builders import good_model
    import onnx
    result = compile_model(onnx.load_from_string(good_model()), name="g")
    marker = "  return 0;\n}"
    result.files["g.c"] = result.files["g.c"].replace(
        marker, "  if (((volatile uint8_t *)arena)[-3] == 42) return 1;\n" + marker, 1)
    exe = build_host(result, tmp_path, guard=64, sanitize=True)
    with pytest.raises(TinyfuseError, match="AddressSanitizer"):
        run_host(exe, result, [np.zeros((1, 3, 8, 8), np.float32)])
