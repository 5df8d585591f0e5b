"""One-op resize models for tests/c/test_resize.py: TFLite RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR
(float32 or int8, built with tflite-micro's model editor, run by TFLM) and ONNX Resize (float, and
the QDQ int8 form DQ → Resize → Q)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from tests.builders.tflm_cases import tflm_oneop


def tflite_resize(kind: str, x_shape, size, align_corners=False, half_pixel_centers=False, q=None,
                  out_q=None) -> bytes:
    """RESIZE_BILINEAR (kind 'bilinear') or RESIZE_NEAREST_NEIGHBOR ('nearest') over NHWC x_shape to
    size (OH, OW); q = (scale, zero_point) makes input and output int8 with that quantization (TFLM
    resizes the int8 bytes without rescaling, even when ``out_q`` gives the output another), None float32."""
    oneop = tflm_oneop()
    me, S = oneop.me, oneop.S
    n, _, _, c = (int(d) for d in x_shape)

    def act(shape, name, tq):
        if tq is None:
            return me.Tensor(shape=tuple(shape), dtype=S.TensorType.FLOAT32, name=name)
        return me.Tensor(shape=tuple(shape), dtype=S.TensorType.INT8, name=name,
                         quantization=me.Quantization(float(tq[0]), int(tq[1])))

    x = act(tuple(int(d) for d in x_shape), "x", q)
    y = act((n, int(size[0]), int(size[1]), c), "y", out_q or q)
    sz = me.Tensor(shape=(2,), dtype=S.TensorType.INT32, data=np.array(size, np.int32), name="size")
    opcode, options = (("RESIZE_BILINEAR", "ResizeBilinearOptions") if kind == "bilinear"
                       else ("RESIZE_NEAREST_NEIGHBOR", "ResizeNearestNeighborOptions"))
    op = me.Operator(opcode=getattr(S.BuiltinOperator, opcode), inputs=[x, sz], outputs=[y])
    op._fb.builtinOptionsType = getattr(S.BuiltinOptions, options)
    op._fb.builtinOptions = getattr(S, options + "T")()
    op._fb.builtinOptions.alignCorners = bool(align_corners)
    op._fb.builtinOptions.halfPixelCenters = bool(half_pixel_centers)
    model = me.Model(description="resize_oneop")
    model.add_subgraph(tensors=[x, sz, y], operators=[op], outputs=[y], inputs=[x])
    return bytes(model.build())


def run_tflm(model: bytes, x: np.ndarray, arena_size: int = 1 << 20) -> np.ndarray:
    """TFLM's output for one input."""
    return tflm_oneop().run(model, [x], arena_size=arena_size)[0]


def onnx_resize(x_shape, out_size=None, scales=None, opset=19, q=None, out_q=None, **attrs) -> onnx.ModelProto:
    """Resize over NCHW x_shape with ``sizes`` (full 4-D) or ``scales`` (4 floats), attributes as
    given (mode, coordinate_transformation_mode, nearest_mode ...). q = (scale, zp): int8 QDQ form,
    input int8 with q, output quantized with out_q (default q)."""
    inits, ins = [], ["X" if q is None else "Xf", ""]
    if opset >= 11:
        ins = ins[:1] + ["roi", "scales", "sizes"]
        inits.append(helper.make_tensor("roi", TensorProto.FLOAT, [0], []))
        if scales is not None:
            inits.append(helper.make_tensor("scales", TensorProto.FLOAT, [4], list(scales)))
            ins = ins[:3]
        else:
            inits.append(helper.make_tensor("sizes", TensorProto.INT64, [4], list(out_size)))
            if opset >= 13:
                ins[2] = ""
            else:                                        # Resize-11: scales is required, empty with sizes
                inits.append(helper.make_tensor("scales", TensorProto.FLOAT, [0], []))
    else:
        inits.append(helper.make_tensor("scales", TensorProto.FLOAT, [4], list(scales)))
        ins = ins[:1] + ["scales"]
    nodes = [helper.make_node("Resize", ins, ["Y" if q is None else "Yf"], **attrs)]
    dt = TensorProto.FLOAT
    if q is not None:
        out_q = out_q or q
        inits += [helper.make_tensor("xs", dt, [], [q[0]]), helper.make_tensor("xz", TensorProto.INT8, [], [q[1]]),
                  helper.make_tensor("ys", dt, [], [out_q[0]]),
                  helper.make_tensor("yz", TensorProto.INT8, [], [out_q[1]])]
        nodes = [helper.make_node("DequantizeLinear", ["X", "xs", "xz"], ["Xf"]), *nodes,
                 helper.make_node("QuantizeLinear", ["Yf", "ys", "yz"], ["Y"])]
        dt = TensorProto.INT8
    graph = helper.make_graph(nodes, "resize", [helper.make_tensor_value_info("X", dt, list(x_shape))],
                              [helper.make_tensor_value_info("Y", dt, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def onnx_resize_sweep(n_in: int, outs, opset: int, mode: str = "nearest", scales: bool = False,
                      roi=(0.0, 1.0), **attrs) -> onnx.ModelProto:
    """One float model of len(outs) Resize nodes over X [1, 1, n_in, n_in]: node k (output ``Y<k>``)
    resizes H and W to outs[k] (``sizes``) or by outs[k] (``scales``, floats); ``roi`` the (start,
    end) of H and W for tf_crop_and_resize."""
    inits = [helper.make_tensor("roi", TensorProto.FLOAT, [8], [0, 0, roi[0], roi[0], 1, 1, roi[1], roi[1]]),
             helper.make_tensor("none", TensorProto.FLOAT, [0], [])]
    nodes, outputs = [], []
    for k, o in enumerate(outs):
        if scales:
            inits.append(helper.make_tensor(f"s{k}", TensorProto.FLOAT, [4], [1, 1, float(o), float(o)]))
            ins = ["X", "roi", f"s{k}"]
        else:
            inits.append(helper.make_tensor(f"z{k}", TensorProto.INT64, [4], [1, 1, int(o), int(o)]))
            ins = ["X", "roi", "none", f"z{k}"]
        nodes.append(helper.make_node("Resize", ins, [f"Y{k}"], mode=mode, **attrs))
        outputs.append(helper.make_tensor_value_info(f"Y{k}", TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "resize_sweep", [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                                                    [1, 1, n_in, n_in])],
                              outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model
