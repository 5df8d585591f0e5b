"""The TFLite frontend: ``reader`` (flatbuffer -> IRModule; ``from_tflite``), ``schema`` (the pure-Python
``tflite`` package), ``registry`` (Tensor, Op, Graph; ``@converter(..., max_version=N)``, ``@effect``),
``weights`` (sparse and float16 weights), ``state`` (resource variables), and one module per op
family whose converters register themselves (ops, int8, misc, resize, convt, rnn, rnn_int8, svdf,
state_ops). Importing the package imports every module (pkgutil), so a new converter module needs no
list."""
import importlib
import pkgutil

for _m in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_m.name}")
