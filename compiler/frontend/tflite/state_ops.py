"""TFLite converters of the resource-variable ops: CALL_ONCE, VAR_HANDLE, READ_VARIABLE and
ASSIGN_VARIABLE (TFLM kernels call_once.cc, var_handle.cc, read_variable.cc, assign_variable.cc).

They emit no IR op: they route values through the model's :class:`state.StateTable`
(``Graph.states``), which makes state a parameter and an output of ``main``. Registered in
``EFFECTS`` (ops with no data input or output) by importing this module (``tflite.py``).
"""
from __future__ import annotations

from .registry import Graph, Op, effect


def _text(b) -> str:
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else str(b or "")


def _resource(g: Graph, op: Op) -> tuple:
    """The resource key of the operator's handle input (a VAR_HANDLE output of this subgraph)."""
    h = op.inputs[0] if op.inputs else None
    if h is None or h.index not in g.handles:
        raise op.error("its resource input is not a VAR_HANDLE output of this subgraph")
    return ("resource", g.handles[h.index])


@effect("VAR_HANDLE", max_version=1)
def convert_var_handle(g: Graph, op: Op):
    if len(op.outputs) != 1:
        raise op.error(f"expects one output, got {len(op.outputs)}")
    container, shared = _text(op.opt("container", b"")), _text(op.opt("sharedName", b""))
    if not shared:
        raise op.error("the resource variable has no shared_name")
    g.handles[op.outputs[0].index] = f"{container}/{shared}" if container else shared


@effect("READ_VARIABLE", max_version=1)
def convert_read_variable(g: Graph, op: Op):
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise op.error(f"expects one input and one output, got {len(op.inputs)} and {len(op.outputs)}")
    t = op.outputs[0]
    g.set(t, g.states.read(_resource(g, op), t, op), op)


@effect("ASSIGN_VARIABLE", max_version=1)
def convert_assign_variable(g: Graph, op: Op):
    if len(op.inputs) != 2 or op.inputs[1] is None:
        raise op.error(f"expects a resource and a value, got {len(op.inputs)} inputs")
    t = op.inputs[1]
    g.states.assign(_resource(g, op), t, g.value(t), op)


@effect("CALL_ONCE", max_version=1)
def convert_call_once(g: Graph, op: Op):
    index = op.opt("initSubgraphIndex", None)
    if index is None or g.subgraph is None:
        raise op.error("no init subgraph index")
    if g.states.initializing:
        raise op.error("CALL_ONCE inside an init subgraph is not supported")
    g.states.initializing = True
    try:
        g.subgraph(int(index), g.states)
    finally:
        g.states.initializing = False
