"""islpy layer: statements with iteration domains and schedules → C loop nests (isl AST generator)."""
from .isl_helpers import Statement, loops_to_c

__all__ = ["Statement", "loops_to_c"]
