#!/usr/bin/env python3
"""What a newcomer follows for one int8 Conv: the compiler modules whose functions run while one QDQ
Conv (8x8x16 -> 16 channels, 3x3, ReLU; onnx.helper, seeded) is compiled for a target, the templates
rendered and the C headers emitted; and how many modules of the package there are.

    python benchmarks/follow_conv.py [--target cortex-m4]          # this checkout
    PYTHONPATH=OLD/.shim:OLD python benchmarks/follow_conv.py      # another checkout's compiler

Counting is by call tracing (sys.setprofile): a module counts when one of its functions is called
during compile_model; imports alone do not count.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def qdq_conv() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (16, 16, 3, 3)).astype(np.int8)
    b = rng.integers(-500, 500, 16).astype(np.int32)
    init = [numpy_helper.from_array(w, "w_q"), numpy_helper.from_array(np.full(16, 0.01, np.float32), "w_s"),
            numpy_helper.from_array(np.zeros(16, np.int8), "w_z"), numpy_helper.from_array(b, "b_q"),
            numpy_helper.from_array(np.full(16, 0.0005, np.float32), "b_s"), numpy_helper.from_array(np.zeros(16, np.int32), "b_z"),
            numpy_helper.from_array(np.float32(0.05), "x_s"), numpy_helper.from_array(np.int8(-3), "x_z"),
            numpy_helper.from_array(np.float32(0.1), "y_s"), numpy_helper.from_array(np.int8(-128), "y_z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "x_s", "x_z"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w_q", "w_s", "w_z"], ["wd"], axis=0),
             helper.make_node("DequantizeLinear", ["b_q", "b_s", "b_z"], ["bd"], axis=0),
             helper.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "y_s", "y_z"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "y_s", "y_z"], ["y"])]
    g = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8, 8])], init)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="cortex-m4")
    a = ap.parse_args(argv)
    import tinyfuse
    from tinyfuse.driver import compile_model
    root = Path(tinyfuse.__file__).resolve().parent
    import jinja2
    rendered = set()
    get = jinja2.Environment.get_template

    def spy(self, name, *args, **kw):
        rendered.add(str(name))
        return get(self, name, *args, **kw)
    jinja2.Environment.get_template = spy
    compile_model(qdq_conv(), target=a.target)        # warm: lazy imports and caches do not count as reading
    rendered.clear()
    seen, files = set(), {}

    def prof(frame, event, _arg):
        if event == "call":
            f = frame.f_code.co_filename
            if f not in files:
                r = Path(f).resolve()
                files[f] = str(r.relative_to(root)) if r.is_relative_to(root) else None
            if files[f]:
                seen.add(files[f])
    sys.setprofile(prof)
    result = compile_model(qdq_conv(), target=a.target)
    sys.setprofile(None)
    modules = sorted(str(p.relative_to(root)) for p in root.rglob("*.py"))
    headers = sorted(n for n in result.files if n.endswith(".h"))
    print(f"package modules: {len(modules)}")
    print(f"modules run while compiling one int8 Conv for {a.target}: {len(seen)}")
    print(f"templates rendered: {len(rendered)} ({', '.join(sorted(rendered))})")
    print(f"headers emitted: {len(headers)} ({', '.join(headers)})")
    for m in sorted(seen):
        print(f"  {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
