"""The header of the branch-free (``--wcet``) forms: kernels with data-dependent branches use them
when ``CompileOptions.wcet`` is set (README "Real-time mode"; the int8 softmax and the epilogue macros
that take ``wcet``: ``runtime_c/include/tinyfuse/wcet.h``, emitted as tinyfuse_wcet.h). Lowerings read
the flag from their context (``LowerCtx.options.wcet``; ``Epilogue.wcet``)."""
from __future__ import annotations

WCET_HEADER = "tinyfuse_wcet.h"

__all__ = ["WCET_HEADER"]
