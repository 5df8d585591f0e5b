"""The real-time choices a lowering reads (README "Real-time mode"), set by the driver around the
lowering of one compilation (``modes(options)``): lowerings are called without the options, and
these two flags change only a few templates.

- ``wcet`` (``--wcet``): kernels with data-dependent branches use their branch-free forms (the int8
  softmax: ``runtime_c/include/tinyfuse/wcet.h``, emitted as tinyfuse_wcet.h);
- ``skip_zero`` (``--skip-zero-activations``): the int8 pointwise conv / fully connected kernels skip
  groups of input activations equal to the input zero point (``lower/conv/skip_zero.py``).
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass

WCET_HEADER = "tinyfuse_wcet.h"


@dataclass(frozen=True)
class Modes:
    wcet: bool = False
    skip_zero: bool = False


MODES: contextvars.ContextVar = contextvars.ContextVar("tinyfuse_realtime_modes", default=Modes())


@contextlib.contextmanager
def modes(options):
    """Lowerings inside see the real-time flags of ``options`` (a CompileOptions) through ``current()``."""
    token = MODES.set(Modes(options.wcet, options.skip_zero_activations))
    try:
        yield
    finally:
        MODES.reset(token)


def current() -> Modes:
    return MODES.get()


__all__ = ["Modes", "WCET_HEADER", "current", "modes"]
