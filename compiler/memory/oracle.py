"""The arena and cost oracles poly_fuse asks (injected by the pass pipeline, so the pass itself
imports neither the memory planner nor the cost model).

``ArenaOracle(options)`` answers, for a fused main Function:

- ``peak(main)``: the live-byte peak of its best kernel order and in-place choices
  (``schedule.best_schedule`` on ``arena.kernel_graph``), in bytes (``ARENA_ALIGN``-rounded);
- ``hot(main)``: that peak and the ids of the calls whose output is live at a step at the peak
  (only removing such an intermediate tensor can lower the peak);
- ``estimate(plan, members)`` / ``decide(...)``: ``cost.analytical.chain_estimate`` / ``decide`` under
  the options (each stage and member priced as the implementation its strategy chooses, the target's
  roofline);
- ``output_over(arg, scratch)``: the in-place option of a fused chain writing its output over
  parameter ``arg`` (``schedule.InPlace``, rule ``fused_chain``).

In-place proofs are cached in ``options.context.inplace_options`` (one compilation).
"""
from __future__ import annotations

from ..cost.analytical import ChainEstimate, Decision, chain_estimate, chain_kinds, decide
from ..ir import Function
from .arena import kernel_graph
from .io_buffers import caller_ids
from .schedule import InPlace, best_schedule


class ArenaOracle:
    """Peak and cost answers for poly_fuse under one CompileOptions (module doc)."""

    def __init__(self, options):
        self.options = options
        self._cache = options.context.inplace_options

    def peak(self, main: Function) -> int:
        return best_schedule(kernel_graph(main, cache=self._cache, external=caller_ids(main, self.options), knobs=self.options.knobs)[0]).peak

    def hot(self, main: Function) -> tuple[int, set[int]]:
        g, calls = kernel_graph(main, cache=self._cache, external=caller_ids(main, self.options), knobs=self.options.knobs)
        sched = best_schedule(g)
        step_of = {k: i for i, k in enumerate(sched.order)}
        last = {}
        for k, n in enumerate(g.nodes):
            for a in n.args:
                last[a] = max(last.get(a, -1), step_of[k])
        hot = set()
        for k, n in enumerate(g.nodes):
            born, dies = step_of[k], last.get(n.out, step_of[k])
            if any(sched.per_step[i] == sched.peak for i in range(born, dies + 1)):
                hot.add(id(calls[k]))
        return sched.peak, hot

    def estimate(self, plan, members) -> ChainEstimate:
        """The estimate of a chain ``plan`` whose member groups are ``members`` (Functions, stage order)."""
        return chain_estimate(plan, self.options, chain_kinds(members, self.options))

    def decide(self, est: ChainEstimate, peak_before: int, peak_after: int, max_recompute: float,
               max_overhead: float | None = None) -> Decision:
        return decide(est, peak_before, peak_after, self.options.scratch_bytes, max_recompute,
                      max_overhead=max_overhead)


    @staticmethod
    def output_over(arg: int, scratch: int) -> InPlace:
        return InPlace(arg, "fused_chain", scratch=scratch, proof="isl: output over this parameter clobbers no read")


__all__ = ["ArenaOracle"]
