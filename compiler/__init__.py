"""tinyfuse: compile ONNX models to fused, dependency-free C for microcontrollers and hosts.

Python API::

    import tinyfuse
    result = tinyfuse.compile("model.onnx", target="host")   # -> CompileResult (sources + plan)
    result.write("out/")
"""
from ._version import __version__ as __version__
from .errors import TinyfuseError as TinyfuseError


def compile(model, target="host", **options):  # noqa: A001  (the natural name for the API)
    """Compile an ONNX model (path or ModelProto); see :func:`tinyfuse.driver.compile_model`."""
    from .driver import compile_model
    return compile_model(model, target=target, **options)
