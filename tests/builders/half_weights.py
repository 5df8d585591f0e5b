"""The twin of a --weights-dtype float16 build: the float32 build whose float constants hold the
binary16-rounded values (numpy's float32 → float16 → float32, round to nearest even), and the same
kernel code. The float16 build's outputs must equal the twin's exactly (binary16 → binary32 is exact)."""
from __future__ import annotations

import numpy as np


def compile_rounded_twin(monkeypatch, model, **options):
    """compile_model(model, weights_dtype='float16', ...) with the conversion replaced by rounding the
    float32 constants in place (they stay float32 in flash, read without tf_h2f)."""
    import tinyfuse.driver as driver

    def rounded(pool, kernels):
        for i, (name, arr) in enumerate(pool.arrays):
            if arr.dtype == np.float32 and np.all(np.abs(arr) <= 65504):
                pool.arrays[i] = (name, arr.astype(np.float16).astype(np.float32))
        return []

    with monkeypatch.context() as m:
        m.setattr(driver, "half_weights", rounded)
        return driver.compile_model(model, weights_dtype="float16", **options)
