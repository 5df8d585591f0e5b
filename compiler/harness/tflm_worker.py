"""Run one .tflite model in TFLite Micro, in a process of its own (used by harness/oracles.py).

    python tflm_worker.py MODEL.tflite ARENA_BYTES INPUTS.npz OUTPUTS.npz N_OUTPUTS [N_FRAMES]

INPUTS.npz holds ``x0, x1, ...`` in input order; the N_OUTPUTS outputs are written as ``y0, y1, ...``.
With N_FRAMES, every ``x<i>`` holds N_FRAMES consecutive frames along a new first axis and one
interpreter invokes them in order, keeping its variables (resource variables, variable tensors)
from frame to frame as a streaming firmware does; ``y<i>`` stacks the frames' outputs.
A TFLM arena that is too small makes the interpreter print ``Failed to allocate ...`` and fail (or
crash in its tail allocator): the parent tells that from any other refusal by the exit status and
stderr, which is why this runs in a child process. Needs only numpy and tflite-micro.
"""
import sys

import numpy as np


def main(model: str, arena: str, inputs: str, outputs: str, n_outputs: str, n_frames: str = "") -> int:
    import tflite_micro
    it = tflite_micro.runtime.Interpreter.from_file(model, arena_size=int(arena))
    data = np.load(inputs)
    xs = [data[f"x{i}"] for i in range(len(data.files))]
    frames = [[x[k] for x in xs] for k in range(int(n_frames))] if n_frames else [xs]
    ys = []
    for frame in frames:
        for i, x in enumerate(frame):
            it.set_input(np.ascontiguousarray(x), i)
        it.invoke()
        ys.append([np.array(it.get_output(i)) for i in range(int(n_outputs))])
    if n_frames:
        np.savez(outputs, **{f"y{i}": np.stack([y[i] for y in ys]) for i in range(int(n_outputs))})
    else:
        np.savez(outputs, **{f"y{i}": y for i, y in enumerate(ys[0])})
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:7]))
