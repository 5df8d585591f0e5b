"""check_overflow proves per int8 kernel that the int32 accumulator stays below 2^31
(|bias| + R x sum|w| with R = max|x - zp_in| <= 255, times the requantize left shift), and warns
naming the node when it cannot. The models here have int8 inputs with zero point 0: R = 128."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.passes.check_overflow import INT32_LIMIT, OverflowWarning, accumulator_bounds
from tests.builders import qdq as qb
from tests.conftest import shared_or_skip

K, N = 64, 4
R = 128            # max |x - 0| for int8 x


def fc(bias: int, out_scale: float = 1.0):
    w = np.full((N, K), 127, np.int8)      # the worst weights: every tap at full scale
    return qb.fully_connected((1, K), w, np.full(N, bias, np.int32), (1.0, 0), 1.0, (out_scale, 0))


def test_safe_kernel_is_proven_with_the_exact_bound():
    with warnings.catch_warnings():
        warnings.simplefilter("error", OverflowWarning)
        result = compile_model(fc(bias=1000, out_scale=8192.0))        # M = 1/8192: no left shift
    (b,) = accumulator_bounds(result.module)
    assert b.op == "qnn.matmul" and b.safe and b.bound == K * 127 * R + 1000


def test_bias_near_int32_limit_warns():
    bias = INT32_LIMIT - K * 127 * R // 2          # |bias| + R·Σ|w| > 2^31 - 1
    with pytest.warns(OverflowWarning, match=r"node 'matmul_\d+' \(qnn.matmul\).*not proven safe"):
        result = compile_model(fc(bias=bias, out_scale=2.0**20))
    (b,) = accumulator_bounds(result.module)
    assert not b.safe and b.bound == K * 127 * R + bias


def test_requantize_left_shift_counts():
    """A conv whose taps alone fit (576 x 127 x 128 = 9.4e6) but whose requantize multiplier is 200:
    TFLM's arithmetic shifts the accumulator left by 8 first, 2.4e9 > 2^31."""
    c = 64
    w = np.full((2, 3, 3, c), 127, np.int8)
    model = qb.conv2d((1, 4, 4, c), w, np.zeros(2, np.int32), (1.0, 0), 1.0, (1 / 200, 0))
    with pytest.warns(OverflowWarning, match=r"\(qnn.conv2d\)"):
        result = compile_model(model)
    (b,) = accumulator_bounds(result.module)
    assert b.bound == 9 * c * 127 * R * 2**8


@pytest.mark.parametrize("model", ["kws_ref_model", "pretrainedResnet_quant", "ad01_int8",
                                   "mobilenetv2_035_96_qdq", "resnet10_w16_64_qdq"])
def test_real_int8_models_are_proven_safe(model):
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("error", OverflowWarning)
        result = compile_model(path)
    bounds = accumulator_bounds(result.module)
    assert bounds and all(b.safe for b in bounds)
    assert max(b.bound for b in bounds) < INT32_LIMIT // 4     # a wide margin on real models


def test_int64_accumulator_of_a_16x8_layer_is_not_an_int32_bound(tmp_path):
    """A 16x8 FULLY_CONNECTED sums in int64 (TFLM's int16 kernel): no OverflowWarning although
    32768 · Σ|w| passes 2^31."""
    from tests.builders.tflm_twin_models import Net
    net = Net()
    x = net.input((1, 600), (1e-3, 0), "int16")
    w = net.weights(np.full((4, 600), 127, np.int8), 1e-3, 0)
    b = net.bias(np.zeros(4, np.int64), 1e-3, np.full(4, 1e-3, np.float32))
    y = net.op("FULLY_CONNECTED", [x, w, b], net.act((1, 4), (0.5, 0), dtype="int16"), "FullyConnectedOptions")
    model = tmp_path / "fc16.tflite"
    model.write_bytes(net.build([y]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", OverflowWarning)
        result = compile_model(str(model), target="cortex-m4")
    assert {k.kind for k in result.kernels} & {"matmul.ref"}, [k.kind for k in result.kernels]
