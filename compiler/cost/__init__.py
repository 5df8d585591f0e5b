"""Cost estimates that drive fusion and tiling decisions (analytical now; a learned model can replace
``analytical`` behind the same functions)."""
from .analytical import ChainEstimate, Decision, KernelEstimate, chain_estimate, decide, kernel_estimate

__all__ = ["ChainEstimate", "Decision", "KernelEstimate", "chain_estimate", "decide", "kernel_estimate"]
