"""isl schedule (a UnionMap built from isl objects, not strings) → C loops with our statement bodies.

The same print-user scheme as ``isl_helpers.loops_to_c`` (ISLPY.md §5), for schedules whose time
vectors are computed by isl (line-buffer steps from ``lexmin``, piecewise quasi-affine).
"""
from __future__ import annotations

from typing import Callable

import islpy as isl


def schedule_to_c(schedule: isl.UnionMap, bodies: dict[str, tuple[tuple[str, ...], Callable[..., str]]],
                  indent: int = 2) -> tuple[str, str]:
    """(macros the loops use, C code). ``bodies[name] = (dims, body(**coords) -> C text)``; coords are
    the C expressions isl chose for the statement's coordinates."""
    build = isl.AstBuild.from_context(isl.Set("{ : }"))
    ast = build.node_from_schedule_map(schedule.coalesce())
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
        if len(lines) > 1:
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
