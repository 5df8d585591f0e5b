"""The op registry is complete: every op has a way to C, every name other modules use is registered.

How each op reaches C is read from its OpDef:
- ``is_view`` (reshape): no kernel and no buffer; fuse_ops leaves it out of every group;
- ``pattern <= BROADCAST`` (element-wise): printed inside a group's loop by its ``c_expr`` macro,
  either as an anchor's epilogue or in an ``elemwise`` kernel;
- any other pattern (an anchor: conv, matmul, pool, softmax, transpose ...): its own lowering in
  ``tinyfuse.lower.registry.LOWERINGS``.
Frontend op names are read from the converter modules' source (ast), not by running them, so a
converter that is not exercised by any test model is checked too.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import tinyfuse.lower  # noqa: F401  (registers the lowerings)
from tinyfuse.cost.features import FEATURE_NAMES, OP_KINDS
from tinyfuse.ir import OPS, OpPattern
from tinyfuse.lower.registry import IMPLEMENTATIONS, LOWERINGS
from tinyfuse.strategy import STRATEGIES, impls
from tinyfuse.ops import ops_where
from tinyfuse.resources import template_dir

FRONTEND = Path(__file__).resolve().parents[2] / "compiler" / "frontend"
CONVERTER_MODULES = sorted(str(p.relative_to(FRONTEND)) for p in FRONTEND.glob("*/*.py"))   # every converter module
EXPR_TEMPLATES = ["expr/elemwise.c.j2", "expr/qnn.c.j2"]    # the macro modules lower.kernel.Epilogue reads


def how_lowered(name: str) -> str:
    opdef = OPS[name]
    if opdef.is_view:
        return "view"
    if opdef.pattern <= OpPattern.BROADCAST:
        return "elemwise"
    return "kernel"


def template_macros() -> set[str]:
    text = "".join((template_dir() / t).read_text() for t in EXPR_TEMPLATES)
    return set(re.findall(r"{%-?\s*macro\s+(\w+)", text))


def test_every_op_has_a_way_to_c():
    assert "elemwise" in LOWERINGS
    missing = [n for n in OPS if how_lowered(n) == "kernel" and n not in LOWERINGS]
    assert missing == [], f"anchor ops without a lowering: {missing}"
    no_expr = [n for n in OPS if how_lowered(n) == "elemwise" and not OPS[n].c_expr]
    assert no_expr == [], f"element-wise ops without a c_expr macro: {no_expr}"
    assert {how_lowered(n) for n in ("reshape", "add", "nn.conv2d")} == {"view", "elemwise", "kernel"}


def test_lowerings_and_strategies_name_registered_ops():
    assert set(LOWERINGS) - {"elemwise"} <= set(OPS)
    assert set(STRATEGIES) <= set(LOWERINGS)    # every family with a strategy has a portable kernel


def test_every_c_expr_names_a_template_macro():
    macros = template_macros()
    assert {"add", "requantize", "lut"} <= macros
    bad = {n: d.c_expr for n, d in OPS.items() if d.c_expr and d.c_expr not in macros}
    assert bad == {}, f"c_expr names no macro in {EXPR_TEMPLATES}: {bad}"


def test_cost_features_name_registered_ops():
    assert OP_KINDS[-1] == "other" and set(OP_KINDS[:-1]) <= set(OPS)
    columns = [n.split("=", 1)[1] for n in FEATURE_NAMES if n.startswith("op=")]
    assert columns == list(OP_KINDS)
    assert "qnn.dense" not in OP_KINDS and "qnn.conv2d" in OP_KINDS


def test_derived_op_sets_hold_the_ops_they_name():
    from tinyfuse.passes import check_overflow, fold_views, fuse_horizontal, fuse_ops, legalize_qdq
    assert fuse_ops.VIEW_OPS == ("reshape", "slice_view")
    assert fold_views.VIEW_OPS == ("reshape", "slice_axis", "transpose")
    assert legalize_qdq.MOVE_OPS == ("broadcast_to", "nn.border_pad", "nn.max_pool2d", "reshape", "slice_axis", "slice_view", "strided_slice",
                                    "take", "tile", "transpose")
    assert set(legalize_qdq.LUT_OPS) == {"sigmoid", "tanh", "hard_sigmoid", "hard_swish", "nn.leaky_relu",
                                         "nn.gelu", "erf",
                                         # ops/math.py
                                         "abs", "negative", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sin", "cos",
                                         "floor", "ceil", "round", "sign", "square", "nn.softplus", "nn.softsign",
                                         "nn.mish", "nn.elu", "nn.selu", "nn.celu", "nn.thresholded_relu", "nn.shrink",
                                         "nn.silu"}   # ops/silu.py
    assert set(legalize_qdq.ACTIVATIONS) == {"nn.relu", "clip"}
    assert check_overflow.ACCUMULATING == ("qnn.conv2d", "qnn.conv2d_transpose", "qnn.matmul")
    assert fuse_horizontal.ANCHORS == {"nn.matmul": "matmul", "qnn.matmul": "matmul", "nn.conv2d": "conv",
                                       "qnn.conv2d": "conv"}
    for name in ops_where(lambda d: d.lut):
        assert OPS[name].num_inputs == 1 and OPS[name].pattern == OpPattern.ELEMWISE


# ----------------------------------------------------------------------------------------- frontend op names

def _strings(e: ast.AST, scope: dict[str, ast.AST]) -> list[str] | None:
    """The op names expression ``e`` may take: string literals, conditional choices, values of a dict
    literal looked up by key, a local variable assigned one of those. None: not resolvable."""
    if isinstance(e, ast.Constant) and isinstance(e.value, str):
        return [e.value]
    if isinstance(e, ast.IfExp):
        a, b = _strings(e.body, scope), _strings(e.orelse, scope)
        return None if a is None or b is None else a + b
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Dict):
        vals = [_strings(v, scope) for v in e.value.values]
        return None if any(v is None for v in vals) else [s for v in vals for s in v]
    if isinstance(e, ast.Name) and e.id in scope:
        return _strings(scope[e.id], {k: v for k, v in scope.items() if k != e.id})
    return None


def _param_values(tree: ast.Module, fn: ast.FunctionDef, index: int) -> list[ast.AST]:
    """The positional arguments ``index`` of ``fn`` at its call sites in the module."""
    return [c.args[index] for c in ast.walk(tree) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
            and c.func.id == fn.name and len(c.args) > index]


def _resolve(tree, fns, e, scope) -> list[str] | None:
    """Like _strings, also through a parameter of an enclosing function (``fns``, innermost last: the
    literals at its call sites) and an f-string whose holes are such names."""
    found = _strings(e, scope)
    if found is not None:
        return found
    owner = next((f for f in reversed(fns) if isinstance(e, ast.Name) and e.id in [a.arg for a in f.args.args]),
                 None)
    if owner is not None:
        index = [a.arg for a in owner.args.args].index(e.id)
        vals = [_strings(v, {}) for v in _param_values(tree, owner, index)]
        return None if not vals or any(v is None for v in vals) else [s for v in vals for s in v]
    if isinstance(e, ast.JoinedStr):
        out = [""]
        for part in e.values:
            if isinstance(part, ast.Constant):
                out = [o + part.value for o in out]
                continue
            hole = _resolve(tree, fns, part.value, scope)
            if hole is None:
                return None
            out = [o + h for o in out for h in hole]
        return out
    return None


def emitted_ops(path: Path) -> tuple[set[str], list[str]]:
    """(op names the module passes to ``call``, the ``call`` sites whose name is not resolvable)."""
    tree = ast.parse(path.read_text())
    found, unresolved = set(), []

    def walk(node, fns, scope):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef):
                inner = {t.id: a.value for a in ast.walk(child) if isinstance(a, ast.Assign)
                         for t in a.targets if isinstance(t, ast.Name)}
                walk(child, [*fns, child], {**scope, **inner})
                continue
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id == "call" \
                    and child.args:
                names = _resolve(tree, fns, child.args[0], scope)
                if names is None:
                    unresolved.append(f"{path.name}:{child.lineno}")
                else:
                    found.update(names)
            walk(child, fns, scope)

    walk(tree, [], {})
    return found, unresolved


@pytest.mark.parametrize("module", CONVERTER_MODULES)
def test_frontend_converters_emit_registered_ops(module):
    found, unresolved = emitted_ops(FRONTEND / module)
    assert unresolved == [], f"op name not readable from the source (use a literal): {unresolved}"
    assert found - set(OPS) == set(), f"{module} emits unregistered ops"


def test_the_scan_sees_computed_names():
    onnx_ops, _ = emitted_ops(FRONTEND / "onnx" / "ops.py")
    assert {"nn.avg_pool2d", "subtract", "divide", "sigmoid", "hard_sigmoid"} <= onnx_ops
    assert {"nn.max_pool2d", "nn.avg_pool2d"} <= emitted_ops(FRONTEND / "onnx" / "pool.py")[0]
    tflite_ops, _ = emitted_ops(FRONTEND / "tflite" / "ops.py")
    assert {"nn.max_pool2d", "nn.avg_pool2d", "qnn.avg_pool2d", "sigmoid", "tanh"} <= tflite_ops
    tree = ast.parse('def f(k):\n    return call(g(k), x)\n')
    assert _resolve(tree, [tree.body[0]], tree.body[0].body[0].value.args[0], {}) is None


def test_the_scan_catches_an_unregistered_op(tmp_path):
    bad = tmp_path / "bad_ops.py"
    bad.write_text('def unary(op):\n    return lambda x: call(op, x)\n\n\nCONVERTERS = {"Dense": unary("qnn.dense")}\n')
    found, unresolved = emitted_ops(bad)
    assert found == {"qnn.dense"} and unresolved == [] and found - set(OPS) == {"qnn.dense"}


def test_is_identity_drives_eliminate_dead_code():
    from tinyfuse.ir import Function, IRModule, TensorType, Var, call, iter_calls
    from tinyfuse.passes.eliminate_dead_code import eliminate_dead_code
    x = Var("x", TensorType((1, 2, 3), "float32"))
    keep = [call("transpose", x, axes=(0, 2, 1)), call("clip", x, a_max=6.0), call("reshape", x, newshape=(2, 3))]
    drop = [call("transpose", x, axes=(0, 1, 2)), call("clip", x), call("reshape", x, newshape=(1, 2, 3))]
    assert [OPS[c.op].is_identity(c) for c in keep + drop] == [False] * 3 + [True] * 3
    assert not OPS["nn.relu"].is_identity(call("nn.relu", x))
    y = call("nn.relu", drop[0])
    for e in drop[1:] + keep:
        y = call("add", y, call("reshape", e, newshape=(1, 2, 3)) if e.ty.shape != (1, 2, 3) else e)
    mod = eliminate_dead_code(IRModule(Function((x,), y), "m", ("y",)))
    ops = [c.op for c in iter_calls(mod.main)]
    # the kept three remain (the transpose and the (2, 3) reshape behind a reshape back), the dropped go
    assert sorted(ops) == sorted(["nn.relu"] + ["add"] * 5 + ["transpose", "clip"] + ["reshape"] * 3)


def test_every_declared_implementation_has_a_lowering_and_every_lowering_an_implementation():
    """The strategies (tinyfuse.strategy) and the lowerings (lower.registry) name the same implementations:
    each declared one is lowered by IMPLEMENTATIONS[name], or is its family's portable ``.ref`` (LOWERINGS);
    no lowering is registered for a name no strategy declares."""
    declared = {i.name for family in STRATEGIES for i in impls(family)}
    portable = {i.name for family in STRATEGIES for i in impls(family) if i.name.endswith(".ref") and i.needs is None
                and i.modes == {"normal"}}
    assert declared - portable - {"fused_chain"} <= set(IMPLEMENTATIONS) | {n for n in declared if n.startswith("chain.")}
    assert set(IMPLEMENTATIONS) <= declared, set(IMPLEMENTATIONS) - declared
