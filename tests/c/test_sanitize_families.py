"""Every op family and kernel variant the host can compile, under sanitizers and guard regions.

tests/c/test_sanitizers.py runs the real models; this module runs one small model per lowering family
(tests/builders/sanit_families.py: float ONNX graphs, int8 .tflite one-op models, int8 QDQ graphs,
fused chains, sibling convs, in-place kernels) in every configuration of test_sanitizers.CONFIGS:

    gcc_asan_ubsan_guard   gcc -fsanitize=address,undefined (+ float-cast-overflow, which gcc's
                           undefined leaves out), 256-byte guard regions around each arena
    gcc_wconversion        gcc   -Wall -Wextra -Werror -Wconversion
    clang_wconversion      clang -Wall -Wextra -Werror -Wconversion

(arena filled with 0xA5), each output bit-identical to the plain build (gcc STRICT_CFLAGS, arena 0x00),
and the plain build equal to the model's independent oracle (onnxruntime for float, TFLite Micro
bit for bit for the int8 .tflite models, onnxruntime within a stated number of output steps for the
int8 QDQ graphs TFLM has no twin for). All models go into ONE program per configuration
(harness/multi.py), so the added time is a few builds, not one per model.

Kernel variants: the int8 models with SIMD anchors are also compiled for cortex-m4 (arm_dsp kernels,
including the depthwise, in-place and poly-fused DSP stages) and cortex-m55 (arm_mve). Their kernels
call the primitives of runtime_c/include/tinyfuse/simd.h, which needs the Arm DSP extension (ACLE
intrinsics, inline sxtb16 asm); the host build force-includes runtime_c/include/tinyfuse/simd_host.h
instead (the same primitives and the few Helium intrinsics in portable C, the hardware's wrapping
arithmetic), so the kernels' address arithmetic, loop bounds, tail predicates and scratch use run
under ASan/UBSan on the host; their results must still equal the oracle. What the host cannot check
is the shipped simd.h's own intrinsic bodies: those run on qemu (tests/target/test_simd_kernels.py).

``test_every_lowering_family_is_covered`` fails when a registered lowering (lower.registry.LOWERINGS),
every implementation a strategy declares (tinyfuse.strategy), the poly-fused chain (ref and DSP stages), an in-place kernel,
an in-place rule of the memory plan, the resize taps kernel, a stateful model or a ring-buffer state
appears in no model here: a new op family needs its model in sanit_families.py (or
sanit_families_state.py). Stateful models run several frames (``FamilyModel.frames``): the harness
resets their state region (between guard regions too) once and carries it from frame to frame.
"""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

from tinyfuse.errors import TinyfuseError
from tinyfuse.harness.host import STRICT_CFLAGS
from tinyfuse.harness.multi import build_host_multi, run_host_multi
from tinyfuse.lower.registry import LOWERINGS
from tinyfuse.strategy import STRATEGIES
from tests.builders.sanit_families import CONFIGS, all_models
from tests.conftest import require_programs

EXTRA_SANITIZE = ["-fsanitize=float-cast-overflow"]   # Cast float -> int8/int32, float -> int requantization
JOBS = min(2, os.cpu_count() or 1)      # translation units compiled at a time (the CI machine has 2 cores)


# the taps loop of lower/resize_taps.py (codegen_templates/resize/taps.c.j2: cubic, antialias, crop)
TAPS_LOOP = "tf_ky"


def kernel_tags(kernel) -> set[str]:
    """The coverage tags of one kernel: its lowering family (the LOWERINGS key: the anchor op, or
    ``elemwise``), its implementation (``Kernel.kind``, and each stage's of a fused chain), and for a
    non-portable kernel ``family@variant`` (arm_dsp, arm_mve, inplace, fused_chain, fused_chain@arm_dsp
    when a chain stage uses the SIMD helpers)."""
    fam = next((op for op in kernel.ops if op in LOWERINGS), "elemwise")
    tags = {fam, kernel.kind, *kernel.stage_kinds}
    v = kernel.variant
    if v.startswith("inplace"):
        tags.add(f"{fam}@inplace")
    elif v == "fused_chain":
        tags.add("fused_chain")
        if kernel.headers:
            tags.add("fused_chain@arm_dsp")
    elif v != "ref":
        tags.add(f"{fam}@{v}")
    if fam == "nn.resize2d" and TAPS_LOOP in str(kernel.code):
        tags.add("nn.resize2d@taps")
    return tags


# the memory plan's in-place rules (tinyfuse.memory.schedule.InPlace.rule)
INPLACE_RULES = ("elementwise", "residual_add", "dw_plane", "pixel_buffer", "fused_chain")


def result_tags(result) -> set[str]:
    """The kernel tags of every kernel, ``inplace:<rule>`` for each in-place choice of the plan, and
    ``state`` / ``state@ring_buffer`` for a stateful model (with a ring-buffer state: passes/ring_buffer.py)."""
    states = {"state"} if result.states else set()
    if any(s.ring_step for s in result.states):
        states.add("state@ring_buffer")
    return ({t for k in result.kernels for t in kernel_tags(k)}
            | {f"inplace:{o.rule}" for o in result.memory.inplace.values()} | states)


