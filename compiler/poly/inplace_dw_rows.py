"""isl access model and proof of the line-buffered in-place depthwise kernel
(``lower/conv/depthwise_rows.py``, codegen_templates/depthwise/arm_dsp_rows.c.j2): channel by channel
a ring R of three lines (input rows, or columns when ``columns``; ring line j mod 3 holds input line
j - pu of channel k, positions shifted by pv), filled once with the zero point (S_fill), primed with
lines 0 and 1 (S_prime), then per output line u the copy of line u + 2 (S_copy) and the outputs of
that line (S_dw), written over X. Stride 2: ring line j = 2u + r, lines r = 1, 2 copied per output line.

Proof (``tinyfuse.poly.deps``): no write of Y clobbers a later read of X, and every ring cell S_dw
reads holds the copy of the right input line of the same channel, or the border fill.
"""
from __future__ import annotations

from ..ops.conv_geom import ConvGeom
from .deps import Access, Layout, Model, clobbered_reads, flow_mismatch, intended_flow


def dw_rows_model(g: ConvGeom, columns: bool = False) -> list[Access]:
    U, V, OU, OV = (g.W, g.H, g.OW, g.OH) if columns else (g.H, g.W, g.OH, g.OW)
    pu, pv = (g.pl, g.pt) if columns else (g.pt, g.pl)
    RS = V + (g.pt + g.pb if columns else g.pl + g.pr)
    st = g.sh
    x = (f"X[v, j - {pu}, k]" if columns else f"X[j - {pu}, v, k]") + f" : 0 <= j - {pu} < {U}"
    ring = f"R[a, v + {pv}] : exists q: a = j - 3q and 0 <= a < 3"
    window = f"R[a, b] : exists r, q: 0 <= r < 3 and a = {st}u + r - 3q and 0 <= a < 3 and {st}ov <= b < {st}ov + 3"
    y = "Y[ov, u, k]" if columns else "Y[u, ov, k]"
    return [
        Access("S_fill", ("a", "b"), f"0 <= a < 3 and 0 <= b < {RS}", ("-1", "0", "0", "a", "b"),
               writes=("R[a, b]",)),
        Access("S_prime", ("k", "j", "v"), f"0 <= k < {g.K} and 0 <= j < {3 - st} and 0 <= v < {V}",
               ("k", "-1", "0", "j", "v"), reads=(x,), writes=(ring,)),
        Access("S_copy", ("k", "u", "r", "v"), f"0 <= k < {g.K} and 0 <= u < {OU} and {3 - st} <= r < 3 and 0 <= v < {V}",
               ("k", "u", "0", "r", "v"),
               reads=(x.replace("j", f"({st}u + r)"),), writes=(ring.replace("j", f"({st}u + r)"),)),
        Access("S_dw", ("k", "u", "ov"), f"0 <= k < {g.K} and 0 <= u < {OU} and 0 <= ov < {OV}",
               ("k", "u", "1", "ov", "0"), reads=(window,), writes=(y,)),
    ]


def prove_dw_rows(g: ConvGeom, columns: bool = False) -> bool:
    """True when the line-buffered kernel (lines = rows, or columns) may write its output over its
    input at the same offset."""
    model = Model(dw_rows_model(g, columns))
    layout = Layout({"X": ((g.H, g.W, g.C), 1, 0), "Y": ((g.OH, g.OW, g.K), 1, 0)})
    if not clobbered_reads(model, layout, ("X",)).is_empty():
        return False
    pv, V = (g.pt, g.H) if columns else (g.pl, g.W)
    st = g.sh
    intended = intended_flow(model, f"{{ S_prime[k, j, v] -> S_dw[k2, u, ov] : k2 = k and {st}u <= j <= {st}u + 2; "
                                    f"S_copy[k, o2, r, v] -> S_dw[k2, u, ov] : k2 = k and {st}u <= {st}o2 + r <= {st}u + 2; "
                                    f"S_fill[a, b] -> S_dw[k, u, ov] : b < {pv} or b >= {pv + V} }}", same_cell=True)
    return flow_mismatch(model, (("R", 2),), intended).is_empty()


__all__ = ["dw_rows_model", "prove_dw_rows"]
