"""All islpy calls of tinyfuse live here (ISLPY.md §1, §5).

A kernel is a list of :class:`Statement`: a named iteration domain written as an isl set string with
constant bounds, e.g. ``{ S_mac[n,h,w,g,m,r,s,c] : 0 <= h < 25 and ... }``, a schedule written as the
time vector of each instance, and a body: a callable that receives the C expressions isl chose for
the statement's coordinates (by name) and returns C statements. isl's AST generator produces the
loops; padding is a domain cut, so the loops need no ``if``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import islpy as isl

from .slices import SliceRequest, sliced


@dataclass(frozen=True)
class Statement:
    """One assignment of a loop nest.

    ``dims``: coordinate names; ``constraints``: affine constraints over them (isl syntax);
    ``time``: schedule as expressions over ``dims`` (all statements of a kernel use the same length);
    ``body(**coords) -> str``: C code for one instance, coords given as C expressions.
    """

    name: str
    dims: tuple[str, ...]
    constraints: str
    time: tuple[str, ...]
    body: Callable[..., str]

    @property
    def domain(self) -> str:
        return f"{self.name}[{', '.join(self.dims)}] : {self.constraints}"

    @property
    def schedule(self) -> str:
        return f"{self.name}[{', '.join(self.dims)}] -> [{', '.join(self.time)}]"


def box(dims: tuple[str, ...], extents: tuple[int, ...]) -> str:
    """``0 <= d < extent`` for each dim, joined with ``and``."""
    return " and ".join(f"0 <= {d} < {e}" for d, e in zip(dims, extents))


def domain_of(statements: list[Statement]) -> isl.UnionSet:
    return isl.UnionSet("{ " + "; ".join(s.domain for s in statements) + " }")


def count_points(stmt: Statement) -> int:
    """Exact number of instances (enumerates: use on small domains or finalists only)."""
    return isl.Set("{ " + stmt.domain + " }").count_val().to_python()


def loops_to_c(statements: list[Statement], indent: int = 2, slice: SliceRequest | None = None) -> tuple[str, str]:
    """Generate the loop nest. Returns (macros the loops use, C code). ``slice``: step fission's request
    (``schedule_to_c``).

    Raises ValueError if the schedule dimensions disagree (a lowering bug, not a user error).
    """
    lengths = {len(s.time) for s in statements}
    if len(lengths) != 1:
        raise ValueError(f"schedules of different lengths: {[s.schedule for s in statements]}")
    dom = domain_of(statements)
    sched = isl.UnionMap("{ " + "; ".join(s.schedule for s in statements) + " }").intersect_domain(dom)
    return schedule_to_c(sched, {s.name: (s.dims, s.body) for s in statements}, indent, slice)


def schedule_to_c(schedule: isl.UnionMap, bodies: dict, indent: int = 2,
                  slice: SliceRequest | None = None) -> tuple[str, str]:
    """isl's AST for ``schedule`` printed as C, each statement instance replaced by our body
    (ISLPY.md §5). ``bodies[name] = (dims, body(**coords) -> C text)``; coords are the C expressions
    isl chose for the statement's coordinates. Returns (macros the loops use, C code). With a ``slice``
    request (step fission, ``tinyfuse.lower.slicing``): only the slice [tf_lo, tf_hi) (``slices.sliced``)."""
    context = isl.Set("{ : }")
    if slice is not None:
        schedule, context = sliced(schedule, slice)
    build = isl.AstBuild.from_context(context)
    ast = build.node_from_schedule_map(schedule)
    errors: list[BaseException] = []

    def print_user(p, opts, node):
        expr = node.user_get_expr()
        dims, body = bodies[expr.get_op_arg(0).get_id().get_name()]
        args = [expr.get_op_arg(i).to_C_str() for i in range(1, expr.get_op_n_arg())]
        coords = {d: (a if a.lstrip("-").isidentifier() or a.lstrip("-").isdigit() else f"({a})")
                  for d, a in zip(dims, args)}
        try:
            text = body(**coords)
        except BaseException as e:  # an exception must not cross isl's C callback
            errors.append(e)
            text = "/* error */"
        lines = text.strip().split("\n")
        if len(lines) > 1:  # isl prints a user node as one statement: make it a block
            lines = ["{"] + ["  " + ln for ln in lines] + ["}"]
        for line in lines:
            p = p.start_line().print_str(line).end_line()
        return p

    opts, _handle = isl.AstPrintOptions.alloc(ast.get_ctx()).set_print_user(print_user)
    p = isl.Printer.to_str(ast.get_ctx()).set_output_format(isl.format.C)
    macros = ast.print_macros(p).get_str()
    p = isl.Printer.to_str(ast.get_ctx()).set_output_format(isl.format.C).set_indent(indent)
    code = ast.print_(p, opts).get_str()
    if errors:
        raise errors[0]
    return macros, code
