"""lower/half_weights.py on hand-written kernel code: subscripted reads are wrapped in tf_h2f, a
constant used any other way (a pointer) or out of binary16 range stays float32."""
import numpy as np

from tinyfuse.lower.half_weights import HALF_HEADER, half_weights
from tinyfuse.lower.kernel import ConstPool


class _K:
    def __init__(self, code):
        self.code, self.headers = code, []


def test_subscripts_are_wrapped_and_arrays_become_binary16_bits():
    pool = ConstPool("m")
    w = pool.ref(np.float32([0.1, -2.5, 3e-6, 1000.0]))
    b = pool.ref(np.float32([1.0]))
    q = pool.ref(np.int8([1, 2]))
    k = _K(f"acc += x[i] * {w}[c * 4 + {q}[j]]; acc += {b}[0]; /* {w}_x */")
    assert half_weights(pool, [k]) == [w, b]
    assert k.code == (f"acc += x[i] * tf_h2f({w}[c * 4 + {q}[j]]); acc += tf_h2f({b}[0]); /* {w}_x */")
    assert k.headers == [HALF_HEADER]
    arrays = dict(pool.arrays)
    assert arrays[w].dtype == np.uint16 and arrays[q].dtype == np.int8
    assert np.array_equal(arrays[w].view(np.float16), np.float32([0.1, -2.5, 3e-6, 1000.0]).astype(np.float16))
    assert pool.nbytes == 8 + 2 + 2


def test_pointer_uses_and_large_values_stay_float32():
    pool = ConstPool("m")
    p = pool.ref(np.float32([1.0, 2.0]))
    big = pool.ref(np.float32([70000.0]))
    k = _K(f"const float *t = {p}; y = t[1] + {big}[0];")
    assert half_weights(pool, [k]) == []
    assert k.code == f"const float *t = {p}; y = t[1] + {big}[0];" and k.headers == []
    assert all(a.dtype == np.float32 for _, a in pool.arrays)
