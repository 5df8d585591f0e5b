"""Numpy evaluation of any IRModule (before or after fusion): the compiler's own oracle."""
from __future__ import annotations

import numpy as np

from .expr import Call, Constant, Function, IRModule, Tuple, Var, post_order
from .op import get_op


def evaluate(func: Function, inputs: list[np.ndarray], env: dict | None = None) -> list[np.ndarray]:
    """Run ``func`` on ``inputs`` (one array per parameter, in order); returns one array per output.
    Pass ``env`` (a dict) to get every intermediate value back, keyed by id(expression)."""
    env = {} if env is None else env
    env.update({id(p): np.asarray(x) for p, x in zip(func.params, inputs)})
    for node in post_order(func.body):
        if isinstance(node, (Var,)):
            continue
        if isinstance(node, Constant):
            env[id(node)] = node.value
        elif isinstance(node, Tuple):
            env[id(node)] = tuple(env[id(f)] for f in node.fields)
        elif isinstance(node, Call):
            args = [env[id(a)] for a in node.args]
            if isinstance(node.op, Function):
                (env[id(node)],) = evaluate(node.op, args)
            else:
                env[id(node)] = get_op(node.op).compute(*args, **node.attrs)
    return [env[id(o)] for o in func.outputs]


def run_module(mod: IRModule, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return evaluate(mod.main, inputs)
