"""isl schedule (a UnionMap built from isl objects, not strings) → C loops with our statement bodies.

The same print-user scheme as ``isl_helpers.loops_to_c`` (ISLPY.md §5), for schedules whose time
vectors are computed by isl (line-buffer steps from ``lexmin``, piecewise quasi-affine).
"""
from __future__ import annotations

from typing import Callable

import islpy as isl

from . import isl_helpers


def schedule_to_c(schedule: isl.UnionMap, bodies: dict[str, tuple[tuple[str, ...], Callable[..., str]]],
                  indent: int = 2, slice=None) -> tuple[str, str]:
    """(macros the loops use, C code) for a schedule isl computed; see isl_helpers.schedule_to_c."""
    return isl_helpers.schedule_to_c(schedule.coalesce(), bodies, indent, slice)
