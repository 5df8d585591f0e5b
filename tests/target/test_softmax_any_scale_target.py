"""Issue 14 on Cortex-M4 (qemu): the transformer block's softmax has output scale 1/255
(onnxruntime's quantizer), so it takes the integer table path instead of double exp().

Measured with tinyfuse bench (cortex-m4, mps2-an386), before → after this path: softmax kernel
3,180,999 → 112,546 instructions, whole inference 4,976,395 → 1,907,942, flash const +4,096 bytes
(two 256-entry int64 tables), stack 292 → 136 bytes, 10 kernels both times. The bounds below leave
room for unrelated kernel changes but fail if exp() comes back."""
import numpy as np

from tinyfuse.driver import compile_model
from tinyfuse.harness.bench import bench_target
from tinyfuse.harness.qemu import build_target, run_target
from tinyfuse.ir.interpreter import run_module
from tests.conftest import shared_or_skip
from tests.target.conftest import require_tools


def test_transformer_softmax_integer_on_cortex_m4(tmp_path):
    require_tools("cortex-m4")
    path = shared_or_skip("models", "onnx", "tiny_transformer_block_op20_qdq.onnx")
    io = np.load(shared_or_skip("models", "onnx", "tiny_transformer_block_op20.io.npz"))
    result = compile_model(path, target="cortex-m4")
    (sm,) = [k for k in result.kernels if k.ops == ["qnn.softmax"]]
    assert "exp(" not in sm.code and "double" not in sm.code and sm.scratch_bytes == 0
    build = build_target(result, "cortex-m4", tmp_path, [io["input"]])
    (got,) = run_target(build)
    np.testing.assert_array_equal(got, run_module(result.module, [io["input"]])[0])
    bench = bench_target(build)
    (k,) = [k for k in bench["kernels"] if k["ops"] == ["qnn.softmax"]]
    assert k["instructions"] < 300_000, k            # 3.18 M with double exp()
    assert bench["instructions"] < 3_000_000, bench["instructions"]   # 4.98 M before
