"""What lowering produces (Kernel), and the helpers every kernel family shares: constant pool,
flat/broadcast index expressions, and the element-wise epilogue printer."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..codegen.templates import c_literal, template
from ..ir import Call, Constant, Function, TensorType, Var, get_op
from ..ir.group import split_group  # noqa: F401  (re-exported: lowerings split their group)
from ..options import KNOBS
from ..poly import loops_to_c
from ..poly.codegen import schedule_to_c


@dataclass
class Kernel:
    """One generated C function ``static void <name>(const T *p0, ..., T *out)``.

    ``params`` are the external tensor inputs in call order (which of them the output may overwrite
    is the memory plan's proven choice, ``tinyfuse.memory.inplace``); ``macs`` counts multiply-accumulates
    (nominal, as papers count them). A kernel with ``scratch_bytes`` > 0 takes one more argument, ``void *scratch``: that many bytes of the arena,
    ``ARENA_ALIGN``-byte (16) aligned, planned like a tensor that lives only during the call.
    """

    name: str
    params: list[TensorType]
    out: TensorType
    loops: str                      # the function body (loop nest)
    decls: list[str] = field(default_factory=list)   # local declarations
    macros: str = ""                # isl's min/max/floord macros the loops use
    macs: int = 0
    scratch_bytes: int = 0
    group: str = ""                 # fused group name, e.g. fused_conv2d_add_relu
    ops: list[str] = field(default_factory=list)
    code: str = ""                  # the whole C function, filled by lower_group
    variant: str = "ref"            # its C's variant class: ref (portable), arm_dsp, arm_mve, arm_fpu, sparse, in place
    headers: list[str] = field(default_factory=list)   # runtime_c headers the body needs (emitted beside)
    plan: object = None             # fused_chain kernels: their tinyfuse.poly.linebuf.ChainPlan (memory report)
    slice_range: tuple[int, int] | None = None   # step fission: the kernel runs [tf_lo, tf_hi) of this range
    slice_points: list[int] | None = None        # ... of which these values are used (deep slices)
    tunable: dict = field(default_factory=dict)  # lowering knobs its family offers: name -> values (lower.group_knobs)
    knobs: dict = field(default_factory=dict)    # ... and the values of those it was lowered with (non-default)
    kind: str = ""                  # the implementation that lowered it (strategy.choose's name, e.g. conv2d.arm_dsp)
    stage_kinds: list = field(default_factory=list)   # fused chains: the implementation of each stage, in order
    declined: list = field(default_factory=list)      # (implementation, reason) of those tried before ``kind``


class ConstPool:
    """Constants of the whole model, each emitted once as ``const <T> <prefix>_c<k>[]`` in flash."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.arrays: list[tuple[str, np.ndarray]] = []
        self._by_key: dict[int, str] = {}
        self._keyed_by_id: list = []    # the objects behind id() keys, kept alive so no id is reused

    def ref(self, value: np.ndarray | Constant, key=None) -> str:
        arr = value.value if isinstance(value, Constant) else value
        k = id(value) if key is None else key
        if k not in self._by_key:
            name = f"{self.prefix}_c{len(self.arrays)}"
            self.arrays.append((name, np.ascontiguousarray(arr)))
            self._by_key[k] = name
            if key is None:
                self._keyed_by_id.append(value)
        return self._by_key[k]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for _, a in self.arrays)

    def mark(self) -> int:
        return len(self.arrays)

    def rollback(self, mark: int) -> None:
        """Forget the constants added since ``mark`` (a kernel variant that declined after adding some)."""
        dropped = {name for name, _ in self.arrays[mark:]}
        del self.arrays[mark:]
        self._by_key = {k: v for k, v in self._by_key.items() if v not in dropped}


def affine(*terms: tuple[str, int]) -> str:
    """C text of sum(expr * coeff), dropping zero terms and unit coefficients: (('c0', 64), ('c1', 1))
    → 'c0 * 64 + c1'."""
    parts = []
    const = 0
    for expr, coeff in terms:
        if coeff == 0 or expr == "0":
            continue
        if expr.lstrip("-").isdigit():
            const += int(expr) * coeff
            continue
        simple = expr.isidentifier() or expr.startswith("(") and expr.endswith(")") and expr.count("(") == 1
        parts.append(expr if coeff == 1 else f"{expr} * {coeff}" if simple else f"({expr}) * {coeff}")
    text = " + ".join(parts)
    if const > 0 or not parts:
        text = f"{text} + {const}" if parts else str(const)
    elif const < 0:
        text = f"{text} - {-const}"
    return text


