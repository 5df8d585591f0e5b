"""``--stateful IN=OUT,...``: a model exported with explicit state inputs and outputs (PyTorch's
``torch.onnx.export`` of an LSTM/GRU cell loop takes ``h``/``c`` as inputs and returns the new
``h``/``c``) becomes a streaming model whose state persists between runs (``ir.State``).

Each pair names a graph input IN and a graph output OUT of the same shape and dtype: IN is no
longer a model input but the state's value when ``<name>_run`` starts, OUT no longer a model output
but the state's value when it ends (stored back for the next run); ``<name>_reset`` zeroes it (the
zero initial state ``torch.zeros`` exporters feed). The state convention is ``ir.State``'s: the
states are the last parameters and the last outputs of ``main``, in pair order, before any state
the frontend made itself (TFLite variable tensors).
"""
from __future__ import annotations

from ...errors import TinyfuseError
from ...ir import Function, IRModule, State, Tuple
from .reader import sanitize


def parse_pairs(text: str) -> tuple[tuple[str, str], ...]:
    """``"h_in=h_out,c_in=c_out"`` → (("h_in", "h_out"), ("c_in", "c_out")); TinyfuseError when an
    item is not ``IN=OUT`` with both names non-empty."""
    pairs = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        src, eq, dst = item.partition("=")
        if not (eq and src.strip() and dst.strip()):
            raise TinyfuseError(f"--stateful: '{item}' is not IN=OUT (a graph input and a graph output name)")
        pairs.append((src.strip(), dst.strip()))
    if not pairs:
        raise TinyfuseError("--stateful: no IN=OUT pair given")
    return tuple(pairs)


def _index(names: list[str], name: str, what: str, available: list[str]) -> int:
    if name not in names:
        raise TinyfuseError(f"--stateful: '{name}' is not a graph {what} (the {what}s: {', '.join(available)})")
    return names.index(name)


def mark_stateful(mod: IRModule, pairs) -> IRModule:
    """``mod`` with each (input, output) pair of ``pairs`` turned into persistent state (module
    docstring). TinyfuseError for an unknown name, a name used twice, a shape/dtype mismatch, or pairs that
    leave no per-frame input or output."""
    pairs = tuple(pairs)
    if not pairs:
        return mod
    fn, n_old = mod.main, len(mod.states)
    params, outs = list(fn.params), list(fn.outputs)
    in_names = [p.name for p in params[:len(params) - n_old]]
    out_names = list(mod.output_names)                # the names of the non-state outputs
    ins = [_index(in_names, a, "input", in_names) for a, _ in pairs]
    outputs = [_index(out_names, b, "output", out_names) for _, b in pairs]
    if len(set(ins)) != len(ins) or len(set(outputs)) != len(outputs):
        raise TinyfuseError(f"--stateful: an input or output is named twice in {list(pairs)}")
    if len(ins) == len(in_names) or len(outputs) == len(out_names):
        left = "input" if len(ins) == len(in_names) else "output"
        raise TinyfuseError(f"--stateful {','.join(f'{a}={b}' for a, b in pairs)}: no graph {left} is left "
                            f"that is not state (a streaming model needs a per-frame {left})")
    states = []
    for (a, b), i, o in zip(pairs, ins, outputs):
        ti, to = params[i].ty, outs[o].ty
        if ti.shape != to.shape or ti.dtype != to.dtype:
            raise TinyfuseError(f"--stateful {a}={b}: input {list(ti.shape)} {ti.dtype} and output "
                                f"{list(to.shape)} {to.dtype} differ")
        states.append(State(sanitize(a), ti.shape, ti.dtype))
    order_in = [k for k in range(len(in_names)) if k not in ins] + ins + list(range(len(in_names), len(params)))
    keep_out = [k for k in range(len(out_names)) if k not in outputs]
    order_out = keep_out + outputs + list(range(len(out_names), len(outs)))
    new_params, new_outs = [params[k] for k in order_in], [outs[k] for k in order_out]
    names = tuple(out_names[k] for k in keep_out)
    qin, qout = mod.io_quant      # per parameter / output (state ones included) when recorded
    io_quant = (tuple(qin[k] for k in order_in) if len(qin) == len(params) else qin,
                tuple(qout[k] for k in order_out) if len(qout) == len(outs) else qout)
    body = new_outs[0] if len(new_outs) == 1 else Tuple(tuple(new_outs))
    main = Function(tuple(new_params), body, dict(fn.attrs))
    return IRModule(main, mod.name, names, io_quant, tuple(states) + tuple(mod.states))
