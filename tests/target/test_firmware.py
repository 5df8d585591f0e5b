"""examples/firmware: a bare-metal app embedding the generated model (named sections, the .mk and
the CMake fragment), built and run under qemu-system-arm on the mps2-an386."""
import os
import re
import subprocess
import sys

import numpy as np

import tinyfuse
from tinyfuse.targets import get_target
from tests.conftest import ROOT, assert_close_to, ort_run
from tests.target.conftest import require_tools
from tests.builders import build_dscnn

FIRMWARE = ROOT / "examples" / "firmware"


def _pattern_input(shape):
    n = int(np.prod(shape))
    return np.array([((i * 37) % 11) / 5.0 - 1.0 for i in range(n)], np.float32).reshape(shape)


def _scores(text: str) -> np.ndarray:
    line = re.search(r"^scores:((?: [0-9a-f]{8})+)$", text, re.M)
    assert line, text
    return np.array([int(h, 16) for h in line.group(1).split()], np.uint32).view(np.float32)


def _sections(elf) -> str:
    return subprocess.run(["arm-none-eabi-objdump", "-h", str(elf)], capture_output=True, text=True, check=True).stdout


def test_firmware_example_make(tmp_path):
    require_tools("cortex-m4", "make")
    onnx_path = build_dscnn(tmp_path)
    build = tmp_path / "fw"
    env = dict(os.environ)
    proc = subprocess.run(["make", "-C", str(FIRMWARE), f"BUILD={build}", f"ONNX={onnx_path}",
                           f"PYTHON={sys.executable}", "run"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    got = _scores(proc.stdout)
    ref = ort_run(onnx_path, {"input": _pattern_input((1, 1, 49, 10))})[0]
    assert_close_to(got.reshape(ref.shape), ref)
    assert f"class {int(np.argmax(ref))}" in proc.stdout
    heads = {m[0]: (int(m[1], 16), int(m[2], 16))   # name -> (size, address)
             for m in re.findall(r"^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)", _sections(build / "firmware.elf"), re.M)}
    weights = 90416                                   # 20 arrays, each aligned to 32 bytes
    assert weights <= heads[".model_weights"][0] < weights + 20 * 32
    assert heads[".model_arena"] == (64000, 0x20100000)  # the MODEL_RAM bank of firmware.ld


def test_firmware_example_cmake(tmp_path):
    require_tools("cortex-m4", "cmake", "make")
    onnx_path = build_dscnn(tmp_path)
    gen = tmp_path / "gen"
    tinyfuse.compile(onnx_path, target="cortex-m4", name="model", weights_section=".model_weights",
                     arena_section=".model_arena", align=32).write(gen)
    build = tmp_path / "cmake"
    configure = ["cmake", "-S", str(FIRMWARE), "-B", str(build), "-G", "Unix Makefiles",
                 f"-DCMAKE_TOOLCHAIN_FILE={FIRMWARE / 'arm-none-eabi.cmake'}", f"-DMODEL_DIR={gen}",
                 "-DCMAKE_BUILD_TYPE=Release"]
    for cmd in (configure, ["cmake", "--build", str(build)]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    board = get_target("cortex-m4").board
    proc = subprocess.run([*board.qemu, "-semihosting-config", "enable=on,target=native", "-kernel",
                           str(build / "firmware.elf")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    ref = ort_run(onnx_path, {"input": _pattern_input((1, 1, 49, 10))})[0]
    assert_close_to(_scores(proc.stderr).reshape(ref.shape), ref)   # semihosting text goes to qemu's stderr
    assert ".model_weights" in _sections(build / "firmware.elf")

