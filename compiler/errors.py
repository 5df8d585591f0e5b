"""The one error type users see: a single line naming node, op, opset and shape, and what to do."""
import sys

EXIT_INTERRUPTED = 130      # 128 + SIGINT, as a shell reports a program Ctrl-C stopped


class TinyfuseError(Exception):
    """A problem with the user's model or options (not a compiler bug).

    The CLI prints ``error: <message>`` on one line and exits with code 2; no traceback
    unless ``--debug``.
    """


class NeedsBinding(TinyfuseError):
    """A value the compiler needs at compile time (an output shape, a Loop trip count, an If condition)
    is computed from run-time inputs; ``inputs`` names those graph inputs: bound with ``--bind NAME=VALUE``
    they are constants and the value folds."""

    def __init__(self, message: str, inputs=()):
        super().__init__(message)
        self.inputs = tuple(inputs)


def node_error(node: str, op_type: str, opset: int | None, problem: str, hint: str = "") -> TinyfuseError:
    """Build the standard one-line error: ``node 'X' (Conv, opset 13): <problem>; <hint>``."""
    where = f"node '{node}' ({op_type}" + (f", opset {opset})" if opset is not None else ")")
    msg = f"{where}: {problem}"
    if hint:
        msg += f"; {hint}"
    return TinyfuseError(msg)


def interrupted() -> int:
    """Ctrl-C in the command line: one ``error:`` line on stderr, and EXIT_INTERRUPTED to exit with."""
    try:
        print("error: interrupted (Ctrl-C)", file=sys.stderr, flush=True)
    except OSError:
        pass
    return EXIT_INTERRUPTED
