"""The generated .mk and .cmake fragments in a user's own build (gcc, make, cmake): the model's flags (its C
standard) stay on the model's sources, the user's code keeps its own (gnu11, C++), any app target name works."""
from __future__ import annotations

import subprocess

import pytest

from tinyfuse.cli import main
from tests.builders import good_model
from tests.conftest import require_programs


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.onnx"
    path.write_bytes(good_model())
    return path


MAIN_GNU11 = """#include <stdio.h>
#include "kws.h"
static unsigned char arena[KWS_ARENA_SIZE] __attribute__((aligned(16)));
int main(void) {
  int n = 3;
  typeof(n) m = n + 1;          /* GNU C: an error under -std=c99 */
  kws_run(arena);
  printf("ok %d\\n", m);
  return 0;
}
"""
MAKEFILE = """CFLAGS += -std=gnu11 -O2 -Wall -Werror
include gen/kws.mk
CFLAGS += $(KWS_CFLAGS)
LDLIBS += $(KWS_LDLIBS)

app: main.o $(KWS_OBJS)
\t$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
"""


def test_make_fragment_keeps_c99_to_the_models_sources(tmp_path, good, capsys):
    """kws.mk's KWS_CFLAGS carried -std=c99 into the user's CFLAGS: their gnu11 main.c failed. Now the
    fragment's rules compile the model's objects with the user's flags then -std=c99, and `make` still
    builds the user's first target (the include leaves the default goal alone)."""
    require_programs("gcc", "make")
    assert main(["compile", str(good), "--name", "kws", "-o", str(tmp_path / "gen")]) == 0
    (tmp_path / "main.c").write_text(MAIN_GNU11)
    (tmp_path / "Makefile").write_text(MAKEFILE)
    proc = subprocess.run(["make", "-C", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    own = next(line for line in lines if "main.c" in line)
    model = next(line for line in lines if "kws.c" in line)
    assert "-std=c99" not in own and model.split("-std=")[-1].startswith("c99"), proc.stdout
    run = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and run.stdout == "ok 4\n"


MAIN_CPP = """#include <cstdio>
#include "kws.h"
alignas(16) static unsigned char arena[KWS_ARENA_SIZE];
int main() { kws_run(arena); std::printf("ok\\n"); return 0; }
"""


@pytest.mark.parametrize("project", ["cxx_only", "app_named_like_the_model"])
def test_cmake_fragment_builds_in_any_project(tmp_path, good, capsys, project):
    """kws.cmake's `if(NOT TARGET kws)` skipped the library when the app target was named kws (which then
    linked itself), and a project(x CXX) could not compile its C. Now: library kws_model, C enabled by
    the fragment, C99 on its own sources only."""
    require_programs("cmake", "make", "gcc", "g++")
    gen = tmp_path / "gen"
    assert main(["compile", str(good), "--name", "kws", "-o", str(gen)]) == 0
    src = tmp_path / "src"
    src.mkdir()
    if project == "cxx_only":
        (src / "main.cpp").write_text(MAIN_CPP)
        lists = ["project(app CXX)", f"include({gen}/kws.cmake)", "add_executable(app main.cpp)",
                 "target_link_libraries(app PRIVATE kws_model)"]
        exe = "app"
    else:
        (src / "main.c").write_text(MAIN_GNU11)
        lists = ["project(app C)", "set(CMAKE_C_STANDARD 11)", "add_executable(kws main.c)",
                 f"include({gen}/kws.cmake)", f"include({gen}/kws.cmake)", "target_link_libraries(kws PRIVATE kws_model)"]
        exe = "kws"
    (src / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.16)\n" + "\n".join(lists) + "\n")
    build = tmp_path / "build"
    for cmd in (["cmake", "-S", str(src), "-B", str(build)], ["cmake", "--build", str(build)]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run = subprocess.run([str(build / exe)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and run.stdout.startswith("ok"), run.stdout + run.stderr
