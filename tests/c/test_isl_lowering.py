"""The poly layer alone: isl-generated loops with a padding domain cut, compiled with gcc and checked
against a hand-computed numpy result."""
import ctypes
import subprocess

import numpy as np

from tinyfuse.poly import Statement, loops_to_c
from tinyfuse.poly.isl_helpers import box, count_points


def test_padded_1d_conv_loops_match_numpy(tmp_path):
    n, k = 9, 3   # y[h] = sum_r x[h + r - 1] * w[r], zero padding 1 on both sides
    out = box(("h",), (n,))
    stmts = [Statement("S_init", ("h",), out, ("h", "0", "0"), lambda h: "acc = 0;"),
             Statement("S_mac", ("h", "r"), f"{out} and 0 <= r < {k} and 0 <= h + r - 1 < {n}", ("h", "1", "r"),
                       lambda h, r: f"acc += x[{h} + {r} - 1] * w[{r}];"),
             Statement("S_out", ("h",), out, ("h", "2", "0"), lambda h: f"y[{h}] = acc;")]
    assert count_points(stmts[1]) == n * k - 2          # the two padded taps are not instances
    macros, loops = loops_to_c(stmts)
    assert "if" not in loops                            # bounds carry the padding
    src = tmp_path / "k.c"
    src.write_text(f"{macros}\nvoid k(const int *x, const int *w, int *y) {{ int acc;\n{loops}}}\n")
    so = tmp_path / "k.so"
    subprocess.run(["gcc", "-O2", "-std=c99", "-Wall", "-Werror", "-shared", "-fPIC", str(src), "-o", str(so)],
                   check=True)
    x = np.arange(1, n + 1, dtype=np.int32)
    w = np.array([2, -1, 3], np.int32)
    y = np.zeros(n, np.int32)
    lib = ctypes.CDLL(str(so))
    ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    lib.k(ptr(x), ptr(w), ptr(y))
    xp = np.pad(x, 1)
    expect = np.array([xp[h:h + 3] @ w for h in range(n)])
    assert np.array_equal(y, expect)
