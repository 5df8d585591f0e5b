"""Values the compiler needs at compile time: an output shape (ConstantOfShape's shape, Range's bounds),
a Loop trip count, an If condition. A Constant gives its value; anything computed from run-time inputs
is one :class:`~tinyfuse.errors.NeedsBinding` error naming the graph inputs it depends on (bound with
``--bind NAME=VALUE`` they are constants, and the value folds)."""
from __future__ import annotations

import numpy as np

from ...errors import NeedsBinding
from ...ir import Constant, Expr, Var, post_order
from .registry import Node, shown

BIND_HINT = "bind the inputs it depends on (--bind NAME=VALUE) so it folds at compile time"


def runtime_inputs(e: Expr) -> list[str]:
    """The graph inputs (Vars) an expression depends on, in first-seen order."""
    return list(dict.fromkeys(n.name for n in post_order(e) if isinstance(n, Var)))


def compile_time_value(node: Node, e: Expr, what: str, hint: str = BIND_HINT) -> np.ndarray:
    """The value of ``e`` (a Constant), or NeedsBinding: ``what`` is computed at run time, from which
    graph inputs (``NeedsBinding.inputs``), and ``hint``."""
    if isinstance(e, Constant):
        return e.value
    deps = runtime_inputs(e)
    src = f" (it depends on input {', '.join(repr(shown(d)) for d in deps)})" if deps else ""
    raise NeedsBinding(str(node.error(f"{what} is computed at run time{src}", hint)), deps)
