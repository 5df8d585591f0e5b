"""Run one .tflite model in TFLite Micro, in a process of its own (used by harness/oracles.py).

    python tflm_worker.py MODEL.tflite ARENA_BYTES INPUTS.npz OUTPUTS.npz N_OUTPUTS

INPUTS.npz holds ``x0, x1, ...`` in input order; the N_OUTPUTS outputs are written as ``y0, y1, ...``.
A TFLM arena that is too small makes the interpreter print ``Failed to allocate ...`` and fail (or
crash in its tail allocator): the parent tells that from any other refusal by the exit status and
stderr, which is why this runs in a child process. Needs only numpy and tflite-micro.
"""
import sys

import numpy as np


def main(model: str, arena: str, inputs: str, outputs: str, n_outputs: str) -> int:
    import tflite_micro
    it = tflite_micro.runtime.Interpreter.from_file(model, arena_size=int(arena))
    data = np.load(inputs)
    for i in range(len(data.files)):
        it.set_input(np.ascontiguousarray(data[f"x{i}"]), i)
    it.invoke()
    np.savez(outputs, **{f"y{i}": it.get_output(i) for i in range(int(n_outputs))})
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:6]))
