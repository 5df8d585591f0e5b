"""Run one .tflite model in TFLite Micro, in a process of its own (used by harness/oracles.py).

    python tflm_worker.py MODEL.tflite ARENA_BYTES INPUTS.npz OUTPUTS.npz N_OUTPUTS [N_FRAMES | tensors:I,J,...]

INPUTS.npz holds ``x0, x1, ...`` in input order; the N_OUTPUTS outputs are written as ``y0, y1, ...``.
With N_FRAMES, every ``x<i>`` holds N_FRAMES consecutive frames along a new first axis and one
interpreter invokes them in order, keeping its variables (resource variables, variable tensors)
from frame to frame as a streaming firmware does; ``y<i>`` stacks the frames' outputs.
With ``tensors:I,J,...`` the interpreter keeps every tensor (kPreserveAllTensors: no arena reuse)
and the values of subgraph 0's tensors I, J, ... after the invocation are written as ``t<I>``, ...
A TFLM arena that is too small makes the interpreter print ``Failed to allocate ...`` and fail (or
crash in its tail allocator): the parent tells that from any other refusal by the exit status and
stderr, which is why this runs in a child process. Needs only numpy and tflite-micro.
"""
import sys

import numpy as np


def main(model: str, arena: str, inputs: str, outputs: str, n_outputs: str, n_frames: str = "") -> int:
    import tflite_micro
    if n_frames.startswith("tensors:"):
        return _tensors(model, int(arena), inputs, outputs, int(n_outputs), n_frames[len("tensors:"):])
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


def _tensors(model: str, arena: int, inputs: str, outputs: str, n_outputs: int, indices: str) -> int:
    from tflite_micro import runtime
    it = runtime.Interpreter.from_file(model, arena_size=arena,
                                       intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    data = np.load(inputs)
    for i in range(len(data.files)):
        it.set_input(np.ascontiguousarray(data[f"x{i}"]), i)
    it.invoke()
    ys = {f"y{i}": np.array(it.get_output(i)) for i in range(n_outputs)}
    ts = {f"t{k}": np.array(it.GetTensor(int(k), 0)["tensor_data"]) for k in indices.split(",") if k}
    np.savez(outputs, **ys, **ts)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:7]))
