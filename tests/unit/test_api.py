"""The Python API (``import tinyfuse``): issue 19 item 10, a CompileResult's repr is one short line
(it printed the whole IR, plan and every generated file: 1.7 MB for a small model)."""
from __future__ import annotations

from tests.conftest import shared_or_skip


def test_compile_result_repr_is_short():
    import tinyfuse
    result = tinyfuse.compile(str(shared_or_skip("models", "onnx", "kws_ref_model.onnx")), target="host", name="kws")
    text = repr(result)
    assert len(text) < 300 and "\n" not in text, text[:500]
    files = ["kws.c", "kws.cmake", "kws.h", "kws.mk", "kws_weights.c", "metadata.json", "tinyfuse_quant.h"]
    assert text == (f"CompileResult(name='kws', target='host', kernels={len(result.steps)}, "
                    f"arena_bytes={result.arena_bytes}, files={files})")
    assert len(result.steps) > 0 and result.arena_bytes > 0
