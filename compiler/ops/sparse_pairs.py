"""The SMLAD pair layout of sparse int8 weights (lower/conv/sparse_dsp.py, the ``sparse`` variant on arm_dsp
targets), shared by the kernel and the cost model (passes/sparse_weights.py) so both count the same pairs.

The reduction axis (length R, zero-padded to R4, a multiple of 4) is cut into aligned quads of 4
taps. Per output channel and quad with nonzero weights at positions S ⊆ {0, 1, 2, 3}:

- |S| = 2 with one in each half ({0,2}, {0,3}, {1,2}, {1,3}): one *cross* pair (a, b), the two
  nonzeros; so a 2:4 structured kernel keeps exactly one SMLAD (two MACs) per quad: half the MACs;
- otherwise each aligned half-pair (0,1) and (2,3) with a nonzero weight is kept as a pair (a pair
  with one nonzero runs as an SMLAD with a zero half); pairs of two zeros are dropped.

The input column of one output pixel is R4 int16 values (x − zp, 0 at a padded tap) read as R4/2
int32 words (the aligned pairs, little-endian: word i = (x[2i], x[2i+1])) followed by one word per
distinct cross pair any channel uses (``cross``: its two element indices), built once per pixel and
shared by every output channel. When a layer uses more than half of the possible cross words the
column holds all four of every quad (``full_cross``, in FULL_CROSS order: built from the quad's two
aligned words with two ALU operations each instead of two int16 loads). A kept pair is (word index, weight word (w_a | w_b << 16)).
"""
from __future__ import annotations

import numpy as np

QUAD = 4
FULL_CROSS = ((0, 2), (1, 3), (0, 3), (1, 2))   # the cross words of a quad in the full layout


def pair_cover(w2d: np.ndarray) -> dict:
    """The pair layout of int8 weights ``w2d`` [K, R] (module doc): ``ptr`` [K+1] (int64: channel k's
    pairs are [ptr[k], ptr[k+1])), ``word`` (word index per pair in the pixel column), ``wval`` (int32
    packed weight pair), ``cross`` [X, 2] (element indices of the extra words), ``R4``, ``words``
    (int32 words per pixel column: R4/2 + X), ``pairs`` (kept pairs, all channels), ``full_cross``."""
    K, R = w2d.shape
    R4 = -(-R // QUAD) * QUAD
    w = np.zeros((K, R4), np.int16)
    w[:, :R] = w2d
    cross: dict[tuple[int, int], int] = {}
    ptr, word, wval = [0], [], []
    for k in range(K):
        for q in range(0, R4, QUAD):
            s = np.flatnonzero(w[k, q:q + QUAD])
            if s.size == 2 and s[0] < 2 <= s[1]:
                key = (q + int(s[0]), q + int(s[1]))
                word.append(R4 // 2 + cross.setdefault(key, len(cross)))
                wval.append((int(w[k, key[0]]), int(w[k, key[1]])))
                continue
            for h in (0, 2):
                if w[k, q + h] or w[k, q + h + 1]:
                    word.append((q + h) // 2)
                    wval.append((int(w[k, q + h]), int(w[k, q + h + 1])))
        ptr.append(len(word))
    full = len(cross) > R4 // 2
    if full:         # more than half of the possible cross words: all four per quad, built from two words
        where = {(q + a, q + b): q + t for q in range(0, R4, QUAD) for t, (a, b) in enumerate(FULL_CROSS)}
        order = sorted(cross, key=cross.get)
        word = [wd if wd < R4 // 2 else R4 // 2 + where[order[wd - R4 // 2]] for wd in word]
        cross = {key: where[key] for key in sorted(where, key=where.get)}
    packed = np.array(wval or [(0, 0)], np.int16).reshape(-1, 2).view(np.int32).reshape(-1)
    return {"ptr": np.array(ptr, np.int64), "word": np.array(word or [0], np.int64), "wval": packed,
            "cross": np.array(sorted(cross, key=cross.get) or [(0, 0)], np.int64).reshape(-1, 2)[:len(cross) or 1],
            "R4": R4, "words": R4 // 2 + len(cross), "pairs": len(word), "ncross": len(cross),
            "full_cross": full}


__all__ = ["FULL_CROSS", "QUAD", "pair_cover"]
