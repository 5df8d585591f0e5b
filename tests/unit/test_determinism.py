"""Determinism: the same model compiled twice, in two processes with different hash seeds, gives
byte-identical files. (Outputs independent of the arena's initial contents, which needs gcc:
tests/c/test_models.py.)"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from tinyfuse.driver import compile_model
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
