"""The lowering knobs ``tinyfuse tune`` searches (lower/group_knobs.py: int16 pre-widened weights,
channels per block, unroll limits) keep every output byte-identical to TFLite Micro on the int8
MLPerf Tiny models (oracle: the TFLM outputs in ../shared, not our own build), on the arm_dsp cores."""
import numpy as np
import pytest

from tinyfuse.cost.features import group_signature
from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tinyfuse.tune import TuningRecords
from tests.conftest import shared_or_skip
from tests.target.conftest import require_tools

CASES = [("kws_ref_model", "cortex-m4", {"weights": "int16"}),
         ("kws_ref_model", "cortex-m7", {"weights": "int16", "channels": 2}),
         ("pretrainedResnet_quant", "cortex-m4", {"weights": "int16"}),
         ("pretrainedResnet_quant", "cortex-m33", {"weights": "int16", "channels": 4, "unroll": 4}),
         ("pretrainedResnet_quant", "cortex-m4", {"unroll": 4}),     # 36-group reductions: a loop of 6s
         ("ad01_int8", "cortex-m4", {"weights": "int16", "channels": 4})]


@pytest.mark.parametrize("model,target,knobs", CASES)
def test_knobs_keep_tflm_outputs(model, target, knobs, tmp_path):
    require_tools(target)
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    io = np.load(path.with_suffix(".io.npz"))
    base = compile_model(path, target=target)
    config = {"kernels": {group_signature(s.call.op, target): dict(knobs) for s in base.steps}}
    result = compile_model(path, target=target, tuning_records=TuningRecords(config=config))
    tuned = [s.kernel for s in result.steps if s.kernel.knobs]
    assert tuned and all(k.knobs == {n: v for n, v in knobs.items() if n in k.tunable} for k in tuned)
    if knobs.get("weights") == "int16":               # the pre-widened copies replace the int8 ones
        assert "int16_t" in result.files[f"{result.name}_weights.c"]
        assert result.weights_bytes > base.weights_bytes
    (y,) = run_target(build_target(result, target, tmp_path, [io["input"]]))
    assert np.array_equal(y, io["tflm"]), f"{int(np.sum(y != io['tflm']))} outputs differ from TFLM"
