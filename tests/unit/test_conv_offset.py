"""The conv_offset in-place rule (memory/inplace.py): a conv's input placed R bytes above its output.
The proven R is checked by simulating the kernels' byte order over one shared buffer against a conv
computed on an untouched copy (numpy), and one step lower must clobber a read the model flags; the SIMD
build's arena is no larger than the portable build's on KWS (it was 96 bytes larger: the arm_dsp pixel
buffer's im2col columns were not counted when the in-place option was chosen)."""
import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.memory.inplace import prove_conv_offset
from tinyfuse.ops.conv_geom import ConvGeom
from tests.conftest import shared_or_skip


def _geo(H, W, C, K, k, s, pad):
    return ConvGeom(H=H, W=W, C=C, OH=(H + 2 * pad - k) // s + 1, OW=(W + 2 * pad - k) // s + 1, K=K, KH=k, KW=k,
                    G=1, M=K, Cg=C, sh=s, sw=s, dh=1, dw=1, pt=pad, pl=pad, pb=pad, pr=pad, zp=0)


def _window(mem, base, g, oh, ow):
    x = np.zeros((g.KH, g.KW, g.C), np.int64)
    for r in range(g.KH):
        for s in range(g.KW):
            ih, iw = oh * g.sh + r - g.pt, ow * g.sw + s - g.pl
            if 0 <= ih < g.H and 0 <= iw < g.W:
                x[r, s] = mem[base + (ih * g.W + iw) * g.C: base + (ih * g.W + iw + 1) * g.C]
    return x


def _simulate(g, R, w, x, form):
    """Output of the conv run over one buffer: input at byte R, output at 0 (values mod 256)."""
    mem = np.zeros(max(R + g.in_bytes, g.out_bytes), np.int64)
    mem[R:R + g.in_bytes] = x.reshape(-1)
    pixels = [(p // g.OW, p % g.OW) for p in range(g.OH * g.OW)]
    if form == "pixel":                        # the portable conv: channel by channel, each rereads the window
        for p, (oh, ow) in enumerate(pixels):
            for k in range(g.K):
                mem[p * g.K + k] = int((_window(mem, R, g, oh, ow) * w[k]).sum()) % 256
    else:                                      # im2col: both windows of a pair read, then both written
        for q in range(0, len(pixels), 2):
            cols = [_window(mem, R, g, *pixels[p]) for p in range(q, min(q + 2, len(pixels)))]
            for j, col in enumerate(cols):
                for k in range(g.K):
                    mem[(q + j) * g.K + k] = int((col * w[k]).sum()) % 256
    return mem[:g.out_bytes]


@pytest.mark.parametrize("form", ["pixel", "im2col"])
@pytest.mark.parametrize("shape", [(9, 5, 1, 8, 3, 1, 1), (10, 4, 2, 16, 3, 2, 1), (8, 8, 4, 2, 3, 1, 1)])
def test_proven_offset_computes_the_conv(shape, form):
    g = _geo(*shape)
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(1, 50, (g.H, g.W, g.C))
    w = rng.integers(1, 5, (g.K, g.KH, g.KW, g.C))
    R = prove_conv_offset(g, form, 4)
    assert R is not None
    want = _simulate(g, g.out_bytes + 64, w, x, form)          # no overlap: the reference
    assert np.array_equal(_simulate(g, R, w, x, form), want)
    if R - 4 >= max(0, g.out_bytes - g.in_bytes):            # the least R: one step lower clobbers a read
        assert not np.array_equal(_simulate(g, R - 4, w, x, form), want)


def test_simd_arena_not_above_portable_kws():
    model = str(shared_or_skip("models", "tflite", "kws_ref_model.tflite"))
    host = compile_model(model, target="host").arena_bytes
    m4 = compile_model(model, target="cortex-m4").arena_bytes
    assert m4 <= host
