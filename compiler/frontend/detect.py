"""Which importer reads a model: decided by the file's content, not its name.

A TFLite model is a FlatBuffer whose file identifier ``TFL3`` sits at bytes 4..8 (the
``file_identifier`` of tensorflow/lite/schema/schema.fbs); an ONNX model is a protobuf ``ModelProto``,
which has no magic number, so anything that is not TFLite is read as ONNX (and a damaged file gets
the ONNX importer's error, unless the name ends in ``.tflite``, in any case). ``K.TFLITE``,
``model.bin`` and ``model.onnx`` holding a flatbuffer are all recognised.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import TinyfuseError
from ..userdir import input_file

TFLITE_IDENTIFIER = b"TFL3"


def model_format(model) -> str:
    """``'tflite'`` or ``'onnx'`` for ``model``: a path (str/Path), the file's bytes, or an
    ``onnx.ModelProto`` (always ``'onnx'``). Content with ``TFL3`` at bytes 4..8 is TFLite whatever
    its name; a path with a ``.tflite`` suffix (any case) that is missing, unreadable or lacks the
    identifier goes to the TFLite importer too, which names the problem; anything else is ONNX."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        head = bytes(model[:8])
    elif isinstance(model, (str, Path)):
        try:            # a regular file only: a pipe or device (/dev/zero) goes to the importer, which refuses it
            with open(input_file(model), "rb") as f:
                head = f.read(8)
        except (OSError, TinyfuseError):
            head = b""
        if head[4:8] != TFLITE_IDENTIFIER and Path(model).suffix.lower() == ".tflite":
            return "tflite"     # unreadable, truncated or damaged: the TFLite importer names the problem
    else:
        return "onnx"
    return "tflite" if head[4:8] == TFLITE_IDENTIFIER else "onnx"
