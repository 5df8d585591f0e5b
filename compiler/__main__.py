"""``python -m tinyfuse`` and the ``tinyfuse`` console script (pyproject: ``tinyfuse.__main__:run``):
:func:`tinyfuse.cli.main`, with a Ctrl-C during its imports (numpy, onnx, islpy: about a second)
also one ``error:`` line and exit code 130 instead of a traceback."""
import signal
import sys

from .errors import interrupted


def run() -> int:
    """Import the command line and run it on ``sys.argv``; its exit code. From then on the process only
    exits: a further Ctrl-C (during Dask's or tempfile's clean-up at exit) is ignored."""
    try:
        from .cli import main
        code = main()
    except KeyboardInterrupt:       # during the imports (main() itself reports a Ctrl-C and returns 130)
        code = interrupted()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return code


if __name__ == "__main__":
    sys.exit(run())
