"""The sparse kernels under qemu on Cortex-M4: a pruned 3x3 conv (border windows, pixel blocks, an
all-zero output channel), a pruned fully-connected layer and a 2:4 conv with 3 input channels, all in
the SMLAD pair layout of arm_dsp targets (lower/conv/sparse_dsp.py), cross-compiled with -Werror and
equal to TFLM on the same pruned .tflite (tests/builders/sparse_models.py)."""
import numpy as np

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tests.builders import conv_case, fc_case
from tests.builders.sparse_models import pruned_case
from tests.target.conftest import require_tools


def test_pruned_conv_and_fc_on_cortex_m4_equal_tflm(tmp_path):
    require_tools("cortex-m4")
    for i, (case, level) in enumerate(((conv_case("conv", 31, (1, 6, 11, 8), 6, (3, 3), stride=(1, 2)), "75"),
                                       (fc_case(32, 2, 45, 9), "75"),
                                       (conv_case("conv", 33, (1, 5, 7, 3), 5, (3, 3)), "2:4"))):
        model, inputs, want = pruned_case(case, level)
        result = compile_model(model, target="cortex-m4", name="sp", sparse="on")
        assert [s.kernel.variant for s in result.steps] == ["sparse"]
        assert "tf_smlad" in result.steps[0].kernel.code            # the pair layout
        (y,) = run_target(build_target(result, "cortex-m4", tmp_path / str(i), inputs))
        np.testing.assert_array_equal(y.reshape(want.shape), want)
        assert len(np.unique(want)) > 6, "the case saturates: a weak oracle"
