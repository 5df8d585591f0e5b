"""The ONNX frontend: ``reader`` (load, check, shape-infer, node by node through the converters;
``from_onnx``), ``registry`` (what a converter sees: Node, operand helpers; ``@converter``), and one
module per op family whose converters register themselves (ops, misc, pool, resize, convt, conv3d,
rnn, quant, quant_axis, quant_ms); ``stateful_io`` (explicit state inputs/outputs). Importing the
package imports every module (pkgutil), so a new converter module needs no list."""
import importlib
import pkgutil

for _m in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_m.name}")

from .reader import from_onnx, load_onnx  # noqa: E402

__all__ = ["from_onnx", "load_onnx"]
