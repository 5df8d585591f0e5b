"""Model importers: ONNX (``onnx.py``) and TFLite (``tflite.py``, imported on use: it needs the ``tflite`` package)."""
from .onnx import from_onnx, load_onnx

__all__ = ["from_onnx", "load_onnx"]
