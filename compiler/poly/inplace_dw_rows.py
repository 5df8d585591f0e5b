"""isl access model and proof of the row-buffered in-place depthwise kernel
(``lower/depthwise_rows_arm.py``, codegen_templates/depthwise/arm_dsp_rows.c.j2): channel by channel
a ring R of three rows (ring row j mod 3 holds input row j - pt of channel k; columns shifted by pl),
filled once with the zero point (S_fill), primed with rows 0 and 1 (S_prime), then per output row oh
the copy of row oh + 2 (S_copy) and the outputs of that row (S_dw), written over X.

Proof (``tinyfuse.poly.deps``): no write of Y clobbers a later read of X, and every ring cell S_dw
reads holds the copy of the right input row of the same channel, or the border fill.
"""
from __future__ import annotations

from ..ops.conv_geom import ConvGeom
from .deps import Access, Layout, Model, clobbered_reads, flow_mismatch, intended_flow


def dw_rows_model(g: ConvGeom) -> list[Access]:
    RS = g.W + g.pl + g.pr
    x = f"X[j - {g.pt}, w, k] : 0 <= j - {g.pt} < {g.H}"
    ring = f"R[a, w + {g.pl}] : exists q: a = j - 3q and 0 <= a < 3"
    window = ("R[a, b] : exists r, q: 0 <= r < 3 and a = oh + r - 3q and 0 <= a < 3 and "
              "ow <= b < ow + 3")
    return [
        Access("S_fill", ("a", "b"), f"0 <= a < 3 and 0 <= b < {RS}", ("-1", "0", "0", "a", "b"),
               writes=("R[a, b]",)),
        Access("S_prime", ("k", "j", "w"), f"0 <= k < {g.K} and 0 <= j < 2 and 0 <= w < {g.W}",
               ("k", "-1", "0", "j", "w"), reads=(x,), writes=(ring,)),
        Access("S_copy", ("k", "oh", "w"), f"0 <= k < {g.K} and 0 <= oh < {g.OH} and 0 <= w < {g.W}",
               ("k", "oh", "0", "0", "w"),
               reads=(x.replace("j", "(oh + 2)"),), writes=(ring.replace("j", "(oh + 2)"),)),
        Access("S_dw", ("k", "oh", "ow"), f"0 <= k < {g.K} and 0 <= oh < {g.OH} and 0 <= ow < {g.OW}",
               ("k", "oh", "1", "ow", "0"), reads=(window,), writes=("Y[oh, ow, k]",)),
    ]


def prove_dw_rows(g: ConvGeom) -> bool:
    """True when the row-buffered kernel may write its output over its input at the same offset."""
    model = Model(dw_rows_model(g))
    layout = Layout({"X": ((g.H, g.W, g.C), 1, 0), "Y": ((g.OH, g.OW, g.K), 1, 0)})
    if not clobbered_reads(model, layout, ("X",)).is_empty():
        return False
    intended = intended_flow(model, "{ S_prime[k, j, w] -> S_dw[k2, oh, ow] : k2 = k and oh <= j <= oh + 2; "
                                    "S_copy[k, o2, w] -> S_dw[k2, oh, ow] : k2 = k and oh <= o2 + 2 <= oh + 2; "
                                    f"S_fill[a, b] -> S_dw[k, oh, ow] : b < {g.pl} or b >= {g.pl + g.W} }}", same_cell=True)
    return flow_mismatch(model, (("R", 2),), intended).is_empty()


__all__ = ["dw_rows_model", "prove_dw_rows"]
