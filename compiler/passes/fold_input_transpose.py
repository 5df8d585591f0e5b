"""fold_input_transpose: the layout transpose of an NCHW model input is read through by the convs
that consume it, so no kernel copies the image to NHWC.

A PyTorch model exported to TFLite (litert-torch) has an NCHW input followed by ``TRANSPOSE`` to
NHWC; an ONNX model from PyTorch gets the same transpose from ``convert_layout``. As its own kernel
the transpose holds the image twice (NCHW input + NHWC copy), which is the arena peak of small
CNNs (the 96x96 int8 MobileNetV2: 2 x 27,648 B). After this pass the first conv reads the input
where it lies:

    conv2d(transpose(x, axes=[0, 2, 3, 1]), w, data_layout="NHWC")
        → conv2d(x, w, data_layout="NHWC", input_layout="NCHW")

(``ops/conv.py``: the input is stored NCHW and read as x[n, c, h, w]; computation and output stay
NHWC, so the values are those of the original graph exactly: only the addressing of the reads
changes.) Legal when ``x`` is a model input (not state), the transpose is the NCHW → NHWC one and
every user of the transpose is an NHWC conv or pool the portable kernel lowers: an ``nn.conv2d`` /
``qnn.conv2d`` with ``data_layout`` 'NHWC' whose kernel (``strategy.choose_op``) is portable or the float
FPU kernel (given up for the RAM: it reads NHWC pixel runs too), or an
``nn.max_pool2d`` / ``nn.avg_pool2d`` / ``qnn.avg_pool2d`` with ``layout`` 'NHWC' (``input_layout``
likewise, ``ops/pool.py``). Where a SIMD variant would lower the conv (arm_dsp, arm_mve: their im2col
and in-place pixel buffers read NHWC pixel runs) the transpose kernel stays, a correct fallback; so
it does for any other reader (an element-wise op, a reshape, a model output).
"""
from __future__ import annotations

from ..ir import Call, IRModule, Var, call, rewrite, users
from ..strategy import choose_op

CONVS = ("nn.conv2d", "qnn.conv2d")
POOLS = ("nn.max_pool2d", "nn.avg_pool2d", "qnn.avg_pool2d")     # portable kernels only (lower/pool.py)
NCHW_TO_NHWC = (0, 2, 3, 1)


def _is(e, *ops) -> bool:
    return isinstance(e, Call) and isinstance(e.op, str) and e.op in ops


def _foldable(e, options) -> bool:
    """An NHWC conv or pool whose input is stored in its layout and which the portable kernel lowers
    (or the FPU one, given up: it declines an NCHW input)."""
    if _is(e, *POOLS):
        return e.attrs["layout"] == "NHWC" and e.attrs["input_layout"] is None
    return (_is(e, *CONVS) and e.attrs["data_layout"] == "NHWC" and e.attrs["input_layout"] is None
            and choose_op(e, options).impl.isa in ("ref", "arm_fpu"))


def fold_input_transpose(mod: IRModule, options) -> IRModule:
    """Rewrite every conv or pool reading ``transpose(x, [0, 2, 3, 1])`` of a 4-D model input ``x`` to read
    ``x`` with ``input_layout='NCHW'`` (module doc); the transpose, left without users, vanishes."""
    params = mod.main.params
    inputs = {id(p) for p in params[:len(params) - len(mod.states)]}
    uses = users(mod.main.body)

    def folds(t) -> bool:
        x = t.args[0] if _is(t, "transpose") else None
        return (isinstance(x, Var) and id(x) in inputs and x.ty.ndim == 4
                and tuple(t.attrs["axes"]) == NCHW_TO_NHWC and bool(uses.get(id(t)))
                and all(_foldable(u, options) for u in uses[id(t)]))

    def visit(node, orig):
        if not (_is(orig, *CONVS, *POOLS) and folds(orig.args[0])):
            return None
        t = node.args[0]
        attrs = {**node.attrs, "input_layout": "NCHW"}
        return call(node.op, t.args[0], *node.args[1:], span=node.span, **attrs)

    return mod.with_main(rewrite(mod.main, visit))
