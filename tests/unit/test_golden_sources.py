"""Refactoring guard: every model in ../shared/models compiles (host, cortex-m4, cortex-m55) to the
same sources as recorded in tests/golden/sources.json (see tests/golden/sources.py for when and how
to regenerate it). Not a correctness oracle: the other suites compare outputs with onnxruntime/TFLM."""
from __future__ import annotations

import json

import pytest

from tests.conftest import shared_or_skip
from tests.golden.sources import GOLDEN, MODELS, TARGETS, digest, key, model_paths

RECORDED = json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("target", TARGETS)
def test_sources_byte_identical(target):
    shared_or_skip("models")
    paths = model_paths()
    assert len(paths) >= 39, f"expected the 39 models of {MODELS}"
    differ = [key(p, target) for p in paths if digest(p, target) != RECORDED.get(key(p, target))]
    assert not differ, f"generated sources changed for {differ}; if intended, regenerate (tests/golden/sources.py)"
