"""runtime_c/include/tinyfuse/simd_host.h (the host stand-in for simd.h in sanitizer builds) defines
every function and macro simd.h gives the kernel templates, and every intrinsic the arm_* templates
call directly, so a new SIMD primitive cannot silently escape the host sanitizer runs."""
from __future__ import annotations

import re

from tinyfuse.resources import runtime_dir, template_dir

INCLUDE = runtime_dir() / "include" / "tinyfuse"


def _defined(text: str) -> set[str]:
    funcs = set(re.findall(r"static inline [\w ]+?\b(\w+)\(", text))
    return funcs | set(re.findall(r"#define (TF_\w+)", text))


def test_simd_host_defines_what_simd_h_defines():
    shipped, host = _defined((INCLUDE / "simd.h").read_text()), _defined((INCLUDE / "simd_host.h").read_text())
    assert shipped, "no functions found in simd.h: the pattern is stale"
    assert shipped - {"TINYFUSE_SIMD_H"} <= host, sorted(shipped - host)


def test_simd_host_defines_every_intrinsic_the_templates_call():
    host = _defined((INCLUDE / "simd_host.h").read_text())
    called = set()
    for path in [*template_dir().rglob("arm_*.c.j2"), template_dir() / "_macros.c.j2"]:
        called |= set(re.findall(r"\b((?:v[a-z0-9]+q_?[a-z0-9_]*|__[a-z0-9]+|tf_\w+))\(", path.read_text()))
    assert called, "no intrinsic calls found in the arm_* templates: the pattern is stale"
    assert called <= host, sorted(called - host)
