"""Model builders shared by the test modules: import them from here, never from another test module."""
from tests.builders.qdq import (Case, binary_case, build_dscnn, concat_case, conv_case, fc_case, good_model,  # noqa: F401
                                model_bytes, model_of, pool_case, rand, reshape_case, residual_block, tflm_oneop,
                                tiny_mlp, unary_case)
