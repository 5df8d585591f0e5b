"""The final pooling stage of a poly-fused chain (``lower/conv/chain.py``): an int8 pool over the whole
image (``ops.conv_geom.global_pool_group``) that consumes its producer's rows as they are produced.

Its int32 accumulators ``pacc[K]`` live in the kernel scratch after the line buffers
(``ChainPlan.acc_offset``). Three statements over the stage's pixels (one per input pixel, the
schedule of ``linebuf.stage_schedule``): at the first pixel every accumulator starts (0, or -128 for
max), at every pixel each channel adds its input (max: keeps the larger), after the last pixel each
channel is rounded as TFLM's int8 AVERAGE_POOL_2D does (``tf_avg_round``: sum / count rounded half
away from zero, count = H * W real taps) and goes through the group's epilogue to ``out[k]``. The sum
of int8 values over at most 2^24 pixels cannot overflow int32, so the order of the additions changes
no result.
"""
from __future__ import annotations

import islpy as isl

from ...poly.linebuf import ChainPlan, statement_schedule


def pool_statements(plan: ChainPlan, i: int, src_ring, epi, wcet: bool = False) -> tuple[list, dict, list[str]]:
    """(schedules, bodies, declarations) of pooling stage ``i`` (``plan.stages[i].pool`` "avg" or
    "max"); ``src_ring(a, b, k, j)``: the C element of its producer's ring; ``epi``: the pool group's
    epilogue (a ``chain._ChainEpilogue``)."""
    st = plan.stages[i]
    g, kind = st.geo, st.pool
    count = g.OH * g.OW
    pixels = plan.pixels[i]
    name = pixels.get_tuple_name()
    first = pixels.intersect(isl.Set(f"{{ {name}[j, a, b] : a = 0 and b = 0 }}"))
    last = pixels.intersect(isl.Set(f"{{ {name}[j, a, b] : a = {g.OH - 1} and b = {g.OW - 1} }}"))
    start = "0" if kind == "avg" else "-128"
    rnd = "tf_avg_round_ct" if wcet else "tf_avg_round"

    def init(**c):
        return f"pacc[{c['k']}] = {start};"

    def accumulate(**c):
        x = f"(int32_t){src_ring(c['a'], c['b'], c['k'], c['j'])}"
        if kind == "avg":
            return f"pacc[{c['k']}] += {x};"
        return f"{{ const int32_t x = {x}; if (x > pacc[{c['k']}]) pacc[{c['k']}] = x; }}"

    def out(**c):
        k = c["k"]
        value = f"{rnd}(pacc[{k}], {count})" if kind == "avg" else f"pacc[{k}]"
        lines, res = epi.code(["0", "0", "0", k], acc=f"(int8_t){value}" if epi.ops else value)
        body = "\n".join(lines + [f"out[{k}] = (int8_t)({res});"])
        return "{\n" + body + "\n}"

    scheds, bodies = [], {}
    for tag, body, phase, sel in (("pinit", init, "0", first), ("pacc", accumulate, "1", pixels),
                                  ("pout", out, "2", last)):
        sname = f"S{i}_{tag}"
        scheds.append(statement_schedule(plan, i, sname, ("k",), f"k : 0 <= k < {g.K}",
                                         (phase, "k", "0", "0", "0", "0"), sel))
        bodies[sname] = (("j", "a", "b", "k"), body)
    decls = [f"int32_t *pacc = (int32_t *)(void *)((int8_t *)scratch + {plan.acc_offset});"]
    return scheds, bodies, decls


__all__ = ["pool_statements"]
