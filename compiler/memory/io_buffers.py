"""Model inputs and outputs in caller-owned buffers (``--io-buffers caller``), outside the arena.

As TVM's AOT executor (``tvmgen_<mod>_run(inputs, outputs)``: the workspace pool holds activations
only) and X-CUBE-AI without ``--allocate-inputs/--allocate-outputs`` (``ai_<net>_run(net, in, out)``
with the caller's ``ai_buffer`` data), the generated ``<name>_run(arena, input0, ..., output0, ...)``
reads input i from the caller's ``const`` pointer ``input<i>`` and writes output j straight into
``output<j>``. So:

- a model input (a parameter of main) takes no arena bytes and no kernel writes over it in place
  (the caller's input is ``const``: the in-place options over it are dropped, ``arena.kernel_graph``);
- the kernel whose output is a model output (or a view of one: a reshape) writes the caller's
  buffer; it takes no arena bytes and no kernel reuses it in place (it is not the arena's memory);
- readers of an input or output value find it at ``in<i>`` / ``out<j>`` (``locator``).

Refused (TinyfuseError): stateful models (their ``_run(arena, state)`` API keeps the arena form), an
output that is an input or a view of one, an output that is a part of a larger kernel output (a
slice view), and two outputs of the same kernel buffer.
"""
from __future__ import annotations

from ..errors import TinyfuseError
from ..ir import Call, Function, IRModule, get_op


def _root(e):
    """The value whose buffer ``e`` shares: views (reshape, slices) share their operand's memory."""
    while isinstance(e, Call) and not isinstance(e.op, Function):
        e = e.args[0]
    return e


def caller_homes(mod: IRModule) -> dict[int, tuple[object, str]]:
    """id(value) -> (value, C base pointer name) of every caller-owned value: model input i is
    ``in<i>`` (its parameter), output j is ``out<j>`` (the kernel call computing it). TinyfuseError
    for the cases the module doc refuses."""
    if mod.states:
        raise TinyfuseError("--io-buffers caller: a stateful model keeps its inputs and outputs in the arena "
                            "(<name>_run(arena, state)); compile it with --io-buffers arena")
    func = mod.main
    homes: dict[int, tuple[object, str]] = {id(p): (p, f"in{i}") for i, p in enumerate(func.params)}
    for j, o in enumerate(func.outputs):
        root = _root(o)
        if id(root) in homes:
            what = "the input" if any(root is p for p in func.params) else "another output"
            raise TinyfuseError(f"--io-buffers caller: output {j} ('{mod.output_names[j]}') shares the buffer of "
                                f"{what} '{homes[id(root)][1]}'; compile with --io-buffers arena")
        e = o
        while e is not root:
            if get_op(e.op).view_offset(e) or e.ty.nbytes != root.ty.nbytes:
                raise TinyfuseError(f"--io-buffers caller: output {j} ('{mod.output_names[j]}') is a part of a "
                                    "larger kernel output; compile with --io-buffers arena")
            e = e.args[0]
        homes[id(root)] = (root, f"out{j}")
    return homes


def caller_owned(mod: IRModule, options) -> frozenset:
    """ids of the values outside the arena because the caller owns them (empty for 'arena')."""
    if options.io_buffers != "caller":
        return frozenset()
    return frozenset(caller_homes(mod))


def caller_ids(func: Function, options) -> frozenset:
    """ids of the parameters and output roots of a fused main Function (no checks): what the arena
    oracle of poly_fuse leaves out of its peaks under 'caller' (empty for 'arena')."""
    if options.io_buffers != "caller":
        return frozenset()
    return frozenset([*map(id, func.params), *(id(_root(o)) for o in func.outputs)])


def with_caller_io(where, mod: IRModule, offset, options):
    """``where`` (value -> (C base, byte offset), memory/state.py ``locator``) with the caller-owned
    values at their own pointers: a view at its byte offset from its root's start."""
    if options.io_buffers != "caller":
        return where
    homes = caller_homes(mod)

    def located(e):
        root = _root(e)
        if id(root) in homes:
            v, base = homes[id(root)]
            return base, offset(e) - offset(v)
        return where(e)
    return located


__all__ = ["caller_homes", "caller_ids", "caller_owned", "with_caller_io"]
