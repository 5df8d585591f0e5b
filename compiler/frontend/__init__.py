"""Model importers: ONNX (``onnx.py``); TFLite comes later."""
from .onnx import from_onnx, load_onnx

__all__ = ["from_onnx", "load_onnx"]
