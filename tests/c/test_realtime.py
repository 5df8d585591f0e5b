"""Activation skipping (--skip-zero-activations) on the host (portable kernel), bit-exact with TFLite
Micro on inputs where whole groups of 4 activations sit at the zero point (what a ReLU leaves), and
the generated files of the real-time options: default sources unchanged, _step declared."""
import numpy as np
import pytest

from tests.builders import conv_case, fc_case
from tests.builders.tflm_cases import tflm_oneop
from tests.conftest import compile_and_run


def sparse_input(x: np.ndarray, zp: int, seed: int, fraction: float = 0.5) -> np.ndarray:
    """``x`` with about ``fraction`` of its groups of 4 (along the last axis) set to the zero point,
    and single values too (groups that must not be skipped)."""
    rng = np.random.default_rng(seed)
    y = x.copy().reshape(-1, x.shape[-1])
    for row in y:
        for g in range(x.shape[-1] // 4):
            if rng.random() < fraction:
                row[4 * g:4 * g + 4] = zp
        row[rng.random(row.size) < 0.2] = zp
    return y.reshape(x.shape)


def _skip_case(kind, seed):
    if kind == "pw":
        case = conv_case("conv", seed, (1, 5, 7, 12), 7, (1, 1), padding="VALID", act="RELU")
    else:
        case = fc_case(seed, 2, 36, 9, act="RELU")
    zp = int(case.desc.split("in_q=(")[1].split(",")[1].split(")")[0])   # desc: "in_q=(scale, zp) ..."
    x = sparse_input(case.inputs[0], zp, seed)
    (want,) = tflm_oneop().run(case.tflm, [x])
    return case, x, want


@pytest.mark.parametrize("kind", ["pw", "fc"])
def test_skip_zero_activations_is_exact_on_the_host(kind, tmp_path):
    case, x, want = _skip_case(kind, 3)
    (got,), result = compile_and_run(case.model, [x], tmp_path, realtime={"skip_zero_activations": True})
    assert [k.variant for k in result.kernels] == ["skip_zero"]
    assert "n += v !=" in result.files[f"{result.name}.c"]          # the group test is in the kernel
    np.testing.assert_array_equal(got.reshape(want.shape), want)
