"""``tinyfuse project DIR --model M --target T``: a self-contained CMake project around a compiled model
that builds and runs as written: on a Cortex-M target with arm-none-eabi-gcc, under QEMU on the board
tinyfuse's own harness uses (``targets.Board``); on the host with the system C compiler.

DIR holds (``project_files``)::

    CMakeLists.txt            the application <name>_app and a `run` target (QEMU, or the host binary)
    cmake/arm-none-eabi.cmake the toolchain file: the target's compiler and flags (Cortex-M only)
    main.c                    feeds the example input, runs <name>_run_frame, prints status, outputs, cycles
    example_input.h           the example input as bytes (--input FILE, else seeded random)
    model/                    the compile output (<name>.h/.c/_weights.c/.cmake/.mk, metadata.json, runtime headers)
    board/                    start-up code, linker scripts and semihosting header, copied verbatim from
                              runtime_c (each starts with its SPDX license header) (Cortex-M only)
    README.md                 the build and run commands, what each file is
    tinyfuse_project.json     what tinyfuse wrote (files.py: a file of the user's is never replaced)
"""
from __future__ import annotations

import numpy as np

from .._version import __version__
from ..codegen.output import manifest_with_files_by_model, previous_files
from ..codegen.templates import template
from ..errors import TinyfuseError
from ..targets import BOARDS_DIR, RUNTIME_DIR, Target, check_fits
from .files import write_tree

SEMIHOST = RUNTIME_DIR / "include" / "tinyfuse" / "semihost.h"
CORTEX_M_STARTUP = "cortex_m/startup_cm.c"


def _c_bytes(arr: np.ndarray, per_line: int = 16) -> str:
    hexes = [f"0x{b:02x}" for b in arr.tobytes()]
    return ",\n  ".join(", ".join(hexes[i:i + per_line]) for i in range(0, len(hexes), per_line)) or "0"


def project_board(result, target: Target):
    """The board of ``target`` the project is for: the first the model fits (RAM: arena + state + I/O
    buffers; flash: weights), as the harness tries them. None for the host. TinyfuseError for a target
    the project does not support (not Cortex-M) or a model that fits no board."""
    if target.is_host:
        return None
    if not all(CORTEX_M_STARTUP in b.sources for b in target.boards):
        raise TinyfuseError(f"project: --target {target.name} is not supported (host and the Cortex-M targets are)")
    check_fits(result, target)
    ram = result.arena_bytes + result.io_bytes + result.state_bytes
    return next((b for b in target.boards if ram <= b.ram_bytes and result.weights_bytes <= b.flash_bytes),
                target.boards[-1])


def project_commands(target: Target, directory: str = ".") -> list[str]:
    """The shell commands that build the project in ``directory`` and run it (README, CMakeLists)."""
    build = "build" if directory == "." else f"{directory}/build"
    return [f"cmake -S {directory} -B {build}", f"cmake --build {build}", f"cmake --build {build} --target run"]


def _board_files(board) -> dict[str, bytes]:
    """board/<file> -> bytes: the start-up sources, the linker script (as board.ld), the scripts it
    INCLUDEs (the board's lib_dirs) and the semihosting header, verbatim."""
    files = {f"board/{s.rsplit('/', 1)[-1]}": (BOARDS_DIR / s).read_bytes() for s in board.sources}
    files["board/board.ld"] = (BOARDS_DIR / board.linker_script).read_bytes()
    for d in board.lib_dirs:
        files |= {f"board/{p.name}": p.read_bytes() for p in sorted((BOARDS_DIR / d).glob("*.ld"))}
    files["board/tinyfuse/semihost.h"] = SEMIHOST.read_bytes()
    return files


def project_files(result, target: Target, inputs: list[np.ndarray], model: str, source: str) -> dict[str, bytes]:
    """Relative path -> bytes of every file of the project of ``result`` (compiled for ``target``) that
    feeds ``inputs`` (one array per model input, cast to its dtype); ``model`` names the model file and
    ``source`` where the input came from (README, example_input.h)."""
    board = project_board(result, target)
    name = result.name
    ctx = dict(name=name, NAME=name.upper(), version=__version__, target=target.name, board=board, host=board is None,
               inputs=result.inputs, outputs=result.outputs, states=result.states, io_caller=result.io_caller,
               commands=project_commands(target), model=model, source=source,
               qemu=board.qemu if board else (), cc=target.cc, cflags=target.cflags, ldflags=target.ldflags,
               input_data=[_c_bytes(np.ascontiguousarray(np.asarray(x).astype(t.dtype).reshape(t.shape)))
                           for t, x in zip(result.inputs, inputs)])
    files = {f"model/{f}": body for f, body in manifest_with_files_by_model(result.files, name).items()}
    files |= {"CMakeLists.txt": template("project/CMakeLists.txt.j2").render(**ctx),
              "main.c": template("project/main.c.j2").render(**ctx),
              "example_input.h": template("project/example_input.h.j2").render(**ctx),
              "README.md": template("project/README.md.j2").render(**ctx)}
    if board is not None:
        files["cmake/arm-none-eabi.cmake"] = template("project/toolchain.cmake.j2").render(**ctx)
    out = {rel: body.encode() for rel, body in files.items()}
    if board is not None:
        out |= _board_files(board)
    return dict(sorted(out.items()))


def write_project(result, target: Target, directory, inputs: list[np.ndarray], model: str, source: str):
    """Write the project into ``directory`` (files.write_tree: created if missing, a user's file never
    replaced). Returns (directory as a Path, the files written)."""
    files = project_files(result, target, inputs, model, source)
    info = {"tinyfuse": __version__, "model": result.name, "target": target.name}
    def model_files(outdir):       # a later `tinyfuse compile -o DIR/model` rewrote them: still tinyfuse's
        return {f"model/{f}" for f in previous_files(outdir / "model")}
    return write_tree(directory, files, info, model_files), files
