#!/usr/bin/env python3
"""Operator parity with TensorFlow Lite Micro: one row per operator the installed ``tflite_micro``
package registers, with

- TFLM's types: the ``kTfLite<Type>`` names in the kernel source file that defines the op's
  ``Register_*`` function (found through micro_mutable_op_resolver.h's AddBuiltin / AddCustom lines),
  read from a tflite-micro source tree (``--tflm-src``: a checkout or a bare git directory; without
  one the column says "see TFLM"). A file that registers several ops gives their union (marked ``*``);
  the types a file names are an upper bound of what its Prepare accepts;
- whether tinyfuse's TFLite frontend converts it (frontend/tflite/registry.py CONVERTERS / EFFECTS) and
  for which element types (registry TYPES, default float32 and quantized int8, plus reader.EXTRA_TYPES;
  ``int8 raw``: unquantized int8 accepted too);
- the TFLM twin fuzzer's draws whose models contain it (tests/fuzz/tflm_twin.py OPS, ``--seeds`` seeds
  per draw: the opcodes of the built .tflite models);
- the kernel implementations tinyfuse has for it: the strategy families (tinyfuse/strategy) of the
  kernels compiled from the smallest drawn model holding the op, and the ISA classes of every
  implementation those families declare (portable = ``ref``); "—" without a draw.

TFLM's registered ops are found by asking the package: a one-op model per BuiltinOperator of the schema
(and per custom name among the strings of the package's ``_runtime.so``) is given to its interpreter
in a forked child; the op is registered unless TFLM reports "Failed to get registration" (a child that
crashes in the op's Prepare found the registration first).

    python3 benchmarks/op_parity.py --tflm-src ../tflite-micro        # writes benchmarks/data/op_parity.md
    python3 benchmarks/op_parity.py --no-kernels --out /tmp/parity.md
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TYPE_NAMES = {"Float32": "float32", "Float16": "float16", "Float64": "float64", "Int4": "int4", "Int8": "int8",
              "Int16": "int16", "Int32": "int32", "Int64": "int64", "UInt8": "uint8", "UInt16": "uint16",
              "UInt32": "uint32", "UInt64": "uint64", "Bool": "bool", "Complex64": "complex64", "String": "string"}
NOT_FOUND = "Failed to get registration"


# ----------------------------------------------------------------------------- TFLM: registered ops
def _oneop(o, code: int | None, custom: str | None) -> bytes:
    S = o.S
    x = o.me.Tensor(shape=(1, 4), dtype=S.TensorType.FLOAT32, name="x")
    y = o.me.Tensor(shape=(1, 4), dtype=S.TensorType.FLOAT32, name="y")
    op = o.me.Operator(opcode=S.BuiltinOperator.CUSTOM if custom else code, inputs=[x], outputs=[y],
                       custom_code=custom)
    m = o.me.Model(description="op_parity probe")
    m.add_subgraph(tensors=[x, y], operators=[op], inputs=[x], outputs=[y])
    return bytes(m.build())


def registered(o, code: int | None = None, custom: str | None = None) -> bool:
    """Whether TFLM's interpreter finds a registration for builtin ``code`` or custom op ``custom``
    (module doc: a forked child, its stdout/stderr read back)."""
    import tflite_micro
    model = _oneop(o, code, custom)
    fd, path = tempfile.mkstemp()
    pid = os.fork()
    if pid == 0:                                       # child: TFLM prints to fds 1 and 2
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        try:
            tflite_micro.runtime.Interpreter.from_bytes(model, arena_size=1 << 16)
        except BaseException:  # noqa: BLE001 - any failure after the lookup means "registered"
            pass
        os._exit(0)
    os.waitpid(pid, 0)
    with open(path, errors="replace") as f:
        text = f.read()
    os.close(fd)
    os.unlink(path)
    return NOT_FOUND not in text


def tflm_ops(o) -> tuple[list[str], list[str]]:
    """(builtin names, custom names) TFLM's Python interpreter registers (module doc)."""
    import tflite_micro
    names = {v: k for k, v in vars(o.S.BuiltinOperator).items() if not k.startswith("_")}
    builtins = sorted(names[c] for c in names if names[c] != "CUSTOM" and registered(o, code=c))
    so = Path(tflite_micro.__file__).parent / "python" / "tflite_micro" / "_runtime.so"
    strings = sorted({s.decode() for s in re.findall(rb"(?<=\x00)[A-Za-z][A-Za-z0-9_]{3,40}(?=\x00)", so.read_bytes())})
    assert not registered(o, custom="NoSuchOperator_op_parity"), "the probe cannot tell a missing op"
    customs = [s for s in strings if s not in vars(o.S.BuiltinOperator) and registered(o, custom=s)]
    return builtins, customs


