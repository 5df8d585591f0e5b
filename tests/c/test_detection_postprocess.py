"""DETECTION_POSTPROCESS (``TFLite_Detection_PostProcess``) compiled to C on the host against TFLite
Micro (float32: the kernel TFLM registers), every output byte for byte: the decoded boxes, the classes,
scores and their order (TFLM's stable sort; ties by anchor, class and entry order), the count. Fast NMS
leaves the slots past the count unwritten in TFLM (not compared). uint8 inputs (TFLM's kernel takes
float only) against LiteRT, and their ties against TFLM on the float model fed the inputs dequantized in
float (TFLite's Dequantizer); max_classes_per_detection > 1 against LiteRT (TFLM writes past its outputs
there); int8 inputs, which neither runs, refused."""
from __future__ import annotations

import numpy as np
import pytest

from tests.builders import tflm_detection as td
from tests.builders.tflm_signal import tflm_frames
from tests.conftest import require_programs


def run_c(model: bytes, inputs, tmp_path):
    from tinyfuse.driver import compile_model
    from tinyfuse.harness import build_host, run_host
    require_programs("gcc")
    result = compile_model(model, target="host")
    return [np.asarray(o) for o in run_host(build_host(result, tmp_path), result, inputs)]


def same(got, want, slots=None, k=1):
    """Every output equal; ``slots``: compare only the first ``slots`` detections (fast NMS)."""
    count = int(want[3][0]) * k if slots else None
    for i, (g, w) in enumerate(zip(got, want)):
        g = g.reshape(w.shape)
        if count is not None and i < 3:
            g, w = g[:, :count], w[:, :count]
        assert g.tobytes() == w.tobytes(), f"output {i}: {g.reshape(-1)[:12]} vs TFLM {w.reshape(-1)[:12]}"


CASES = {
    "fast": dict(),
    "fast_no_background": dict(background=False, nms_score_threshold=0.1),
    "fast_wide_encodings": dict(e=6, nms_iou_threshold=0.2),
    "regular": dict(use_regular_nms=True, max_detections=12, detections_per_class=5),
    "regular_default_per_class": dict(use_regular_nms=True, max_detections=20, nms_score_threshold=0.05),
    "regular_few_above_threshold": dict(use_regular_nms=True, max_detections=10, nms_score_threshold=0.97),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("b", [40, 300])
def test_detection_postprocess_equals_tflm(case, b, tmp_path):
    rng = np.random.default_rng(b)
    opts = dict(CASES[case])
    bg, e = opts.pop("background", True), opts.pop("e", 4)
    classes = 7
    model = td.model(b, classes, td.anchors(rng, b), background=bg, e=e, **opts)
    ins = td.inputs(rng, b, classes, bg, e)
    want = tflm_frames(model, [ins])[0]
    assert int(want[3][0]) > 0 or case == "regular_few_above_threshold"
    same(run_c(model, ins, tmp_path), want, slots=not opts.get("use_regular_nms"))


@pytest.mark.parametrize("regular", [False, True])
def test_ties_keep_tflm_order(regular, tmp_path):
    """Scores on 6 levels: many equal scores, within and across classes and anchors."""
    rng = np.random.default_rng(5)
    b, classes = 60, 4
    model = td.model(b, classes, td.anchors(rng, b), use_regular_nms=regular, max_detections=15,
                     detections_per_class=6, nms_score_threshold=0.2)
    boxes, _ = td.inputs(rng, b, classes)
    scores = (rng.integers(0, 6, (1, b, classes + 1)) / 5).astype(np.float32)
    want = tflm_frames(model, [[boxes, scores]])[0]
    same(run_c(model, [boxes, scores], tmp_path), want, slots=not regular)


def litert(model: bytes, inputs) -> list[np.ndarray]:
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_content=model)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), inputs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]


