"""Size and lint guard (issue 12): ruff passes with the project's config (pyproject.toml [tool.ruff]);
no Python file of the compiler, the tests or the benchmarks exceeds 500 lines and no function of the
compiler 60 (tinygrad's sz.py idea, STYLE.md)."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, skip_or_fail

MAX_FILE_LINES, MAX_FUNCTION_LINES = 500, 60


def _sources(*dirs: str):
    return sorted(p for d in dirs or ("compiler",) for p in (ROOT / d).rglob("*.py"))


def test_no_file_over_500_lines():
    big = {str(p.relative_to(ROOT)): n for p in _sources("compiler", "tests", "benchmarks")
           if (n := len(p.read_text().splitlines())) > MAX_FILE_LINES}
    assert big == {}


def test_no_function_over_60_lines():
    long = {}
    for p in _sources():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{p.relative_to(ROOT)}:{node.name}"] = n
    assert long == {}


def test_ruff_clean():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        skip_or_fail("ruff is not installed (the test extra has it: pip install -e '.[test]')")
    proc = subprocess.run([ruff, "check", "--no-cache", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