# ----------------------------------------------------------------------------- TFLM: kernel types
class Source:
    """A tflite-micro tree: a checkout, or a git directory read at HEAD."""

    def __init__(self, path: str):
        self.path = Path(path)
        self.git = not (self.path / "tensorflow").is_dir()

    def _git(self, *args) -> str:
        return subprocess.run(["git", "--git-dir", str(self.path), *args], check=True, capture_output=True,
                              text=True).stdout

    def files(self, under: str) -> list[str]:
        if self.git:
            return self._git("ls-tree", "-r", "--name-only", "HEAD", under).split()
        return [str(p.relative_to(self.path)) for p in (self.path / under).rglob("*") if p.is_file()]

    def read(self, name: str) -> str:
        return self._git("show", f"HEAD:{name}") if self.git else (self.path / name).read_text(errors="replace")

    def commit(self) -> str:
        try:
            return self._git("rev-parse", "HEAD").strip() if self.git else \
                subprocess.run(["git", "-C", str(self.path), "rev-parse", "HEAD"], capture_output=True,
                               text=True).stdout.strip() or "unknown"
        except subprocess.CalledProcessError:
            return "unknown"


def kernel_types(src: Source) -> dict[str, tuple[str, str, bool]]:
    """op (builtin name or custom name) -> (types, kernel file, file shared with other ops)."""
    resolver = src.read("tensorflow/lite/micro/micro_mutable_op_resolver.h")
    reg = {}
    for chunk in re.split(r"TfLiteStatus Add(?=\w+\()", resolver)[1:]:      # one Add<Op>() method each
        fn = re.search(r"(Register_\w+)\(\)", chunk)
        op = re.search(r'BuiltinOperator_(\w+)|AddCustom\(\s*"(\w+)"', chunk)
        if fn and op:
            reg[op[1] or op[2]] = fn[1]
    defined: dict[str, str] = {}
    texts: dict[str, str] = {}
    for f in src.files("tensorflow/lite/micro/kernels") + src.files("signal/micro/kernels"):
        if not f.endswith(".cc") or f.endswith("_test.cc") or f.count("/") > 4:
            continue                                   # the reference kernels only, not arch folders
        texts[f] = src.read(f)
        for name in re.findall(r"TFLMRegistration\*?\s+(Register_\w+)\(\)\s*\{", texts[f]):
            defined.setdefault(name, f)
    per_file: dict[str, int] = {}
    for fn in reg.values():
        if fn in defined:
            per_file[defined[fn]] = per_file.get(defined[fn], 0) + 1
    out = {}
    for op, fn in reg.items():
        f = defined.get(fn)
        if f is None:
            continue
        common = f[:-3] + "_common.cc"                 # add_common.cc, reduce_common.cc, ...
        text = texts[f] + texts.get(common, "")
        found = {TYPE_NAMES[t] for t in re.findall(r"kTfLite(\w+?)\b", text) if t in TYPE_NAMES}
        types = ", ".join(t for t in TYPE_NAMES.values() if t in found)
        name = f.rsplit("/", 1)[1] + (" + _common" if common in texts else "")
        out[op] = (types, name, per_file[f] > 1)
    return out


# ----------------------------------------------------------------------------- tinyfuse
def tinyfuse_support(key: str) -> str:
    """'—' when tinyfuse has no converter of ``key``, else the element types it takes."""
    from tinyfuse.frontend.tflite import reader
    from tinyfuse.frontend.tflite.registry import CONVERTERS, EFFECTS, TYPES
    if key in EFFECTS:
        return "yes (state, control flow or compile-time decode: no tensor types)"
    if key not in CONVERTERS:
        return "—"
    types, raw = TYPES.get(key, (("float32", "int8"), False))
    types = list(dict.fromkeys((*types, *reader.EXTRA_TYPES.get(key, ()))))
    return ", ".join(t + (" raw" if t == "int8" and raw else "") for t in types)


def opcodes(o, model: bytes) -> list[str]:
    """The operator names of every subgraph of a .tflite model (custom ops as CUSTOM 'name')."""
    S = o.S
    names = {v: k for k, v in vars(S.BuiltinOperator).items() if not k.startswith("_")}
    m = S.Model.GetRootAs(model, 0)
    codes = []
    for i in range(m.OperatorCodesLength()):
        c = m.OperatorCodes(i)
        b = max(c.BuiltinCode(), c.DeprecatedBuiltinCode())
        codes.append(f"CUSTOM '{c.CustomCode().decode()}'" if b == S.BuiltinOperator.CUSTOM else names[b])
    return [codes[g.Operators(k).OpcodeIndex()] for j in range(m.SubgraphsLength())
            for g in [m.Subgraphs(j)] for k in range(g.OperatorsLength())]


