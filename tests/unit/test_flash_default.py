"""Flash of the default builds: same-shaped kernels share one C body, the SIMD kernels keep their
weights int8 (the constants at most 5% over the portable build's), and long unrolls are a tuning knob."""
from __future__ import annotations

import re

import onnx
import pytest

from tests.builders.int8_models import qdq_chain
from tests.conftest import shared_or_skip
from tinyfuse.cost.features import group_signature
from tinyfuse.driver import compile_model
from tinyfuse.tune import TuningRecords


def _kws(target: str):
    return compile_model(shared_or_skip("models", "tflite", "kws_ref_model.tflite"), target=target)


@pytest.mark.parametrize("target", ["host", "cortex-m4"])
def test_same_shaped_kernels_share_one_body(target):
    """DS-CNN's four depthwise and four pointwise layers differ only in their weight arrays: two bodies,
    and every kernel function is a call of one of them with its own constants."""
    result = _kws(target)
    c = result.files["kws_ref_model.c"]
    bodies = re.findall(r"^(?:TF_SIMD_KERNEL )?static void (kws_ref_model_body\d+)\([^;]*\)\n\{", c, re.M)
    assert len(bodies) == 2, bodies
    for k in range(1, 9):
        name = result.steps[k].kernel.name
        call = re.search(rf"static void {name}\([^)]*\)\n\{{\n  (kws_ref_model_body\d+)\(([^;]*)\);\n\}}", c)
        assert call is not None, name
        assert call.group(1) == bodies[(k - 1) % 2]
        consts = re.findall(r"kws_ref_model_c\d+", call.group(2))
        assert consts and all(re.search(rf"\b{n}\b", c) for n in consts)
    # the four calls of a body pass four different weight arrays
    calls = re.findall(r"  (kws_ref_model_body0)\(p0, out, scratch, (kws_ref_model_c\d+)", c)
    assert len({w for _, w in calls}) == 4


def test_simd_weights_stay_int8():
    """The cortex-m4 build's constants (DSP kernels) within 5% of the portable build's (int8 weights,
    int32 bias and per-channel requantize): the depthwise line kernel pairs its int8 weights at run time."""
    host, m4 = _kws("host"), _kws("cortex-m4")
    assert m4.weights_bytes <= 1.05 * host.weights_bytes, (m4.weights_bytes, host.weights_bytes)
    dw = [s.kernel for s in m4.steps if s.kernel.kind == "depthwise.dw_rows_arm_dsp"]
    assert len(dw) == 4


@pytest.fixture(scope="module")
def pointwise128(tmp_path_factory):
    """An int8 128 -> 128 pointwise conv (a reduction of 32 groups of 4 taps) on a 4 x 4 map."""
    model, _ = qdq_chain((1, 4, 4, 128), [dict(cout=128, k=1, s=1, dw=False, relu=True)], seed=3)
    path = tmp_path_factory.mktemp("flash") / "pw128.onnx"
    onnx.save(model, path)
    return path


def _pointwise_kernel(result):
    (k,) = [s.kernel for s in result.steps if s.kernel.kind == "conv2d.arm_dsp"]
    return k


def test_long_unroll_is_a_knob_not_the_default(pointwise128):
    """The default pointwise kernel loops over its 32-group reduction (16 groups a trip); the
    ``unroll`` knob at 32 unrolls it fully, in more code."""
    base = compile_model(pointwise128, target="cortex-m4")
    k = _pointwise_kernel(base)
    assert 32 in k.tunable["unroll"]
    assert re.search(r"for \(int i = 0; i < 2; \+\+i\)", k.code)
    config = {"kernels": {group_signature(s.call.op, "cortex-m4"): {"unroll": 32} for s in base.steps}}
    tuned = compile_model(pointwise128, target="cortex-m4", tuning_records=TuningRecords(config=config))
    kt = _pointwise_kernel(tuned)
    assert kt.knobs == {"unroll": 32}
    assert not re.search(r"for \(int i = 0; i < 2; \+\+i\)", kt.code) and len(kt.code) > len(k.code)
