"""A C main that calls a compiled model's entry points with NULL and misaligned buffers and checks the
status each returns (the generated header's <NAME>_OK / <NAME>_ERR_* macros), then one good run.

The same source runs on the host (printf) and on a qemu target (semihosting text): it prints one line
``check <i> <got> <want>`` per call whose status is not the expected one and returns the number of
them, so a run that ends with exit code 0 and no ``check`` line got every status, and a fault shows
up as the board's fault exit (127) instead.
"""
from __future__ import annotations


def _calls(r) -> list[tuple[str, str]]:
    """(call, expected status macro suffix) for the entry points of the CompileResult ``r``."""
    n = r.name
    if r.io_caller:
        def run(arena: str, **over: str) -> str:
            args = [over.get(f"in{i}", f"(const void *)in{i}") for i in range(len(r.inputs))]
            args += [over.get(f"out{j}", f"(void *)out{j}") for j in range(len(r.outputs))]
            return f"{n}_run({arena}, {', '.join(args)})"
        return [(run("0"), "ERR_NULL"), (run("arena + 1"), "ERR_ARENA_ALIGN"), (run("arena + 8"), "ERR_ARENA_ALIGN"),
                (run("arena", in0="(const void *)(in0 + 4)"), "ERR_IO_ALIGN"), (run("arena", in0="0"), "ERR_NULL"),
                (run("arena", out0="(void *)(out0 + 2)"), "ERR_IO_ALIGN"), (run("arena", out0="0"), "ERR_NULL"),
                (run("arena"), "OK")]
    if r.states:
        return [(f"{n}_reset(0)", "ERR_NULL"), (f"{n}_reset(state + 1)", "ERR_STATE_ALIGN"), (f"{n}_reset(state)", "OK"),
                (f"{n}_run(0, state)", "ERR_NULL"), (f"{n}_run(arena + 1, state)", "ERR_ARENA_ALIGN"),
                (f"{n}_run(arena, 0)", "ERR_NULL"), (f"{n}_run(arena, state + 8)", "ERR_STATE_ALIGN"),
                (f"{n}_run_frame(arena + 4, state)", "ERR_ARENA_ALIGN"), (f"{n}_run_frame(arena, 0)", "ERR_NULL"),
                (f"{n}_run_frame(arena, state)", "OK"), (f"{n}_run(arena, state)", "OK")]
    calls = [(f"{n}_run(0)", "ERR_NULL"), (f"{n}_run(arena + 1)", "ERR_ARENA_ALIGN"),
             (f"{n}_run(arena + 8)", "ERR_ARENA_ALIGN"), (f"{n}_run_frame(0, 0)", "ERR_NULL"),
             (f"{n}_run_frame(arena + 2, 0)", "ERR_ARENA_ALIGN"), (f"{n}_reset(0)", "OK"),
             (f"{n}_run_frame(arena, 0)", "OK"), (f"{n}_run(arena)", "OK")]
    if len(r.inputs) == 1 and len(r.outputs) == 1:
        io = "(const void *)in0, (void *)out0"
        calls += [(f"{n}_invoke({io}, arena + 1)", "ERR_ARENA_ALIGN"), (f"{n}_invoke(0, (void *)out0, arena)", "ERR_NULL"),
                  (f"{n}_invoke({io}, 0)", "ERR_NULL"), (f"{n}_invoke({io}, arena)", "OK")]
    if r.options is not None and r.options.max_step_instructions:
        calls += [(f"{n}_step(0)", "ERR_NULL"), (f"{n}_step(arena + 4)", "ERR_ARENA_ALIGN")]
    return calls


def status_main(r, checks: list[tuple[str, str]] = (), semihosting: bool = False) -> str:
    """The C main for CompileResult ``r``: every call of ``_calls`` and then ``checks``, a list of (C int
    expression, C int expression that it must equal), e.g. a name macro against its expected value."""
    n, N = r.name, r.name.upper()
    put = ('#include "tinyfuse/semihost.h"\n'
           "static void put_int(int v) { if (v < 0) { tf_sh_puts(\"-\"); v = -v; } tf_sh_putu((uint32_t)v); }\n"
           "static void report(int i, int got, int want) { tf_sh_puts(\"check \"); put_int(i); tf_sh_puts(\" \"); "
           "put_int(got); tf_sh_puts(\" \"); put_int(want); tf_sh_puts(\"\\n\"); }\n") if semihosting else (
           "#include <stdio.h>\n"
           "static void report(int i, int got, int want) { printf(\"check %d %d %d\\n\", i, got, want); }\n")
    bufs = [f"static uint8_t arena[{N}_ARENA_SIZE + 16] __attribute__((aligned(16)));"]
    if r.states:
        bufs.append(f"static uint8_t state[{N}_STATE_SIZE + 16] __attribute__((aligned(16)));")
    uses_io = r.io_caller or (not r.states and len(r.inputs) == 1 and len(r.outputs) == 1)
    for kind, ts in (("in", r.inputs), ("out", r.outputs)) if uses_io else ():
        bufs += [f"static uint8_t {kind}{i}[{t.nbytes} + 16] __attribute__((aligned(16)));" for i, t in enumerate(ts)]
    body = [f"  bad += expect({i}, {call}, {N}_{want});" for i, (call, want) in enumerate(_calls(r), 1)]
    body += [f"  bad += expect({100 + i}, (int)({got}), (int)({want}));" for i, (got, want) in enumerate(checks)]
    return "\n".join([
        "#include <stdint.h>", put, f'#include "{n}.h"', *bufs,
        "static int expect(int i, int got, int want) { if (got == want) return 0; report(i, got, want); return 1; }",
        "int main(void)", "{", "  int bad = 0;", *body, "  return bad;", "}", ""])
