"""Real-time mode on cortex-m4 under qemu, measured with the instruction counter:
- step fission: ``<name>_step`` called until it reports completion gives ``<name>_run``'s output
  byte for byte (and TFLite Micro's), and no step executes more than the budget, for the SIMD
  (arm_dsp, sliced deep) and the portable (isl, sliced by rows) conv kernels;
- --wcet: the int8 softmax executes the same number of instructions on every input (and it does not
  without --wcet), its output still TFLM's;
- --skip-zero-activations: the arm_dsp skipping kernels (pointwise conv, fully connected) equal TFLM."""
import numpy as np
import pytest

from tinyfuse.driver import compile_model
from tinyfuse.harness.qemu import build_target, run_target
from tinyfuse.harness.realtime import bench_wcet
from tinyfuse.harness.steps import bench_steps
from tests.builders import conv_case, unary_case
from tests.c.test_realtime import _skip_case
from tests.target.conftest import require_tools


# one output row of the portable conv (10 pixels x 16 channels x 72 taps) takes about 89,000
# instructions: it is sliced by output pixels (its accumulator lives within one output point)
@pytest.mark.parametrize("kernels,budget", [("auto", 4000), ("ref", 30000)])
def test_steps_equal_run_and_stay_under_the_budget(kernels, budget, tmp_path):
    require_tools("cortex-m4")
    case = conv_case("conv", 5, (1, 12, 10, 8), 16, (3, 3), act="RELU")
    result = compile_model(case.model, target="cortex-m4", kernels=kernels,
                           realtime={"max_step_instructions": budget})
    assert all(s.pieces for s in result.steps)                      # the conv is sliced
    build = build_target(result, "cortex-m4", tmp_path, case.inputs)
    (out,) = run_target(build)
    np.testing.assert_array_equal(out.reshape(case.want.shape), case.want)
    f = bench_steps(build)
    assert f["steps_match_run"] and f["steps"] == sum(len(s.pieces) for s in result.steps) > 3
    assert f["max_step_instructions"] <= budget, f["step_instructions"]
    assert abs(f["step_overhead"]) < 0.1 * f["run_instructions"]


def test_wcet_softmax_runs_the_same_instructions_on_every_input(tmp_path):
    require_tools("cortex-m4")
    case = unary_case("softmax", 2, (1, 40))
    rng = np.random.default_rng(0)
    samples = [case.inputs] + [[rng.integers(-128, 128, (1, 40)).astype(np.int8)] for _ in range(4)]
    plain = bench_wcet(compile_model(case.model, target="cortex-m4"), "cortex-m4", samples, tmp_path / "plain")
    assert plain["kernels"][0]["data_dependent"]                # the exp's conditional factors
    result = compile_model(case.model, target="cortex-m4", realtime={"wcet": True})
    w = bench_wcet(result, "cortex-m4", samples, tmp_path / "wcet")
    assert not w["kernels"][0]["data_dependent"] and w["instructions_min"] == w["instructions_max"]
    (out,) = run_target(build_target(result, "cortex-m4", tmp_path / "run", case.inputs))
    np.testing.assert_array_equal(out.reshape(case.want.shape), case.want)


@pytest.mark.parametrize("kind", ["pw", "fc"])
def test_skip_zero_activations_dsp_is_exact(kind, tmp_path):
    require_tools("cortex-m4")
    case, x, want = _skip_case(kind, 4)
    result = compile_model(case.model, target="cortex-m4", realtime={"skip_zero_activations": True})
    assert [k.variant for k in result.kernels] == ["skip_zero_dsp"]
    (out,) = run_target(build_target(result, "cortex-m4", tmp_path, [x]))
    np.testing.assert_array_equal(out.reshape(want.shape), want)


