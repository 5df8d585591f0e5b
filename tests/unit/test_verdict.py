"""run's verdict is one function of the comparison's facts (harness/verdict.py ``verdict``): a table
over the combinations of facts, each row the match bit and the phrases the line must (and must not)
hold, so a verdict text can no longer contradict its facts (before: "MISMATCH (... the outputs equal
to TFLite Micro)" while 128/640 outputs differed; "match" for a float16 build 1.75e-4 away from the
original model, above the 1e-4 tolerance)."""
from __future__ import annotations

import pytest

from tinyfuse.harness.verdict import verdict

INT8 = {"quantized": True, "rounding": "double", "real_oracle_holds": True, "real_kernels_over": 0,
        "real_kernels_unchecked": 0, "tflm_exact": None, "tflm_equal": None, "tflm_max_lsb": None,
        "tflm_error": None, "outputs_total": 640, "ref_exact": True}
FLOAT = {"quantized": False, "compared_with": "onnxruntime", "max_abs_diff": 1e-6, "max_abs_ref": 1.0,
         "rtol": 1e-4, "weights_dtype": "float32", "half_compared_with": None, "half_max_abs_diff": None,
         "half_max_abs_ref": None}
TFLM_EQUAL = {"tflm_exact": True, "tflm_equal": 640, "tflm_max_lsb": 0}
TFLM_DIFFER = {"tflm_exact": False, "tflm_equal": 512, "tflm_max_lsb": 1}
REAL_FAILS = {"real_oracle_holds": False, "real_kernels_over": 2}
HALF_OK = {"weights_dtype": "float16", "half_compared_with": "onnxruntime", "half_max_abs_diff": 7e-7,
           "half_max_abs_ref": 1.0}

# (facts, match, phrases that must appear, phrases that must not)
INT8_ROWS = [
    ({}, True, ["match", "every int8 kernel within 1 LSB", "TFLite Micro not compared"], ["MISMATCH"]),
    (TFLM_EQUAL, True, ["match", "equal to TFLite Micro (640/640)"], ["MISMATCH", "differ"]),
    (TFLM_DIFFER, False, ["MISMATCH", "128/640 outputs differ from TFLite Micro (up to 1 LSB)"], ["equal to TFLite"]),
    ({**TFLM_DIFFER, "rounding": "single"}, True,
     ["match", "differs from TFLite Micro as expected with --rounding single (TFLM uses double rounding)",
      "128/640 outputs differ by up to 1 LSB", "every int8 kernel within 1 LSB"], ["MISMATCH", "equal to TFLite"]),
    ({**TFLM_EQUAL, "rounding": "single"}, True, ["equal to TFLite Micro", "even with --rounding single"], ["MISMATCH"]),
    (REAL_FAILS, False, ["MISMATCH", "2 int8 kernel(s) over 1 LSB"], ["every int8 kernel"]),
    ({**REAL_FAILS, **TFLM_EQUAL}, False, ["MISMATCH", "over 1 LSB", "equal to TFLite Micro"], ["every int8"]),
    ({**REAL_FAILS, **TFLM_DIFFER, "rounding": "single"}, False, ["MISMATCH", "as expected"], ["match ("]),
    ({**REAL_FAILS, "real_kernels_unchecked": 1}, False, ["1 without real facts"], []),
    ({"tflm_error": "Hybrid models are not supported"}, True, ["cannot run: Hybrid models"], ["MISMATCH"]),
    ({**TFLM_EQUAL, "ref_exact": False}, True, ["the fixed-point reference DIFFERS"], ["MISMATCH"]),
]
FLOAT_ROWS = [
    ({}, True, ["max |tinyfuse - onnxruntime| = 1e-06", "tolerance 1e-4 x that: match"], ["MISMATCH", "float16"]),
    ({"max_abs_diff": 2e-4}, False, ["tolerance 1e-4 x that: MISMATCH"], ["match"]),
    ({"max_abs_diff": 1e-4}, True, ["match"], []),                       # the bound itself passes
    ({"compared_with": "numpy reference"}, True, ["max |tinyfuse - numpy reference|"], []),
    ({"max_abs_diff": 0.0, "max_abs_ref": 0.0}, True, ["match"], []),    # all-zero outputs
    ({**HALF_OK, "max_abs_diff": 5e-5}, True,
     ["match: within 1e-4 of onnxruntime on the original float32 weights: max rel error 5e-05"], ["MISMATCH"]),
    ({**HALF_OK, "max_abs_diff": 1.75e-4}, False,
     ["MISMATCH: float16 weights change the result by 0.000175", "above the tolerance 1e-4",
      "within a relative 7e-07 of onnxruntime on the binary16-rounded weights"], ["match:"]),
    ({**HALF_OK, "max_abs_diff": 1.75e-4, "half_max_abs_diff": 1e-3}, False,
     ["MISMATCH: max rel error 0.000175 vs onnxruntime on the original float32 weights and 0.001 vs the "
      "binary16-rounded weights"], ["change the result"]),
]


@pytest.mark.parametrize("base, facts, match, present, absent",
                         [(INT8, *row) for row in INT8_ROWS] + [(FLOAT, *row) for row in FLOAT_ROWS])
def test_verdict_follows_the_facts(base, facts, match, present, absent):
    got, line = verdict({**base, **facts})
    assert got is match, line
    for p in present:
        assert p in line, (p, line)
    for p in absent:
        assert p not in line, (p, line)


def test_every_int8_combination_has_one_consistent_line():
    """The whole product of the int8 facts: the line says match exactly when the bit says so, and it
    names TFLite Micro's equality only when TFLM was equal."""
    for holds in (True, False):
        for tflm in ({}, TFLM_EQUAL, TFLM_DIFFER):
            for rounding in ("double", "single"):
                for ref_exact in (True, False):
                    facts = {**INT8, **tflm, "real_oracle_holds": holds, "rounding": rounding, "ref_exact": ref_exact,
                             "real_kernels_over": 0 if holds else 1}
                    got, line = verdict(facts)
                    want = holds and (tflm is not TFLM_DIFFER or rounding == "single")
                    assert got is want and line.startswith(f"int8 verdict: {'match' if want else 'MISMATCH'} ("), line
                    assert ("equal to TFLite Micro" in line) == (tflm is TFLM_EQUAL), line
