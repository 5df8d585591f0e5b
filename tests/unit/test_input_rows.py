"""--input-rows: the row windows of a first kernel (hand-computed from the conv arithmetic) and the one
error line for a model whose input no row-windowed kernel reads."""
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.errors import TinyfuseError
from tinyfuse.memory.input_rows import row_windows
from tinyfuse.ops.conv_geom import ConvGeom
from tests.conftest import shared_or_skip


def _geo(H, OH, C, K, k, s, pt, pb):
    return ConvGeom(H=H, W=H, C=C, OH=OH, OW=OH, K=K, KH=k, KW=k, G=1, M=K, Cg=C, sh=s, sw=s, dh=1, dw=1,
                    pt=pt, pl=pt, pb=pb, pr=pb, zp=0)


def test_row_windows_single_conv():
    # 3x3 stride 2, SAME on 96 rows (pads 0 top, 1 bottom): output row r reads input rows 2r .. 2r + 2
    windows = row_windows([_geo(96, 48, 3, 8, 3, 2, 0, 1)])
    assert windows[0] == (0, 2) and windows[10] == (20, 22) and windows[47] == (94, 95)


def test_row_windows_line_buffered_chain():
    # VWW's first chain: conv 3x3 s2 (96 -> 48), depthwise 3x3 s1 pads 1/1, pointwise, depthwise 3x3 s2
    # (48 -> 24, pads 0/1). Final row t needs stage-3 rows 2t .. 2t + 2, stage-2 the same, stage-1 rows up to
    # 2t + 3, so row 0 computes stage-1 rows 0..3 (input rows 0..8) and row t > 0 stage-1 rows 2t + 2, 2t + 3
    # (input rows 4t + 4 .. 4t + 8); the last final row needs no new stage-1 row (47 was computed before).
    geos = [_geo(96, 48, 3, 8, 3, 2, 0, 1), _geo(48, 48, 8, 8, 3, 1, 1, 1), _geo(48, 48, 8, 16, 1, 1, 0, 0),
            _geo(48, 24, 16, 16, 3, 2, 0, 1)]
    windows = row_windows(geos)
    assert windows[0] == (0, 8)
    assert windows[5] == (24, 28)
    assert windows[22] == (92, 95)
    assert windows[23] == (1, 0)


def test_fully_connected_first_is_one_error_line():
    model = shared_or_skip("models", "tflite", "ad01_int8.tflite")
    with pytest.raises(TinyfuseError) as e:
        compile_model(str(model), input_rows=2)
    msg = str(e.value)
    assert "\n" not in msg and "--input-rows" in msg and "qmatmul" in msg