def required_tags() -> set[str]:
    return (set(LOWERINGS) | {i.name for impls in STRATEGIES.values() for i in impls}
            | {"fused_chain", "fused_chain@arm_dsp", "qnn.conv2d@inplace", "nn.resize2d@taps", "state",
               "state@ring_buffer"} | {f"inplace:{r}" for r in INPLACE_RULES})


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """[(entry, target, CompileResult)] for every family model and target, and the plain build's
    outputs; compile errors fail (every family listed compiles)."""
    require_programs("gcc")
    tmp = tmp_path_factory.mktemp("families")
    t0 = time.perf_counter()
    runs, errors = [], []
    for entry in all_models(tmp / "models"):
        for target in entry.targets:
            try:
                runs.append((entry, target, entry.compile(target)))
            except TinyfuseError as e:
                errors.append(f"{entry.name} ({target}): {e}")
    assert not errors, "\n".join(errors)
    results = [r for _, _, r in runs]
    plain = run_host_multi(build_host_multi(results, tmp / "plain", simd_host=True, jobs=JOBS), results,
                           [e.inputs for e, _, _ in runs], [e.frames for e, _, _ in runs])
    print(f"\nfamilies: {len(runs)} compiled models, models + compile + plain build {time.perf_counter() - t0:.1f} s")
    return runs, plain, tmp


def test_plain_build_matches_the_oracle(suite):
    runs, plain, _ = suite
    bad = []
    for (entry, target, result), outs in zip(runs, plain):
        for i, got in enumerate(outs):
            err = entry.oracle_error(i, got)
            if err:
                bad.append(f"{result.name} output {i}: {err}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("config", list(CONFIGS))
def test_every_family_clean_under(config, suite):
    opts = dict(CONFIGS[config])
    if opts.get("sanitize"):            # gcc's -fsanitize=undefined leaves out float -> integer overflow
        opts["cflags"] = [*STRICT_CFLAGS, *EXTRA_SANITIZE]
    require_programs(opts["cc"])                         # make setup installs clang for CI
    runs, plain, tmp = suite
    results = [r for _, _, r in runs]
    t0 = time.perf_counter()
    exe = build_host_multi(results, tmp / config, simd_host=True, jobs=JOBS, **opts)   # -Werror: a warning fails
    outs = run_host_multi(exe, results, [e.inputs for e, _, _ in runs],    # a sanitizer report or guard hit fails
                          [e.frames for e, _, _ in runs])
    print(f"\n{config}: {len(results)} models built and run in {time.perf_counter() - t0:.1f} s")
    bad = [f"{r.name} output {i}: {int(np.sum(g != w))} of {w.size} differ"
           for r, got, want in zip(results, outs, plain) for i, (g, w) in enumerate(zip(got, want))
           if g.dtype != w.dtype or not np.array_equal(g, w)]
    assert not bad, f"under {config}, outputs differ from the plain gcc build:\n" + "\n".join(bad)


def test_every_lowering_family_is_covered(suite):
    runs, _, _ = suite
    covered = {t for _, _, r in runs for t in result_tags(r)}
    missing = required_tags() - covered
    assert not missing, f"no sanitizer model covers {sorted(missing)}: add one to tests/builders/sanit_families.py"


def test_family_table(suite, capsys):
    """The family x target table the report quotes (printed with -s); every model has at least one kernel."""
    runs, _, _ = suite
    rows = {}
    for entry, target, result in runs:
        assert result.kernels, result.name
        tags = sorted(result_tags(result))
        rows[result.name] = ", ".join(tags)
    with capsys.disabled():
        print("\n" + "\n".join(f"{name:32s} {tags}" for name, tags in rows.items()))


def _two_small_models():
    import onnx
    from tinyfuse.driver import compile_model
    from tests.builders import good_model
    return [compile_model(onnx.load_from_string(good_model()), name=n) for n in ("ga", "gb")]


def test_multi_guard_names_the_model_that_wrote_past_its_arena(tmp_path):
    """The multi-model harness's own guard check: model gb writes one byte past its arena; the
    program exits with 3 naming gb and the byte, after ga ran clean."""
    results = _two_small_models()
    marker = "  return 0;\n}"
    results[1].files["gb.c"] = results[1].files["gb.c"].replace(
        marker, "  ((uint8_t *)arena)[GB_ARENA_SIZE + 5] = 1;\n" + marker, 1)
    exe = build_host_multi(results, tmp_path, guard=64)
    x = np.zeros((1, 3, 8, 8), np.float32)
    with pytest.raises(TinyfuseError, match="exited with 3.*gb: arena guard overwritten: byte 5 after the arena"):
        run_host_multi(exe, results, [[x], [x]])


def test_multi_asan_reports_a_read_before_an_arena(tmp_path):
    require_programs("gcc")
    results = _two_small_models()
    marker = "  return 0;\n}"
    results[0].files["ga.c"] = results[0].files["ga.c"].replace(
        marker, "  if (((volatile uint8_t *)arena)[-3] == 42) return 1;\n" + marker, 1)
    exe = build_host_multi(results, tmp_path, guard=64, sanitize=True)
    x = np.zeros((1, 3, 8, 8), np.float32)
    with pytest.raises(TinyfuseError, match="AddressSanitizer"):
        run_host_multi(exe, results, [[x], [x]])


def test_multi_guard_names_a_write_past_the_state_region(tmp_path):
    """A stateful model (the ring-buffer model of tests/builders/tflm_state.py) that writes one byte
    past its state region in its run: the state guard catches it after the first frame (exit 3)."""
    from tinyfuse.driver import compile_model
    from tests.builders.tflm_state import ring_model
    result = compile_model(ring_model(5, 16), name="rg")
    head, marker, tail = result.files["rg.c"].rpartition("  return 0;\n}")     # the end of rg_run
    result.files["rg.c"] = head + "  ((uint8_t *)state)[RG_STATE_SIZE + 5] = 1;\n" + marker + tail
    exe = build_host_multi([result], tmp_path, guard=64)
    with pytest.raises(TinyfuseError, match="exited with 3.*rg: state guard overwritten: byte 5 after the state"):
        run_host_multi(exe, [result], [[np.zeros((3, 1, 1, 16), np.int8)]], frames=[3])
