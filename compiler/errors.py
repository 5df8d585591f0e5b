"""The one error type users see: a single line naming node, op, opset and shape, and what to do."""


class TinyfuseError(Exception):
    """A problem with the user's model or options (not a compiler bug).

    The CLI prints ``error: <message>`` on one line and exits with code 2; no traceback
    unless ``--debug``.
    """


def node_error(node: str, op_type: str, opset: int | None, problem: str, hint: str = "") -> TinyfuseError:
    """Build the standard one-line error: ``node 'X' (Conv, opset 13): <problem>; <hint>``."""
    where = f"node '{node}' ({op_type}" + (f", opset {opset})" if opset is not None else ")")
    msg = f"{where}: {problem}"
    if hint:
        msg += f"; {hint}"
    return TinyfuseError(msg)