def twin_draws(o, seeds: int) -> tuple[dict[str, list[str]], dict[str, tuple]]:
    """op -> the twin fuzzer draws whose models hold it; op -> (ops, model, compile options) of its
    smallest model."""
    from tests.fuzz.tflm_twin import OPS
    draws: dict[str, list[str]] = {}
    sample: dict[str, tuple] = {}
    for key, fn in OPS.items():
        for seed in range(seeds):
            try:
                d = fn(np.random.default_rng(seed))
            except Exception as e:  # noqa: BLE001 - reported, the table goes on
                print(f"draw {key} seed {seed}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            ops = opcodes(o, d.model)
            for op in set(ops):
                if key not in draws.setdefault(op, []):
                    draws[op].append(key)
                if op not in sample or len(ops) < sample[op][0]:
                    sample[op] = (len(ops), d.model, d.options)
    return draws, sample


def kernel_isas(model: bytes, options: dict) -> str:
    """The ISA classes of the implementations of the strategy families of ``model``'s kernels (compiled
    for the host with the draw's compile ``options``)."""
    from tinyfuse.driver import compile_model
    from tinyfuse.errors import TinyfuseError
    from tinyfuse.strategy import by_name, impls
    try:
        result = compile_model(model, **{k: v for k, v in options.items() if k != "tune"})
    except TinyfuseError as e:
        return f"refused ({str(e)[:60]}...)"
    isas: list[str] = []
    for k in result.kernels:
        try:
            family = by_name(k.kind).family
        except KeyError:
            isas.append("ref")
            continue
        isas += [i.isa for i in impls(family)]
    order = ("ref", "arm_dsp", "arm_mve", "arm_fpu", "sparse")
    return ", ".join(("portable" if i == "ref" else i) for i in order if i in isas) or "(no kernel)"


# ----------------------------------------------------------------------------- the table
def rows(o, args) -> tuple[list[dict], dict]:
    builtins, customs = tflm_ops(o)
    types = kernel_types(Source(args.tflm_src)) if args.tflm_src else {}
    draws, sample = twin_draws(o, args.seeds)
    out = []
    for name, custom in [(b, False) for b in builtins] + [(c, True) for c in customs]:
        key = f"CUSTOM '{name}'" if custom else name
        t = types.get(name)
        tflm = "see TFLM" if t is None else f"{t[0] or 'none named'}{' *' if t[2] else ''} ({t[1]})"
        conv = tinyfuse_support(key)
        kern = "—"
        if args.kernels and key in sample and conv != "—":
            n, model, options = sample[key]
            kern = kernel_isas(model, options) + ("" if n == 1 else f" ({n}-op model)")
        out.append(dict(op=key, tflm=tflm, tinyfuse=conv, draws=draws.get(key, []), kernels=kern))
    return out, dict(builtins=len(builtins), customs=len(customs))


def render(table: list[dict], counts: dict, args, src_commit: str) -> str:
    conv = [r for r in table if r["tinyfuse"] != "—"]
    fuzzed = [r for r in conv if r["draws"]]
    missing = [r["op"] for r in table if r["tinyfuse"] == "—"]
    lines = [
        "# Operator parity: TFLite Micro vs tinyfuse's TFLite frontend", "",
        "Written by `python3 benchmarks/op_parity.py` (module doc: how each column is found). "
        f"TFLM ops: the installed tflite_micro package ({_tflm_version()}); TFLM types: kernel sources at "
        f"tflite-micro {src_commit[:12] if args.tflm_src else '(none given)'}, the `kTfLite*` types its kernel file "
        "names (an upper bound of what Prepare accepts; `*`: the file registers several ops, their union); twin draws: "
        f"{args.seeds} seeds per draw of tests/fuzz/tflm_twin.py; kernels: the strategy families of the "
        "kernels of the smallest drawn model.", "",
        f"**Totals**: TFLM registers {counts['builtins'] + counts['customs']} ops ({counts['builtins']} builtin, "
        f"{counts['customs']} custom); tinyfuse converts {len(conv)}; {len(fuzzed)} of those have twin-fuzz "
        f"draws; {len(missing)} missing.", "",
        "| TFLM op | TFLM types (kernel file) | tinyfuse converts (types) | twin-fuzz draws | kernels |",
        "|---|---|---|---|---|"]
    for r in table:
        d = ", ".join(r["draws"][:8]) + (f" (+{len(r['draws']) - 8})" if len(r["draws"]) > 8 else "")
        lines.append(f"| {r['op']} | {r['tflm']} | {r['tinyfuse']} | {d or '—'} | {r['kernels']} |")
    lines += ["", f"**Missing in tinyfuse ({len(missing)})**: " + ", ".join(missing), ""]
    return "\n".join(lines)


def _tflm_version() -> str:
    import tflite_micro
    return "tflite_micro " + str(getattr(tflite_micro, "__version__", "unknown"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="the TFLM operator parity table (module doc)")
    ap.add_argument("--tflm-src", default=os.environ.get("TFLM_SRC"),
                    help="tflite-micro source: a checkout or a bare git directory (TFLM types column)")
    ap.add_argument("--seeds", type=int, default=6, help="seeds per twin-fuzz draw")
    ap.add_argument("--no-kernels", dest="kernels", action="store_false", help="skip compiling the samples")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "data" / "op_parity.md"))
    args = ap.parse_args(argv)
    import warnings
    warnings.filterwarnings("ignore")
    from tests.builders.tflm_cases import tflm_oneop
    o = tflm_oneop()
    t0 = time.time()
    table, counts = rows(o, args)
    text = render(table, counts, args, Source(args.tflm_src).commit() if args.tflm_src else "")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text.split("\n\n")[2])
    print(f"wrote {args.out} in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
