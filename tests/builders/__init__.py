"""Model builders shared by the test modules: import them from here (``from tests.builders import ...``),
never from another test module.

- qdq: ONNX QDQ twins of the one-op int8 TFLite models (``from tests.builders import qdq as qb``);
- tflm_cases: int8 one-op cases (TFLite model + QDQ twin + TFLM output), ``tflm_oneop``;
- int8_models: QDQ conv chains, onnxruntime static QDQ quantization of float graphs, a conv with
  requantization multipliers above 1 and its float64 real-arithmetic output;
- float_models: the demo DS-CNN, a residual block, a tiny MLP, graphs from nodes, random inputs.
"""
from tests.builders.float_models import (build_dscnn, good_model, model_bytes, model_of, rand,
                                         residual_block, tiny_mlp)
from tests.builders.int8_models import (DOWN_BLOCK, MBV2_BLOCK, MBV2_RESIDUAL, RESNET_BLOCK, multiplier_conv_case,
                                        qdq_chain, quantize_qdq, real_conv_valid, sibling_int8_convs)
from tests.builders.tflm_cases import (Case, binary_case, concat_case, conv_case, fc_case, pool_case, reshape_case,
                                       tflm_oneop, unary_case)

__all__ = ["build_dscnn", "good_model", "model_bytes", "model_of", "rand", "residual_block",
           "tiny_mlp", "DOWN_BLOCK", "MBV2_BLOCK", "MBV2_RESIDUAL", "RESNET_BLOCK", "qdq_chain", "quantize_qdq",
           "sibling_int8_convs", "multiplier_conv_case", "real_conv_valid",
           "Case", "binary_case", "concat_case", "conv_case", "fc_case", "pool_case", "reshape_case", "tflm_oneop",
           "unary_case"]