def uint8_case(rng, b, classes, **opts):
    """uint8 box encodings, anchors and class predictions; the scores a permutation of distinct levels
    (TFLite's partial sort does not order ties)."""
    qb, qs, qa = (0.03, 131), (1 / 255, 0), (1 / 250, 3)
    an = td.quantize(td.anchors(rng, b), qa, "uint8")
    model = td.model(b, classes, an, qbox=qb, qscore=qs, qanchor=qa, dtype="uint8", **opts)
    boxes, _ = td.inputs(rng, b, classes)
    scores = rng.permutation(256)[:b * (classes + 1)].reshape(1, b, classes + 1).astype(np.uint8)
    return model, [td.quantize(boxes, qb, "uint8"), scores], (qb, qs, qa, an)


@pytest.mark.parametrize("regular", [False, True])
def test_uint8_inputs_equal_litert(regular, tmp_path):
    """TFLite's kernel dequantizes uint8 box encodings, anchors and class predictions (TFLM refuses them)."""
    rng = np.random.default_rng(6)
    model, q, _ = uint8_case(rng, 50, 4, use_regular_nms=regular, max_detections=10, nms_score_threshold=0.2)
    want = litert(model, q)
    assert int(want[3][0]) >= 5
    same(run_c(model, q, tmp_path), want, slots=not regular)


def test_uint8_ties_equal_tflm_on_the_dequantized_twin(tmp_path):
    """Ties in uint8 scores, ordered as TFLM orders them: TFLM on the float model fed the dequantized values."""
    rng = np.random.default_rng(8)
    b, classes = 50, 4
    model, (boxes, _), (qb, qs, qa, an) = uint8_case(rng, b, classes, use_regular_nms=True, max_detections=10)
    scores = rng.integers(0, 8, (1, b, classes + 1)).astype(np.uint8) * 32
    twin = td.model(b, classes, td.dequantized(an, qa), use_regular_nms=True, max_detections=10)
    want = tflm_frames(twin, [[td.dequantized(boxes, qb), td.dequantized(scores, qs)]])[0]
    same(run_c(model, [boxes, scores], tmp_path), want)


@pytest.mark.parametrize("case", ["int8", "float_anchors"])
def test_inputs_no_runtime_takes_are_refused(case):
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError
    rng = np.random.default_rng(9)
    an = td.anchors(rng, 10)
    dtype = "int8" if case == "int8" else "uint8"
    model = td.model(10, 3, an, qbox=(0.03, 0), qscore=(1 / 255, 0), dtype=dtype)
    with pytest.raises(TinyfuseError, match="int8|anchors"):
        compile_model(model, target="host")


def test_several_classes_per_detection_equal_litert(tmp_path):
    rng = np.random.default_rng(7)
    b, classes, k = 40, 6, 3
    model = td.model(b, classes, td.anchors(rng, b), max_detections=5, max_classes_per_detection=k)
    ins = td.inputs(rng, b, classes)
    want = litert(model, ins)
    got = run_c(model, ins, tmp_path)
    count = int(want[3][0])
    assert count > 1
    for i in range(3):
        w = want[i][:, :count * k]
        assert got[i].reshape(want[i].shape)[:, :count * k].tobytes() == w.tobytes(), i
    assert got[3].tobytes() == want[3].tobytes()


@pytest.mark.parametrize("regular", [False, True])
@pytest.mark.parametrize("int8", [True, False])
def test_ssd_head_equals_tflm(int8, regular, tmp_path):
    """An SSD head (tests/builders/tflm_detection.py ssd: CONV_2D box and class predictors, RESHAPE,
    LOGISTIC, DEQUANTIZE when int8, DETECTION_POSTPROCESS) as a whole network: int8 byte for byte;
    float the same classes and count, boxes and scores within 1e-5 (the float convolutions' sums)."""
    model, x = td.ssd(np.random.default_rng(1), int8=int8, use_regular_nms=regular)
    want = tflm_frames(model, [[x]])[0]
    got = run_c(model, [x], tmp_path)
    assert int(want[3][0]) == 6
    if int8:
        same(got, want, slots=not regular)
        return
    for i, (g, w) in enumerate(zip(got, want)):
        tol = 1e-5 if i in (0, 2) else 0
        np.testing.assert_allclose(g.reshape(w.shape), w, rtol=0, atol=tol, err_msg=f"output {i}")
