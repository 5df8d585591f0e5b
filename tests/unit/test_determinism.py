"""Determinism: the same model compiled twice, in two processes with different hash seeds, gives
byte-identical files; and outputs do not depend on the arena's initial contents (0x00 vs 0xA5; the
sanitizer tests repeat this for every real model)."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness import build_host, run_host
from tests.conftest import ROOT, shared_or_skip

HASH_FILES = """
import hashlib, json, sys, warnings
warnings.simplefilter("ignore")
from tinyfuse.driver import compile_model
r = compile_model(sys.argv[1], target=sys.argv[2])
print(json.dumps({k: hashlib.sha256(v.encode()).hexdigest() for k, v in sorted(r.files.items())}))
"""


def file_hashes(path, target: str, seed: int) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    out = subprocess.run([sys.executable, "-c", HASH_FILES, str(path), target], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("model,target", [("demo", "host"), ("mobilenetv2_035_96_qdq", "host"),
                                          ("kws_ref_model", "cortex-m4")])
def test_same_model_same_bytes(tmp_path, model, target):
    if model == "demo":
        from tests.builders import build_dscnn
        path = build_dscnn(tmp_path)
    else:
        path = shared_or_skip("models", "onnx", f"{model}.onnx")
    a, b = file_hashes(path, target, 1), file_hashes(path, target, 2)
    assert a == b, [k for k in a if a[k] != b.get(k)]
    same_process = {k: hashlib.sha256(v.encode()).hexdigest() for k, v in compile_model(path, target=target).files.items()}
    assert same_process == a


@pytest.mark.parametrize("model", ["kws_ref_model", "pretrainedResnet"])
def test_outputs_do_not_depend_on_arena_contents(tmp_path, model):
    path = shared_or_skip("models", "onnx", f"{model}.onnx")
    x = np.load(path.with_suffix(".io.npz"))["input"]
    r = compile_model(path)
    zero = run_host(build_host(r, tmp_path / "zero", arena_fill=0x00), r, [x])[0]
    a5 = run_host(build_host(r, tmp_path / "a5", arena_fill=0xA5), r, [x])[0]
    assert zero.dtype == a5.dtype and np.array_equal(zero, a5)
