"""The KWS model (DS-CNN) as one long poly-fused chain with its DSP stages (conv rows, depthwise quads,
SMLAD pointwise blocks) and the pooling stage under qemu on Cortex-M4: byte-identical with TensorFlow
Lite Micro. The cost model's +10% instruction bound on long chains is lifted here
(``poly_fuse.MAX_LONG_OVERHEAD``) so the chain is built whatever the estimate says of it on this core."""
import importlib

import numpy as np

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tinyfuse.targets import get_target
from tests.conftest import shared_or_skip, tflm_run
from tests.target.conftest import require_tools


def test_kws_chain_dsp_on_cortex_m4(tmp_path, monkeypatch):
    require_tools("cortex-m4")
    path = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    monkeypatch.setattr(importlib.import_module("tinyfuse.passes.poly_fuse"), "MAX_LONG_OVERHEAD", 10.0)
    result = compile_model(path, target="cortex-m4")
    chains = [s.kernel for s in result.steps if s.kernel.variant == "fused_chain"]
    assert len(chains) == 1 and len(chains[0].stage_kinds) == 10, [s.kernel.kind for s in result.steps]
    assert {"chain.conv_arm_dsp", "chain.dw_arm_dsp", "chain.pool"} <= set(chains[0].stage_kinds)
    rng = np.random.default_rng(11)
    for i in range(2):
        x = rng.integers(-128, 128, (1, 49, 10, 1)).astype(np.int8)
        (got,) = run_target(build_target(result, get_target("cortex-m4"), tmp_path / str(i), [x]))
        np.testing.assert_array_equal(got, tflm_run(path, [x])[0])