def flat_index(shape: tuple[int, ...], idx: list[str]) -> str:
    """Row-major flat offset of ``idx`` in a tensor of ``shape``.

    Flattened rows: the SIMD lowerings index the output as ``[n, 0, p, k]`` with p over OH*OW (the
    row axes flattened into the last of them, the others indexed by a literal ``"0"``). So an index
    on an axis of size 1 may exceed it (OW = 1, p up to OH - 1); every term is kept, and a size-1
    axis's stride, equal to the next axis's, makes that offset exact."""
    strides = np.cumprod((1,) + tuple(shape[:0:-1]))[::-1] if shape else ()
    return affine(*((e, int(s)) for e, s in zip(idx, strides)))


def broadcast_index(shape: tuple[int, ...], out_shape: tuple[int, ...], out_idx: list[str]) -> str:
    """Flat offset into an operand of ``shape`` broadcast (numpy rules) to ``out_shape`` at ``out_idx``.

    An operand axis of size 1 reads index 0 where the output's axis is larger, and also where the
    index is a flattened-row index (flat_index) over axes the operand broadcasts along: an index on
    an axis of size 1 in both, after a run of axes indexed ``"0"`` whose sizes differ from the
    output's (the lowerings check that every operand is full or 1 along all flattened axes)."""
    lead = len(out_shape) - len(shape)
    full = (1,) * lead + tuple(shape)          # the operand's shape aligned with the output's
    idx = []
    for i in range(lead, len(out_shape)):
        d, o, j = full[i], out_shape[i], i
        while j > 0 and out_idx[j - 1] == "0":
            j -= 1
        flat_broadcast = d == 1 and o == 1 and full[j:i] != tuple(out_shape[j:i])
        idx.append("0" if (d == 1 and o != 1) or flat_broadcast else out_idx[i])
    return flat_index(shape, idx)


class Epilogue:
    """Prints the element-wise ops of a group as C statements on scalars.

    ``anchor`` (if any) is the value ``acc``; operands that are params or constants are loaded with
    broadcast indexing from the output index; each op's C expression comes from the macro named by
    its registry entry in ``codegen_templates/expr/elemwise.c.j2``.
    """

    def __init__(self, fn: Function, anchor: Call | None, ops: list[Call], pool: ConstPool, ctype: str,
                 wcet: bool = False):
        self.fn, self.anchor, self.ops, self.pool, self.ctype, self.wcet = fn, anchor, ops, pool, ctype, wcet
        self.param_names = {id(p): f"p{i}" for i, p in enumerate(fn.params)}
        self.macro_modules = [template("expr/elemwise.c.j2").module, template("expr/qnn.c.j2").module]

    def macro(self, name: str):
        for module in self.macro_modules:
            if hasattr(module, name):
                return getattr(module, name)
        raise AssertionError(f"no C expression macro '{name}' in expr/elemwise.c.j2 or expr/qnn.c.j2")

    def attrs_for(self, op: Call, macro) -> dict:
        """Attributes as the macro sees them: arrays become const array names, plus ``dtype`` (the
        op's output dtype) and ``in_dtype`` (its first operand's) when the macro takes them, and ``wcet`` under --wcet (``CompileOptions.wcet``)."""
        attrs = {k: (self.pool.ref(np.asarray(v), key=("attr", id(op), k)) if isinstance(v, np.ndarray) else v)
                 for k, v in op.attrs.items()}
        if "dtype" in macro.arguments:
            attrs["dtype"] = op.ty.dtype
        if "in_dtype" in macro.arguments:
            attrs["in_dtype"] = op.args[0].ty.dtype
        if "wcet" in macro.arguments and self.wcet:
            attrs["wcet"] = True
        return attrs

    def operand(self, e, out_shape, idx, values) -> str:
        if id(e) in values:
            return values[id(e)]
        if isinstance(e, Constant):
            if e.value.size == 1:
                return c_literal(e.value.reshape(()).item(), e.ty.dtype)
            return f"{self.pool.ref(e)}[{broadcast_index(e.ty.shape, out_shape, idx)}]"
        if isinstance(e, Var):
            return f"{self.param_names[id(e)]}[{broadcast_index(e.ty.shape, out_shape, idx)}]"
        raise AssertionError(f"unexpected operand {e}")

    def code(self, idx: list[str], acc: str = "acc") -> tuple[list[str], str]:
        """C lines computing the epilogue at output index ``idx``, and the name of the result."""
        out_shape = self.fn.body.ty.shape
        values = {id(self.anchor): acc} if self.anchor is not None else {}
        lines = []
        for i, op in enumerate(self.ops):
            args = [self.operand(a, out_shape, idx, values) for a in op.args]
            macro = self.macro(get_op(op.op).c_expr)
            expr = macro(*args, **self.attrs_for(op, macro))
            var = f"v{i}"
            lines.append(f"const {op.ty.ctype} {var} = {expr.strip()};")
            values[id(op)] = var
        if not self.ops:
            if self.anchor is None:  # copy kernel (e.g. the only op was a view of a param)
                return [], self.operand(self.fn.body, out_shape, idx, values)
            return [], acc
        return lines, values[id(self.ops[-1])]


