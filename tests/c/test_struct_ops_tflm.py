"""The TFLite reductions, indexing, movement and shape ops (frontend/tflite/reduce.py, movement.py,
fold.py) against TensorFlow Lite Micro: fixed seeds of the TFLM twin fuzzer's draws
(tests/fuzz/twin_draw_struct*.py: int8, float32, int32 / bool where TFLM's kernel takes them), each a
one-op .tflite that TFLM runs and tinyfuse compiles to C (gcc, portable kernels). Every compared
output is byte-exact with TFLM (float ops that round: within the draw's error bound); the draws where
TFLM itself refuses a model do not count, and most of an op's draws must be compared."""
from __future__ import annotations

import pytest

from tests.conftest import require_programs
from tests.fuzz.tflm_twin import STRUCT, campaign

SEEDS = 6          # per op: the draw rotates its dtype, shapes and options with the seed


@pytest.mark.parametrize("op", STRUCT)
def test_struct_op_matches_tflm(op):
    require_programs("gcc")
    r = campaign(list(range(SEEDS)), ops=[op], progress=False)
    assert not r["failures"], "\n".join(f"seed {f['seed']}: {f['detail'][:300]} {f['params']}" for f in r["failures"])
    row = r["table"][op]
    assert row["exact"] + row["tflm wraps"] >= SEEDS - 1, f"{op}: {row} {r['reasons']}"