def test_wcet_avg_pool_and_float_quantize_run_the_same_instructions_on_every_input(tmp_path):
    """The int8 average pool (TFLM rounding, half away from zero) and the float -> int8 quantize (round
    half to even) use their branch-free forms under --wcet (tinyfuse_wcet.h: tf_avg_round_ct,
    tf_rintf_ct): every input runs the same instructions; outputs equal TFLM's / onnxruntime's."""
    from onnx import TensorProto, helper
    from tests.builders.float_models import model_of
    from tests.builders.tflm_cases import pool_case
    from tests.conftest import ort_run
    require_tools("cortex-m4")
    rng = np.random.default_rng(3)
    pool = pool_case("avg_pool", 7, (1, 6, 6, 16), (3, 3), (3, 3))
    scale = np.array(0.05, np.float32)
    x = (rng.integers(-3000, 3000, (1, 64)) * 0.025).astype(np.float32)     # halfway points and beyond the range
    quant = model_of([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], {"x": x}, ["y"],
                     inits={"s": scale, "z": np.array(3, np.int8)})
    quant.graph.output[0].type.tensor_type.elem_type = TensorProto.INT8
    cases = ((pool.model, pool.inputs, pool.want,
              lambda: [[rng.integers(-128, 128, (1, 6, 6, 16)).astype(np.int8)] for _ in range(4)]),
             (quant, [x], ort_run(quant, {"x": x})[0],
              lambda: [[(rng.standard_normal((1, 64)) * 10 ** rng.uniform(-2, 3)).astype(np.float32)] for _ in range(4)]))
    for i, (model, inputs, want, more) in enumerate(cases):
        result = compile_model(model, target="cortex-m4", realtime={"wcet": True})
        w = bench_wcet(result, "cortex-m4", [inputs] + more(), tmp_path / f"w{i}")
        assert w["instructions_min"] == w["instructions_max"], w
        (out,) = run_target(build_target(result, "cortex-m4", tmp_path / f"r{i}", inputs))
        np.testing.assert_array_equal(out.reshape(want.shape), want)


def _one_point_model(kind: str) -> tuple[bytes, tuple]:
    """An int8 TFLite model whose kernel computes one output point per channel (a 3x3 window over a 3x3
    image, VALID): the depthwise conv, a one-channel conv, the 4x4 average pool; and its input shape."""
    from tests.builders import tflm_twin_models as tm
    from tests.builders.tflm_twin_models import Net
    rng, net, q = np.random.default_rng(0), Net(), (0.05, 3)
    if kind == "avg_pool":
        y, _ = tm.pool(net, "AVERAGE_POOL_2D", net.input((1, 4, 4, 3), q), (1, 4, 4, 3), q, (4, 4), (4, 4), "VALID", "NONE")
        return net.build([y]), (1, 4, 4, 3)
    c, oc = (8, 8) if kind == "depthwise" else (5, 1)
    w = rng.integers(-127, 128, (1, 3, 3, oc) if kind == "depthwise" else (oc, 3, 3, c)).astype(np.int8)
    y, _ = tm.conv(net, net.input((1, 3, 3, c), q), (1, 3, 3, c), q, w, rng.integers(-500, 500, oc).astype(np.int32),
                   np.full(oc, 0.004, np.float32), (0.1, -5), (1, 1), "VALID", (1, 1), "NONE", 1 if kind == "depthwise" else 0)
    return net.build([y]), (1, 3, 3, c)


@pytest.mark.parametrize("kind,target", [("depthwise", "cortex-m4"), ("depthwise", "cortex-m55"),
                                         ("conv", "cortex-m0"), ("avg_pool", "cortex-m55")])
def test_steps_never_split_the_statements_of_one_output_point(kind, target, tmp_path):
    """Found by the TFLM twin fuzzer (tflm_twin --variant arm_dsp, seed 344: DW+ADD [1, 7, 1, 16], a 7x1
    window, one output pixel, gcc: 'tp[6] may be used uninitialized'). When every output dimension of a
    kernel is one point, the first time dimension that varies only orders its statements (taps, then
    MACs, then the store); step fission split there, so a later step read the tap pointers (arm_dsp,
    arm_mve depthwise), the accumulator (the portable conv: a wrong _step output on cortex-m0) or the
    Helium pool's vector accumulator that an earlier step had set in a local variable. Fixed in
    poly/slices.py (such a dimension is never split at depth 1) and lower/slicing.py (a family with a
    deeper slice still gets it). _step's output must equal TFLM's."""
    from tests.conftest import tflm_run
    require_tools(target)
    model, shape = _one_point_model(kind)
    x = np.random.default_rng(1).integers(-128, 128, shape).astype(np.int8)
    (want,) = tflm_run(model, [x])
    result = compile_model(model, target=target, realtime={"max_step_instructions": 60})
    build = build_target(result, target, tmp_path, [x])
    (out,) = run_target(build)
    stepped = np.frombuffer((build.workdir / "run" / "step_out0.bin").read_bytes(), np.int8).reshape(want.shape)
    np.testing.assert_array_equal(out.reshape(want.shape), want)
    np.testing.assert_array_equal(stepped, want)
