"""Shared kernel bodies: kernels whose C differs only in the constants they read are emitted once.

Same-shaped layers (the four depthwise / pointwise pairs of DS-CNN, the repeated MobileNet blocks)
lower to the same C text up to the names of their weight arrays ``<prefix>_c<k>``. Each such set is
emitted as one body function ``<prefix>_body<n>`` that takes the constants as trailing pointer
parameters (``const T *tf_w0, ...``, in order of first use), and every kernel keeps a function of its
own name that calls it (a few instructions: per-kernel instruction counts and the memory plan's
calls are unchanged). Zero points, shifts and every other literal stay in the text, so two kernels
share a body only when their arithmetic is the same to the byte (the same C up to the arrays' names).
"""
from __future__ import annotations

import re

# A kernel's C: an optional leading comment line, then "[TF_SIMD_KERNEL ]static void NAME(PARAMS)\n{BODY}".
_HEAD = re.compile(r"^(?P<comment>/\*.*?\*/\n)?(?P<simd>TF_SIMD_KERNEL )?static void (?P<name>\w+)\((?P<params>[^)]*)\)\n",
                   re.S)


def _normal_form(code: str, name: str, prefix: str) -> tuple[str, list[str]] | None:
    """(the function without its comment, its name and its constants' names, those names in order of
    first use), or None when the text is not one kernel function."""
    m = _HEAD.match(code)
    if m is None or m.group("name") != name:
        return None
    rest = code[m.end("comment") if m.group("comment") else 0:]
    consts: list[str] = []

    def sub(mc: re.Match) -> str:
        if mc.group(0) not in consts:
            consts.append(mc.group(0))
        return f"tf_w{consts.index(mc.group(0))}"
    text = re.sub(rf"\b{re.escape(prefix)}_c\d+\b", sub, rest)
    return re.sub(rf"\b{re.escape(name)}\b", "TF_KERNEL", text), consts


def _arg_names(params: str) -> list[str]:
    """The parameter names of a C parameter list ("const int8_t *p0, int8_t *out" -> [p0, out])."""
    return [re.split(r"[\s*]+", p.strip())[-1] for p in params.split(",") if p.strip()]


def share_bodies(kernels, prefix: str, const_types: dict[str, str]) -> int:
    """Rewrite ``kernels`` (Kernel objects, emission order; ``code`` is replaced in place) so that each
    set of two or more kernels with the same normal form calls one body (module doc). ``const_types``:
    constant name -> C element type. Returns the number of bodies emitted for shared sets."""
    groups: dict[tuple, list] = {}
    for k in kernels:
        if not k.code:
            continue
        form = _normal_form(k.code, k.name, prefix)
        if form is None:
            continue
        text, consts = form
        key = (text, tuple(const_types[c] for c in consts))
        groups.setdefault(key, []).append((k, consts))
    n = 0
    for (text, types), members in groups.items():
        if len(members) < 2 or len({id(k) for k, _ in members}) < 2:
            continue
        body = f"{prefix}_body{n}"
        n += 1
        head = _HEAD.match(members[0][0].code)
        params = head.group("params")
        extra = ", ".join(f"const {t} *tf_w{i}" for i, t in enumerate(types))
        sig = f"{params}, {extra}" if extra else params
        code = text.replace("TF_KERNEL", body, 1).replace(f"{body}({params})", f"{body}({sig})", 1)
        proto = f"static void {body}({sig}) {prefix.upper()}_KERNEL_ATTR;\n"
        args = ", ".join(_arg_names(params))
        seen = set()
        for i, (k, consts) in enumerate(members):
            if id(k) in seen:
                continue
            seen.add(id(k))
            m = _HEAD.match(k.code)
            comment = m.group("comment") or ""
            call = ", ".join([args] + consts) if consts else args
            wrapper = f"{comment}static void {k.name}({params})\n{{\n  {body}({call});\n}}\n"
            k.code = (proto + code + "\n" + wrapper) if i == 0 else wrapper
    return n


__all__ = ["share_bodies"]
