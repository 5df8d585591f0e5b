"""tinyfuse command line: compile | run | bench | report | project | validate | tune | quantize.

Exit codes (the contract a script can rely on; also in ``--help`` and the README):
0 success; 1 the generated C's outputs do not match the reference (run) or a validate --fail-under
criterion fails; 2 user error (bad model, unsupported op, bad option or path): one ``error:`` line on
stderr; 3 internal error (a tinyfuse bug): one ``error: internal error in tinyfuse X.Y: ... please report``
line; 130 Ctrl-C (one line); 141 stdout closed by its reader (``| head``; nothing printed). ``--debug`` adds
the traceback; without it none reaches the user.
"""
from __future__ import annotations

import errno
import os
import select
import sys
import traceback
import warnings


from .._version import __version__
from ..errors import TinyfuseError, interrupted
from ..harness.oracles import onnxruntime_outputs, reference_outputs, tflm_outputs  # noqa: F401 (re-exported)
from ..harness.verdict import compare, is_quantized, output_lines, output_lsb, top_classes, verdict_line  # noqa: F401

from .args import (EXIT_CODES_HELP, EXIT_INTERNAL_ERROR, EXIT_MISMATCH, EXIT_OK, EXIT_PIPE_CLOSED,  # noqa: F401
                   EXIT_USER_ERROR, build_parser)
from .commands import COMMANDS, measure_kernels  # noqa: F401  (re-exported)


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    """Compiler warnings (a node left in float, a possible int32 overflow) as one ``warning:`` line."""
    print(f"warning: {message}", file=file or sys.stderr)


def _internal_error(e: BaseException) -> str:
    first = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
    return (f"error: internal error in tinyfuse {__version__}: {type(e).__name__}{': ' + first if first else ''}"
            " — please report it (rerun with --debug for the traceback)")


def _stdout_closed() -> bool:
    """True when stdout is a pipe whose reader went away (poll reports an error on its write end)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (AttributeError, OSError, ValueError):      # no poll (Windows), no file descriptor
        return True


def _pipe_closed() -> int:
    """stdout's reader went away (``tinyfuse report ... | head -1``): nothing more to say, EXIT_PIPE_CLOSED.
    stdout becomes /dev/null so the interpreter's last flush stays quiet."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_PIPE_CLOSED


def main(argv=None) -> int:
    """Run one command and return its exit code (module doc); never raises. argparse usage errors
    return 2 and --help/--version 0; Ctrl-C prints one line and returns 130; a closed stdout (``| head``)
    returns 141 quietly."""
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as e:   # argparse: usage error (2, message already printed) or --help/--version (0)
            return e.code if isinstance(e.code, int) else EXIT_USER_ERROR
        if not args.debug:
            warnings.showwarning = _one_line_warning
        return _run_command(args)
    except KeyboardInterrupt:
        return interrupted()
    except BrokenPipeError:
        return _pipe_closed()


def _user_error(args, e: Exception) -> int:
    if args.debug:
        traceback.print_exc()
    msg = e if isinstance(e, TinyfuseError) else f"{e.filename or ''}: {e.strerror or e}".lstrip(": ")
    print(f"error: {msg}", file=sys.stderr)
    return EXIT_USER_ERROR


def _run_command(args) -> int:
    """The command of ``args``, its errors as one line and an exit code (module doc); stdout flushed,
    so a closed pipe shows here (BrokenPipeError) and not at the interpreter's exit."""
    try:
        status = COMMANDS[args.command](args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        if _stdout_closed():
            raise
        return _user_error(args, OSError(errno.EPIPE, "a pipe tinyfuse wrote to was closed"))
    except (TinyfuseError, OSError) as e:   # OSError: a path the user gave (unreadable, read-only, ...)
        return _user_error(args, e)
    except Exception as e:   # a tinyfuse bug
        if args.debug:
            traceback.print_exc()
        print(_internal_error(e), file=sys.stderr)
        return EXIT_INTERNAL_ERROR


if __name__ == "__main__":
    sys.exit(main())
