"""isl proofs behind in-place reuse and line buffers (tinyfuse.poly.deps, tinyfuse.memory.inplace,
tinyfuse.poly.linebuf): each rule proven where it holds and refuted where it does not."""
import pytest

from tinyfuse.memory.inplace import _elementwise_proof, _same_index_proof, prove_dw_plane, prove_pixel_buffer
from tinyfuse.ops.conv_geom import ConvGeom
from tinyfuse.poly.deps import Access, Layout, Model, clobbered_reads, flow_mismatch
from tinyfuse.poly.linebuf import Stage, analyze, prove


def geo(H, W, C, K, k=3, s=1, pads=(1, 1, 1, 1), groups=1, zp=-3):
    OH = (H + pads[0] + pads[2] - k) // s + 1
    OW = (W + pads[1] + pads[3] - k) // s + 1
    return ConvGeom(H, W, C, OH, OW, K, k, k, groups, K // groups, C // groups, s, s, 1, 1, *pads, zp)


def test_elementwise_in_place_only_when_output_elements_are_not_wider():
    assert _elementwise_proof((4, 7), 1, 1)          # int8 over int8
    assert _elementwise_proof((1, 3, 9), 4, 1)       # int8 quantize over its float32 input
    assert not _elementwise_proof((1, 3, 9), 1, 4)   # float32 over int8: writes run ahead of reads


def test_same_offset_shift_is_what_matters():
    m = Model([Access("S", ("i",), "0 <= i < 10", ("i",), reads=("X[i]",), writes=("Y[i]",))])
    assert clobbered_reads(m, Layout({"X": ((10,), 1, 0), "Y": ((10,), 1, 0)}), ("X",)).is_empty()
    assert clobbered_reads(m, Layout({"X": ((10,), 1, 1), "Y": ((10,), 1, 0)}), ("X",)).is_empty()
    assert not clobbered_reads(m, Layout({"X": ((10,), 1, 0), "Y": ((10,), 1, 1)}), ("X",)).is_empty()


def test_residual_add_over_the_skip_is_order_free():
    assert _same_index_proof((1, 8, 8, 16))


@pytest.mark.parametrize("g, ok", [
    (geo(25, 5, 64, 64, groups=64), True),                       # KWS depthwise, stride 1
    (geo(48, 48, 48, 48, s=2, groups=48), True),                 # MobileNetV2 stride-2 depthwise
    (geo(7, 9, 8, 8, k=5, pads=(2, 2, 2, 2), groups=8), True),   # 5x5
])
def test_dw_plane(g, ok):
    assert prove_dw_plane(g) is ok


@pytest.mark.parametrize("g, order", [
    (geo(25, 5, 64, 64, k=1, pads=(0, 0, 0, 0)), "ascending"),             # pointwise, same width
    (geo(48, 48, 16, 8, k=1, pads=(0, 0, 0, 0)), "ascending"),             # projection (shrinks)
    (geo(48, 48, 8, 48, k=1, pads=(0, 0, 0, 0)), "descending"),            # expansion (grows)
    (geo(32, 32, 16, 32, k=1, s=2, pads=(0, 0, 0, 0)), "ascending"),       # ResNet 1x1 s2 shortcut
    (geo(48, 48, 48, 48, s=2, groups=48), "ascending"),                    # stride-2 depthwise
    (geo(32, 32, 16, 16), None),                                           # 3x3 stride 1: never
    (geo(25, 5, 64, 64, groups=64), None),                                 # dw stride 1: needs the plane
])
def test_pixel_buffer(g, order):
    assert prove_pixel_buffer(g) == order


def test_line_buffer_rows_are_proven_and_one_fewer_is_refuted():
    # ex5c: a 3x3 consumer needs 3 producer rows; with 2 the flow sees a clobbered row
    acc = [Access("P", ("a", "b", "k"), "0<=a<10 and 0<=b<32 and 0<=k<8", ("a", "0", "b", "k", "0", "0"),
                  writes=("LB[a mod 3, b, k]",)),
           Access("D", ("h", "w", "k", "r", "s"),
                  "0<=h<10 and 0<=w<32 and 0<=k<8 and 0<=r<3 and 0<=s<3 and 0<=h+r-1<10 and 0<=w+s-1<32",
                  ("h+1", "1", "w", "k", "r", "s"), reads=("LB[(h+r-1) mod 3, w+s-1, k]",))]
    m = Model(acc)
    import islpy as isl
    intended = isl.UnionMap("{ P[a,b,k] -> D[h,w,k,r,s] : a = h+r-1 and b = w+s-1 }") \
        .intersect_domain(m.domain).intersect_range(m.domain)
    assert flow_mismatch(m, (("LB", 3),), intended).is_empty()
    acc[0] = Access("P", acc[0].dims, acc[0].constraints, acc[0].time, writes=("LB[a mod 2, b, k]",))
    acc[1] = Access("D", acc[1].dims, acc[1].constraints, acc[1].time, reads=("LB[(h+r-1) mod 2, w+s-1, k]",))
    assert not flow_mismatch(Model(acc), (("LB", 3),), intended).is_empty()


def resnet_block():
    return [Stage(geo(32, 32, 16, 16), ("param", 0)), Stage(geo(32, 32, 16, 16), ("stage", 0), (), (0,))]


def test_chain_analysis_resnet_block():
    plan = analyze(resnet_block())
    assert plan.rows == [3, 0] and plan.width[0] == 32 and plan.scratch_bytes == 3 * 32 * 16
    assert plan.recompute == 1.0 and plan.ntiles == 1
    assert prove(plan, {0: (32, 32, 16)}) is None
    assert prove(plan, {0: (32, 32, 16)}, inplace=0) is None      # output over the skip tensor
    plan.rows[0] = 2
    assert "line-buffer flow" in prove(plan, {0: (32, 32, 16)})


def test_chain_tiles_recompute_and_forbid_writing_over_the_input():
    plan = analyze(resnet_block(), tile_w=8)
    assert plan.ntiles == 4 and plan.width[0] == 10 and plan.recompute == pytest.approx(1.09375)
    assert prove(plan, {0: (32, 32, 16)}) is None
    assert "clobbers" in prove(plan, {0: (32, 32, 16)}, inplace=0)   # the next tile still reads it


def test_chain_downsampling_block_with_shortcut_stage():
    stages = [Stage(geo(32, 32, 16, 32, s=2, pads=(0, 0, 1, 1)), ("param", 0)),
              Stage(geo(32, 32, 16, 32, k=1, s=2, pads=(0, 0, 0, 0)), ("param", 0)),
              Stage(geo(16, 16, 32, 32), ("stage", 0), (1,))]
    plan = analyze(stages)
    assert plan.rows[:2] == [3, 1] and plan.scratch_bytes == (3 + 1) * 16 * 32
    assert prove(plan, {0: (32, 32, 16)}, inplace=0) is None
