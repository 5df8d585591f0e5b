"""The SIMD-anchored family models of tests/builders/sanit_families.py on the real cores, with guard
regions: the host sanitizer runs (tests/c/test_sanitize_families.py) build the arm_dsp / arm_mve
kernels against tinyfuse/simd_host.h, a portable stand-in for the shipped tinyfuse/simd.h, whose
ACLE intrinsics and inline sxtb16/sxtab16 assembly only an Arm compiler accepts (no sanitizer runtime
exists for arm-none-eabi bare metal). Here the shipped header runs: each model compiled for
cortex-m4 (arm_dsp) and cortex-m55 (arm_mve) runs once under qemu with its arena (filled 0xA5)
between two 256-byte guard regions (harness.qemu.build_target ``guard``; the image exits with 5 when
one was overwritten), and its output must meet the model's oracle (TFLM bit for bit, or onnxruntime
within the stated steps). About 30 s (11 images); ``make sanitize`` runs it with the host sanitizer
tests."""
from __future__ import annotations

import pytest

from tinyfuse.harness.qemu import build_target, run_target
from tests.builders.sanit_families import ARM_TARGETS, all_models, float_models
from tests.target.conftest import require_tools

CASES = [(name, t) for name, targets in ARM_TARGETS.items() for t in targets if t != "host"]


@pytest.fixture(scope="module")
def entries(tmp_path_factory):
    return {e.name: e for e in all_models(tmp_path_factory.mktemp("models"))}


@pytest.mark.parametrize("name,target", CASES, ids=[f"{n}-{t}" for n, t in CASES])
def test_family_model_on_target_with_guards(name, target, entries, tmp_path):
    require_tools(target)
    entry = entries[name]
    result = entry.compile(target)
    assert any(k.variant != "ref" for k in result.kernels), f"{name} on {target}: no SIMD or in-place kernel"
    build = build_target(result, target, tmp_path, entry.inputs, arena_fill=0xA5, guard=256)
    outs = run_target(build)                      # exit 5: a guard region was overwritten
    bad = [f"output {i}: {err}" for i, got in enumerate(outs) if (err := entry.oracle_error(i, got))]
    assert not bad, f"{name} on {target}: " + "; ".join(bad)


def test_guard_catches_a_write_past_the_arena_on_target(tmp_path):
    """The guard check itself on cortex-m4: a run that writes one byte past the arena exits with 5."""
    from tinyfuse.errors import TinyfuseError
    require_tools("cortex-m4")
    entry = float_models()[0]
    result = entry.compile("cortex-m4")
    run = result.files[f"{result.name}.c"]
    marker = "  return 0;\n}"
    assert marker in run
    result.files[f"{result.name}.c"] = run.replace(
        marker, f"  ((uint8_t *)arena)[{result.name.upper()}_ARENA_SIZE + 7] = 1;\n" + marker, 1)
    build = build_target(result, "cortex-m4", tmp_path, entry.inputs, guard=64)
    with pytest.raises(TinyfuseError, match="exited with 5"):
        run_target(build)
