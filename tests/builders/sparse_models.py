"""Pruned int8 one-op models for the sparse kernels (lower/conv/sparse.py): a tflm_cases Case (dense
random weights) with its .tflite weights pruned byte for byte by examples/prune_models.py, one output
channel zeroed entirely (a bias-only channel), and TFLM run again on the pruned model: the oracle."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from tests.builders.tflm_cases import tflm_oneop

ROOT = Path(__file__).resolve().parents[2]


def prune_module():
    """examples/prune_models.py as a module (the examples folder is no package)."""
    spec = importlib.util.spec_from_file_location("prune_models", ROOT / "examples" / "prune_models.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def pruned_tflite(data: bytes, level: str, zero_channel: int | None = 0) -> bytes:
    """``data`` with every conv/depthwise/FC weight tensor pruned at ``level`` ('50', '75', '90',
    '2:4') and output channel ``zero_channel`` (None: none) all zero."""
    pm = prune_module()
    out, _, _ = pm.prune_tflite(data, level)
    if zero_channel is None:
        return out
    buf = bytearray(out)
    for kind, shape, start, length in pm._weight_buffers(out):
        w = np.frombuffer(out, np.int8, length, start).reshape(shape).copy()
        if kind == "dw":
            w[..., zero_channel] = 0
        else:
            w[zero_channel] = 0
        buf[start:start + length] = w.tobytes()
    return bytes(buf)


def pruned_case(case, level: str = "75", zero_channel: int | None = 0) -> tuple[bytes, list, np.ndarray]:
    """(pruned .tflite bytes, inputs, TFLM's output on them) of a tflm_cases Case."""
    model = pruned_tflite(case.tflm, level, zero_channel)
    (want,) = tflm_oneop().run(model, list(case.inputs))
    return model, list(case.inputs), want


__all__ = ["prune_module", "pruned_case", "pruned_tflite"]
