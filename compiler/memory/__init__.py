"""Arena memory planning: assign byte offsets to tensors whose lifetimes do not overlap."""
from .planner import PLANNERS, Buffer, Plan, format_plan, plan_memory

__all__ = ["Buffer", "Plan", "PLANNERS", "plan_memory", "format_plan"]
