"""Build a `tinyfuse project` directory with the commands its README gives and read what main.c prints."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np


def build_and_run(directory: Path, commands: list[str], timeout: float = 600) -> str:
    """Run ``commands`` (project_commands: configure, build, run) in order; the last one's stdout+stderr
    (QEMU prints semihosting text on stderr). Raises AssertionError with the output when one fails."""
    out = ""
    for cmd in commands:
        proc = subprocess.run(cmd.split(), capture_output=True, text=True, timeout=timeout, cwd=directory.parent)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{out[-4000:]}"
    return out


def printed_outputs(text: str, outputs) -> list[np.ndarray]:
    """The arrays main.c printed for the model outputs ``outputs`` (TensorInfo list): float32 from the
    exact ``output <i> bits:`` line, integers from the ``output <i> "<name>" ...:`` line."""
    arrays = []
    for i, t in enumerate(outputs):
        if t.dtype == "float32":
            bits = re.search(rf"^output {i} bits:(.*)$", text, re.M).group(1).split()
            arr = np.array([int(b, 16) for b in bits], dtype=np.uint32).view(np.float32)
        else:
            values = re.search(rf'^output {i} ".*" {t.dtype} \[.*\]:(.*)$', text, re.M).group(1).split()
            arr = np.array([int(v) for v in values]).astype(t.dtype)
        arrays.append(arr.reshape(t.shape))
    return arrays
