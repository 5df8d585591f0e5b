"""fold_batchnorm: fold inference BatchNorm into the preceding conv2d / matmul.

With s = gamma / sqrt(var + eps) per output channel (ONNX BatchNormalization-15):

    bn(conv(x, W) + b)  →  conv(x, W·s) + ((b − mean)·s + beta)      # W scaled along O
    bn(matmul(x, W) + b) →  matmul(x, W·s) + ((b − mean)·s + beta)    # W scaled along N

The producer (and its bias add) must have no other user. A BatchNorm that cannot be folded becomes
``x·s + (beta − mean·s)``: two broadcast ops that fuse into the producer's epilogue.
"""
import numpy as np

from ..ir import Call, Constant, IRModule, call, rewrite, users


def _is(e, op):
    return isinstance(e, Call) and e.op == op


def fold_batchnorm(mod: IRModule) -> IRModule:
    uses = users(mod.main.body)
    single = lambda e: len(uses.get(id(e), [])) == 1  # noqa: E731

    def visit(node, orig):
        if not _is(node, "nn.batch_norm"):
            return None
        x, gamma, beta, mean, var = node.args
        if not all(isinstance(p, Constant) for p in node.args[1:]):
            return None
        s = gamma.value.astype(np.float64) / np.sqrt(var.value.astype(np.float64) + node.attrs["epsilon"])
        shift = beta.value - mean.value * s
        dtype = x.ty.dtype
        anchor, bias, ox = x, None, orig.args[0]
        if _is(x, "add") and isinstance(x.args[1], Constant) and single(ox):
            anchor, bias, ox = x.args[0], x.args[1], ox.args[0]
        if (_is(anchor, "nn.conv2d") and anchor.attrs["data_layout"] == "NCHW" and s.size == anchor.ty.shape[1]
                or _is(anchor, "nn.matmul") and s.size == anchor.ty.shape[-1]) \
                and isinstance(anchor.args[1], Constant) and single(ox):
            w = anchor.args[1].value
            ws = w * (s.reshape(-1, 1, 1, 1) if anchor.op == "nn.conv2d" else s.reshape(1, -1))
            new_anchor = call(anchor.op, anchor.args[0], Constant(ws.astype(w.dtype), anchor.args[1].name),
                              span=anchor.span, **anchor.attrs)
            b = shift if bias is None else np.broadcast_to(bias.value, s.shape) * s + shift
            b = b.reshape(s.shape if anchor.op == "nn.conv2d" else (-1,))
            return call("add", new_anchor, Constant(b.astype(dtype)), span=node.span)
        scaled = call("multiply", x, Constant(s.astype(dtype)), span=node.span)
        return call("add", scaled, Constant(shift.astype(dtype)), span=node.span)

    return mod.with_main(rewrite(mod.main, visit))
