"""Model importers: ONNX (``frontend/onnx/``) and TFLite (``frontend/tflite/``, imported on use: it needs the
``tflite`` package); ``detect`` tells them apart by content."""
from .onnx.reader import from_onnx, load_onnx

__all__ = ["from_onnx", "load_onnx"]