@dataclass
class LowerCtx:
    """Everything a lowering gets beside the group ``fn`` (one signature, ``lower(fn, ctx) -> Kernel``):

    - ``options``: the CompileOptions (target, variants, ``wcet``, rounding, ...);
    - ``pool``: the constant pool; ``name``: the kernel's C name;
    - ``mode``: the strategy mode it runs in (strategy.MODES); ``order``: the pixel order of
      ``pixel_buffer``;
    - ``knobs``: the group's lowering knobs (tuning records; ``lower.group_knobs`` lists them); a family
      reads them with ``knob`` and records the values it takes with ``offer`` (filled into ``offers``);
    - ``slice``: step fission's request (``poly.slices.SliceRequest``) or None: every loop nest goes
      through ``loops_to_c`` / ``schedule_to_c`` here, which pass it on;
    - ``param_names``: renames the group's parameters in its epilogue (a horizontal group's branch).
    """

    options: object
    pool: ConstPool
    name: str
    mode: str = "normal"
    order: str | None = None
    knobs: dict = field(default_factory=dict)
    offers: dict = field(default_factory=dict)
    slice: object = None
    param_names: dict | None = None

    def epilogue(self, fn: Function) -> Epilogue:
        """A fresh Epilogue of ``fn`` (a lowering may rewrite its ops, e.g. fold an offset into the bias)."""
        anchor, ops = split_group(fn)
        epi = Epilogue(fn, anchor, ops, self.pool, fn.body.ty.ctype, wcet=self.options.wcet)
        if self.param_names is not None:
            epi.param_names = self.param_names
        return epi

    def unpack(self, fn: Function):
        """(anchor, a fresh epilogue, pool, name): what an anchor lowering starts from."""
        anchor, _ = split_group(fn)
        return anchor, self.epilogue(fn), self.pool, self.name

    def knob(self, name: str, default=None):
        """One lowering knob of the group (``lower.group_knobs``), or ``default``."""
        return self.knobs.get(name, default)

    def offer(self, name: str, values) -> None:
        """The lowering takes knob ``name`` with these ``values`` (the first: its default); ``tune.space``
        proposes the others. A knob or value ``options.KNOBS`` does not declare is a lowering bug."""
        knob = KNOBS.get(name)
        assert knob is not None and knob.scope == "kernel", f"offer of an undeclared kernel knob {name!r}"
        assert knob.values is None or set(values) <= set(knob.values), f"{name}: {values} not in {knob.values}"
        self.offers[name] = tuple(values)

    @property
    def widened(self) -> bool:
        """Whether the group's SMLAD kernels read int16 pre-widened weights (``weights: int16``)."""
        return self.knob("weights", "int8") == "int16"

    def loops_to_c(self, statements, indent: int = 2) -> tuple[str, str]:
        """``poly.loops_to_c`` with this lowering's slice request."""
        return loops_to_c(statements, indent, self.slice)

    def schedule_to_c(self, schedule, bodies: dict) -> tuple[str, str]:
        """``poly.codegen.schedule_to_c`` with this lowering's slice request."""
        return schedule_to_c(schedule, bodies, slice=self.slice)
