"""``run --per-layer --target``: the cortex-m4 build itself (not a host rebuild) is traced under qemu,
every kernel's output coming back through a semihosting file, and compared with the numpy reference
of its fused group and TFLite Micro's value of the same tensor (one qemu run per test).

kws_ref_model.tflite (MLPerf Tiny DS-CNN, int8) equals TFLM on cortex-m4 byte for byte, so every
kernel's trace must be exact; with one kernel's generated C made wrong (its first output element's
low bit flipped, before the build), that kernel, and no earlier one, is the first divergent layer,
one element and 1 LSB off both references."""
from __future__ import annotations

import numpy as np

from tinyfuse.driver import compile_model
from tinyfuse.harness.per_layer_report import per_layer, per_layer_text
from tinyfuse.targets import get_target
from tests.builders.corrupt import corrupt_kernel
from tests.conftest import shared_or_skip
from tests.target.conftest import require_tools

TARGET = "cortex-m4"
# kws_ref_model.tflite, subgraph 0: operators 0-8 (conv / depthwise) write tensors 22-30, AVERAGE_POOL_2D
# (9) tensor 31, RESHAPE (10, a view: no kernel) 32, FULLY_CONNECTED (11) 33, SOFTMAX (12) 34
KWS_TENSORS = [*range(22, 31), 31, 33, 34]


def _trace(tmp_path, corrupt: int | None = None):
    require_tools(TARGET)
    path = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    result = compile_model(path, target=TARGET)
    name = corrupt_kernel(result, corrupt) if corrupt is not None else None
    x = np.random.default_rng(7).integers(-128, 128, result.inputs[0].shape).astype(np.int8)
    return per_layer(path, result, get_target(TARGET), [x], tmp_path), name


def test_cortex_m4_trace_equals_reference_and_tflm(tmp_path):
    s, _ = _trace(tmp_path)
    rows = s["kernels"]
    assert s["build"] == TARGET and s["board"] and s["tflm"] and s["first_divergent"] is None
    assert [r["tflite_tensor"]["index"] for r in rows] == KWS_TENSORS
    assert all(r["ref_exact"] == r["total"] == r["tflm_exact"] and r["ref_max_diff"] == 0 for r in rows), rows
    assert sum(r["total"] for r in rows) == 9 * 25 * 5 * 64 + 64 + 12 + 12


def test_cortex_m4_trace_names_the_corrupted_kernel(tmp_path):
    s, name = _trace(tmp_path, corrupt=5)
    rows = s["kernels"]
    assert s["first_divergent"] == 5 and rows[5]["kernel"] == name
    assert all(r["ref_exact"] == r["total"] == r["tflm_exact"] for r in rows[:5])
    bad = rows[5]
    assert bad["ref_exact"] == bad["tflm_exact"] == bad["total"] - 1
    assert bad["ref_max_diff"] == bad["tflm_max_diff"] == 1
    assert per_layer_text(s)[-1].startswith(f"first divergent layer: #5 {name} (depthwise_conv_2d_5)")


def test_rv32imac_trace_equals_reference_and_tflm(tmp_path):
    """The RISC-V image writes its trace through the same semihosting calls (their 16-byte alignment
    must survive linker relaxation wherever the calls land in the code)."""
    require_tools("rv32imac")
    path = shared_or_skip("models", "tflite", "ad01_int8.tflite")
    result = compile_model(path, target="rv32imac")
    x = np.random.default_rng(8).integers(-128, 128, result.inputs[0].shape).astype(np.int8)
    s = per_layer(path, result, get_target("rv32imac"), [x], tmp_path)
    rows = s["kernels"]
    assert s["board"] and s["first_divergent"] is None and len(rows) == 10
    assert all(r["ref_exact"] == r["total"] == r["tflm_exact"] for r in rows), rows
