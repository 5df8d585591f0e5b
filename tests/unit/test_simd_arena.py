"""The SIMD kernels' scratch in the arena: the stages of a line-buffered chain (lower/conv/chain.py) share
one im2col column area after the line buffers (a stage's columns are dead once its row step is done),
so a chain's scratch is its line buffers plus its largest stage's columns, not their sum."""
from __future__ import annotations

from tests.conftest import shared_or_skip
from tinyfuse.driver import compile_model
from tinyfuse.poly.chain import chain_of


def _column_bytes(geo) -> int:
    """Two pixels of int16 im2col columns: the KH*KW*C reduction padded to whole words, 2 bytes a term
    (rows of C % 4 != 0 padded word by word, at most as long)."""
    k = geo.KH * geo.KW * geo.C
    if geo.C % 4:
        k = geo.KH * -(-(geo.KW * geo.C) // 4) * 4
    return 2 * 2 * -(-k // 4) * 4


def test_chain_stages_share_one_column_area():
    path = shared_or_skip("models", "tflite", "pretrainedResnet_quant.tflite")
    result = compile_model(path, target="cortex-m4")
    chains = [s for s in result.steps if s.kernel.kind == "fused_chain"]
    assert chains
    several = 0
    for s in chains:
        k = s.kernel
        stages = [st.geo for st, kind in zip(chain_of(s.call.op).stages, k.stage_kinds) if kind == "chain.conv_arm_dsp"]
        lines = -(-k.plan.scratch_bytes // 4) * 4
        cols = [_column_bytes(g) for g in stages]
        assert k.scratch_bytes == lines + max(cols, default=0), (k.name, k.scratch_bytes, lines, cols)
        several += len(cols) > 1
    assert several          # ResNet-8's chains have two and three conv stages
