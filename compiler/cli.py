"""tinyfuse command line: compile | run | bench | report | project | validate | tune | quantize.

Exit codes (the contract a script can rely on; also in ``--help`` and the README):
0 success; 1 the generated C's outputs do not match the reference (run) or a validate --fail-under
criterion fails; 2 user error (bad model, unsupported op, bad option or path): one ``error:`` line on
stderr; 3 internal error (a tinyfuse bug): one ``error: internal error in tinyfuse X.Y: ... please report``
line; 130 Ctrl-C (one line); 141 stdout closed by its reader (``| head``; nothing printed). ``--debug`` adds
the traceback; without it none reaches the user.
"""
from __future__ import annotations

import argparse
import errno
import json
import os
import select
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

import numpy as np

from ._version import __version__
from .codegen.labels import read_labels
from .errors import TinyfuseError, interrupted
from .harness.cycles import clock_mhz, time_estimate, time_text
from .harness.inputs import load_inputs
from .harness.oracles import onnxruntime_outputs, reference_outputs, tflm_outputs  # noqa: F401 (re-exported)
from .harness.verdict import compare, is_quantized, output_lines, output_lsb, top_classes, verdict_line  # noqa: F401
from .options import IO_BUFFERS, KERNEL_CHOICES, SPARSE_CHOICES
from .quantize import add_parser as add_quantize_parser, cmd_quantize
from .validate import criterion
from .memory import PLANNERS
from .passes.pipeline import PASS_NAMES
from .targets import TARGETS, get_target
from .tune.command import RAM_LIMIT_HELP, int_at_least
from .userdir import input_file

EXIT_OK, EXIT_MISMATCH, EXIT_USER_ERROR, EXIT_INTERNAL_ERROR = 0, 1, 2, 3
EXIT_PIPE_CLOSED = 141        # 128 + SIGPIPE, as a shell reports a program whose reader went away
EXIT_CODES_HELP = """exit codes:
  0  success
  1  the generated C's outputs do not match the reference (run), or a --fail-under criterion fails (validate)
  2  user error: bad model, unsupported operator, bad option or path (one 'error:' line)
  3  internal error in tinyfuse (one 'error:' line; please report it; --debug shows the traceback)
  130  interrupted (Ctrl-C; one 'error:' line)
  141  stdout was closed by its reader (tinyfuse ... | head); nothing printed"""


_non_negative = int_at_least(0)     # argparse type of --seed (numpy's seeds) and --scratch-bytes


def _positive(text: str) -> int:
    """argparse type of --frames: an integer >= 1."""
    v = _non_negative(text)
    if v < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return v


class _JoinPairs(argparse.Action):
    """--stateful given several times: the IN=OUT lists joined (as one comma-separated list)."""

    def __call__(self, parser, namespace, values, option_string=None):
        before = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, f"{before},{values}" if before else values)


def _common(p: argparse.ArgumentParser, model_option: bool = False) -> None:
    if model_option:      # tinyfuse project DIR --model M
        p.add_argument("--model", required=True, help="an ONNX or TFLite file (told apart by content, not suffix)")
    else:
        p.add_argument("model", help="an ONNX or TFLite file (told apart by content, not suffix)")
    p.add_argument("--target", default="host", choices=list(TARGETS), metavar="TARGET",
                   help=f"target to compile for: {', '.join(TARGETS)} (default host; all but host run under qemu)")
    p.add_argument("--name", help="C identifier prefix of the generated API (default: file stem)")
    p.add_argument("--disable-pass", action="append", default=[], metavar="NAME", choices=PASS_NAMES,
                   help=f"skip a pass of the pipeline (repeatable): {', '.join(PASS_NAMES)}")
    p.add_argument("--dump-ir", metavar="DIR", help="write the IR after each pass into DIR")
    p.add_argument("--planner", default="best", choices=list(PLANNERS), metavar="PLANNER",
                   help=f"memory planner: {', '.join(PLANNERS)} (default best)")
    p.add_argument("--rounding", default="double", choices=("double", "single"),
                   help="int8 requantization rounding: double (TFLM/CMSIS-NN default) or single")
    p.add_argument("--weights-dtype", default="float32", choices=("float32", "float16"),
                   help="float weights in flash: float32 (default) or float16 (half the bytes, converted at each "
                   "read; cores with FP16 conversion: host, cortex-m4/m7/m33/m55)")
    p.add_argument("--io-buffers", default="arena", choices=IO_BUFFERS,
                   help="where the model inputs and outputs live: arena (default: inside the arena, "
                   "<name>_input/_output) or caller (buffers the caller passes to <name>_run(arena, in..., out...): "
                   "a smaller arena, as TVM AOT / X-CUBE-AI)")
    p.add_argument("--kernels", default=None, choices=KERNEL_CHOICES,
                   help="kernel variants: auto (the target's SIMD kernels: arm_dsp on M4/M7/M33, arm_mve on M55; "
                   "default, or $TINYFUSE_KERNELS), ref (portable C everywhere) or one variant")
    p.add_argument("--sparse", default=None, choices=SPARSE_CHOICES,
                   help="weight sparsity: auto (default, or $TINYFUSE_SPARSE: kernels whose int8 weights have enough "
                   "zeros run without them when the cost model says it pays), off (dense kernels only) or on (every "
                   "int8 conv/FC kernel sparse, for measurements)")
    p.add_argument("--scratch-bytes", type=_non_negative, default=None, metavar="N",
                   help="working-set budget of a poly-fused kernel's line buffers (default: the target's)")
    p.add_argument("--tuning-records", metavar="FILE", help="JSON lines from `tinyfuse tune`: build the recorded "
                   "choice (the fastest measured build at no more RAM than the default), or with --ram-limit the "
                   "fastest measured build that fits")
    p.add_argument("--ram-limit", metavar="BYTES", help=RAM_LIMIT_HELP)
    p.add_argument("--flash-limit", metavar="BYTES", help="with --tuning-records: the fastest measured build whose "
                   "model flash (code + weights) fits, at no more RAM than the default (or --ram-limit); K/M suffixes")
    p.add_argument("--cost-model", metavar="FILE", help="a learned cost model (<records>.model.json from `tinyfuse "
                   "tune`) for --ram-limit without --tuning-records")
    p.add_argument("--stateful", metavar="IN=OUT,...", action=_JoinPairs, help="graph input/output pairs (names) that carry state "
                   "between runs: each IN becomes persistent state, updated from OUT after every run, zeroed by reset "
                   "(repeatable)")
    p.add_argument("--skip-zero-activations", action="store_true", help="int8 pointwise conv / fully connected "
                   "kernels skip groups of input activations at the zero point (exact; data-dependent time)")
    p.add_argument("--wcet", action="store_true", help="real-time mode: no data-dependent branches (bench: per-kernel "
                   "instructions over 20 random inputs + --input, min/max and the bound)")
    p.add_argument("--max-step-instructions", type=_positive, default=None, metavar="N", help="also emit "
                   "<name>_step(arena), each call at most about N instructions (kernels split by output rows)")
    p.add_argument("--debug", action="store_true", help="show tracebacks")


_LABELS = dict(dest="class_labels", metavar="FILE", help="class names, one per line, as many as output 0's last "
               "axis: <NAME>_LABELS[] / <NAME>_NUM_LABELS in the header (run: in the top-5; codegen/labels.py)")


def _execution(p: argparse.ArgumentParser) -> None:
    """Options of the commands that build and run the model (run, bench)."""
    p.add_argument("--input", metavar="FILE", help=".npy, or .npz with key 'input' or the graph input names")
    p.add_argument("--seed", type=_non_negative, default=0, help="seed of the random input when --input is absent")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--keep", metavar="DIR", help="build in DIR and keep it")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="tinyfuse", description="Compile ONNX and TFLite models to fused, "
                                 "dependency-free C.", epilog=EXIT_CODES_HELP,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"tinyfuse {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    _epilog = dict(epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    c = sub.add_parser("compile", help="generate C sources", **_epilog)
    _common(c)
    c.add_argument("-o", "--output", metavar="OUTDIR", help="directory for the generated files "
                   "(created if missing; '.' is fine); of other files, only stale ones tinyfuse wrote are removed; "
                   "with --format archive: the archive FILE.tar, or a directory that gets <name>.tar")
    from .project.command import add_archive_options
    add_archive_options(c)
    c.add_argument("--labels", **_LABELS)
    c.add_argument("--report", action="store_true", help="print fused groups and the memory plan")
    c.add_argument("--weights-section", metavar="NAME", help="linker section of the weights "
                   "(default .rodata.tinyfuse.weights)")
    c.add_argument("--arena-section", metavar="NAME", help="linker section <NAME>_ARENA_ATTR puts the arena in "
                   "(default .bss.tinyfuse.arena)")
    c.add_argument("--code-section", metavar="NAME", help="linker section of the model code (default .text.tinyfuse)")
    c.add_argument("--align", type=int, metavar="BYTES", help="alignment of weights and arena (default 16)")
    r = sub.add_parser("run", help="compile, build with gcc, run, compare with onnxruntime or TFLite Micro",
                       **_epilog)
    _common(r)
    _execution(r)
    r.add_argument("--labels", **_LABELS)
    r.add_argument("--tflite-ref", metavar="FILE", help="int8: also run FILE.tflite in TFLite Micro on the same "
                   "input and count exact matches (automatic for a .tflite model)")
    r.add_argument("--per-layer", action="store_true", help="trace every kernel's output of the build (host, or "
                   "--target's under qemu) against the numpy reference and, for a .tflite, TFLite Micro's tensor; "
                   "name the first divergent layer")
    r.add_argument("--frames", type=_positive, default=None, metavar="N", help="run N consecutive frames (a "
                   "streaming model keeps its state between them; --input: first axis = frames, else seeded random) "
                   "and compare every frame with TFLite Micro's stateful interpreter")
    b = sub.add_parser("bench", help="instructions, flash and RAM of one inference on a qemu target", **_epilog)
    _common(b)
    _execution(b)
    b.add_argument("--measure", action=argparse.BooleanOptionalAction, default=True,
                   help="count the loaded and stored bytes by region (SRAM, stack, flash) and the executed instruction "
                   "mix, with cycle and energy estimates: JSON keys traffic, instruction_mix, cycles_estimate, "
                   "energy_estimate_uj (default; --no-measure: instructions, flash and RAM only, about 1.5-2x "
                   "faster under qemu)")
    b.add_argument("--clock-mhz", type=clock_mhz, metavar="MHZ", help="also ESTIMATE milliseconds per inference "
                   "and per kernel at this core clock, from the cycle estimate (--no-measure: instructions as cycles)")
    _report_parser(sub, _epilog)
    _project_parser(sub, _epilog)
    _validate_parser(sub, _epilog)
    _tune_parser(sub, _epilog)
    add_quantize_parser(sub, _epilog)      # tinyfuse.quantize: float ONNX + samples -> int8 QDQ ONNX
    return ap


def _report_parser(sub, _epilog) -> None:
    """tinyfuse report: the per-kernel analysis, plots and (--measure) qemu instructions."""
    rep = sub.add_parser("report", help="per-kernel source layers, MACs, flash, RAM (X-CUBE-AI-style analysis), "
                         "fused groups, memory plan, roofline", **_epilog)
    _common(rep)
    rep.add_argument("-o", "--output", metavar="DIR", help="also write report.json, memory_plan.<fmt> and "
                     "roofline.<fmt> into DIR (plots need matplotlib: pip install tinyfuse[plots])")
    rep.add_argument("--measure", action="store_true", help="run once under qemu (--target a qemu target) and "
                     "add the executed instructions per kernel")
    rep.add_argument("--seed", type=_non_negative, default=0, help="seed of the random input of --measure")
    rep.add_argument("--plot-format", default="svg", choices=("svg", "png"), help="format of the plots (svg)")
    rep.add_argument("--json", action="store_true", help="print the report as one JSON object instead of text")


def _project_parser(sub, _epilog) -> None:
    from .project.command import add_parser
    add_parser(sub, _epilog, _common, _non_negative)


def _validate_parser(sub, _epilog) -> None:
    """tinyfuse validate: many inputs through the generated C and a reference."""
    v = sub.add_parser("validate", help="run many inputs through the generated C and a reference (TFLite Micro, "
                       "onnxruntime or --float-model): error, cosine, top-1 agreement, exact outputs, accuracy",
                       **_epilog)
    _common(v)
    v.add_argument("--inputs", required=True, metavar="FILE", help=".npz (one array per model input, first axis = "
                   "samples) or .npy for a single input")
    v.add_argument("--labels", metavar="FILE", help=".npy of class indices (N,) or one-hot rows (N, C): accuracy")
    v.add_argument("--float-model", metavar="FILE", help="compare with this float model (.onnx or .tflite) instead "
                   "of the model's own reference; int8 outputs are dequantized")
    v.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    v.add_argument("--no-progress", action="store_true", help="no progress bar")
    v.add_argument("--quantize-inputs", action="store_true", help="float samples for a quantized (int8/uint8/int16) "
                   "input are quantized with the input's scale and zero point (round half to even, saturating); "
                   "without it they are refused, as is any sample whose dtype is not the input's")
    v.add_argument("--fail-under", action="append", default=[], type=criterion, metavar="METRIC=VALUE",
                   help="exit 1 when METRIC is below VALUE on an output: exact (fraction of bit-exact samples), "
                   "top1 (top-1 agreement), cosine, accuracy (with --labels); repeatable, e.g. top1=0.9")


def _tune_parser(sub, _epilog) -> None:
    """tinyfuse tune: the knob search on Dask (tinyfuse.tune.command)."""
    from .tune.command import add_parser
    add_parser(sub, _epilog, [n for n, tg in TARGETS.items() if not tg.is_host])


def _compile(args, needs_board: bool = False):
    """compile_model with the command line's options. ``needs_board`` (run, bench, report --measure,
    validate): a model that fits no qemu board of the target is the one error of ``check_fits``
    instead of compile's NoBoardWarning."""
    if not needs_board:
        return _compile_model(args)
    from .targets import NoBoardWarning, check_fits
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBoardWarning)
        result = _compile_model(args)
    check_fits(result, get_target(args.target))
    return result


def _compile_model(args):
    from .driver import compile_model
    ram_limit, records = None, args.tuning_records
    if getattr(args, "ram_limit", None):
        from .tune.ramlimit import parse_bytes, predicted_config
        ram_limit = parse_bytes(args.ram_limit)
        if records is None:
            from .tune import TuningRecords
            pick = predicted_config(args.model, args.target, ram_limit, args.cost_model)
            records, ram_limit = TuningRecords(config=pick["config"]), None
            print(f"--ram-limit {args.ram_limit}: predicted build arena {pick['arena_bytes']} B, ~{pick['predicted']} "
                  f"instructions ({'; '.join(pick['changes']) or 'default'})", file=sys.stderr)
    flash_limit = None
    if getattr(args, "flash_limit", None):
        from .tune.ramlimit import parse_bytes
        flash_limit = parse_bytes(args.flash_limit, "--flash-limit")
    placement = {k: getattr(args, k, None) for k in ("weights_section", "arena_section", "code_section", "align")}
    return compile_model(args.model, target=args.target, name=args.name, disabled_passes=args.disable_pass,
                         dump_ir=args.dump_ir, planner=args.planner, rounding=args.rounding, kernels=args.kernels,
                         scratch_bytes=args.scratch_bytes, tuning_records=records, ram_limit=ram_limit,
                         stateful=getattr(args, "stateful", None) or (), weights_dtype=args.weights_dtype,
                         realtime=dict(skip_zero_activations=args.skip_zero_activations, wcet=args.wcet,
                                       max_step_instructions=args.max_step_instructions or 0), io_buffers=getattr(args, "io_buffers", "arena"),
                         sparse=getattr(args, "sparse", None), flash_limit=flash_limit,
                         labels=read_labels(getattr(args, "class_labels", None)), **placement)


def cmd_compile(args) -> int:
    from .project.command import archive_output, write_archive_output
    archive = archive_output(args)
    result = _compile(args)
    if archive is not None:
        return write_archive_output(args, result, archive)
    out = result.write(args.output)
    if args.report:
        from .report.text import compile_report_text
        print(compile_report_text(result))
    state = f", state {result.state_bytes} bytes" if result.states else ""
    print(f"wrote {', '.join(sorted(result.files))} to {out}/  "
          f"(kernels {len(result.steps)}, arena {result.arena_bytes} bytes{state}, weights {result.weights_bytes} bytes)")
    return 0


def cmd_project(args) -> int:
    from .project.command import run_project
    return run_project(args, _compile)


def cmd_report(args) -> int:
    from .report import report, report_files
    from .targets import get_target
    from .userdir import check_claim, claim, write_atomic
    target = get_target(args.target)
    if args.output:     # before anything runs: only files tinyfuse wrote there, or new ones (tinyfuse.userdir)
        check_claim(args.output, report_files(args.plot_format), "-o DIR")
    result = _compile(args, needs_board=args.measure)
    measured = measure_kernels(result, target, args.seed) if args.measure else None
    text, files = report(result, target, measured, args.plot_format if args.output else None)
    print(files["report.json"].decode().rstrip() if args.json else text)
    if args.output:
        out = claim(args.output, files, "-o DIR")
        for fname, body in files.items():
            write_atomic(out / fname, body)
        print(f"wrote {', '.join(sorted(files))} to {out}/", file=sys.stderr if args.json else sys.stdout)
    return 0


def measure_kernels(result, target, seed: int) -> dict:
    """bench_target's figures (instructions, measured traffic per kernel) of one run on a seeded random input."""
    from .harness.bench import bench_target
    from .harness.qemu import build_target
    if target.is_host:
        raise TinyfuseError("--measure runs under qemu: give --target a qemu target (cortex-m0 ... rv32imac)")
    with tempfile.TemporaryDirectory(prefix="tinyfuse_report_") as tmp:
        return bench_target(build_target(result, target, Path(tmp), load_inputs(None, result.inputs, seed)),
                            measure=True)


def _build_and_run(result, target, inputs, keep: str | None) -> tuple[list[np.ndarray], str | None]:
    """Build the generated C (host gcc or a qemu target) in ``keep`` (claimed first: harness/workdir.py)
    or a temp dir, run it on ``inputs``; (outputs, qemu board name or None)."""
    from .harness import build_host, run_host
    from .harness.qemu import build_target, run_target
    from .harness.workdir import keep_dir
    kept = keep_dir(keep, result, target, "run")
    with tempfile.TemporaryDirectory(prefix="tinyfuse_") as tmp:
        work = kept or Path(tmp)
        if target.is_host:
            return run_host(build_host(result, work), result, inputs), None
        build = build_target(result, target, work, inputs)
        return run_target(build), build.board.name


def cmd_run(args) -> int:
    """Compile, build, run, compare with the oracle (harness/verdict.py); exit 1 on a mismatch. ``--json``
    has the same keys for every model (stateful ones run frames: harness/frames.py)."""
    from .harness.frames import model_figures, single_frame_keys
    from .harness.per_layer_report import per_layer_lines
    target = get_target(args.target)
    if args.tflite_ref:
        input_file(args.tflite_ref, "--tflite-ref")
    result = _compile(args, needs_board=True)
    if args.frames or result.states:            # a stateful model runs frames from its reset state
        return _run_frames(args, target, result)
    inputs = load_inputs(args.input, result.inputs, args.seed)
    outs, board = _build_and_run(result, target, inputs, args.keep)
    host = result if target.is_host or not is_quantized(result) else \
        _compile(argparse.Namespace(**{**vars(args), "target": "host", "tuning_records": None, "ram_limit": None,
                                       "flash_limit": None}))   # the real-arithmetic oracle traces the host build
    # (portable kernels: the target's tuning records and limits do not apply; the target build is checked end to end)
    verdict, lines = compare(args.model, result, inputs, outs, args.rounding, args.tflite_ref, host)
    summary = {"model": result.name, "target": args.target, "board": board, "tinyfuse_version": __version__,
               **model_figures(result), **single_frame_keys(result, outs), "oracle_unavailable": verdict["oracle_error"],
               **verdict, "per_layer": None}
    status = EXIT_OK if summary["outputs_match"] else EXIT_MISMATCH     # --per-layer reports, never changes it
    lines += output_lines(result, outs)
    if board:
        lines.append(f"ran on {args.target} under qemu ({board})")
    lines += [verdict_line(summary),
              f"kernels {len(result.steps)}, arena_bytes {result.arena_bytes}, naive_bytes {result.naive_bytes} "
              f"(no planning), weights {result.weights_bytes} bytes, {result.macs} MACs"]
    if args.per_layer:   # the same build, compiled with the trace hook, run once more
        summary["per_layer"], more = per_layer_lines(args.model, result, target, inputs, args.keep)
        lines += more
    print(json.dumps(summary) if args.json else "\n".join(lines))
    return status


def _run_frames(args, target, result) -> int:
    """``run --frames N``: every frame against the oracle (harness/frames.py); exit 1 on a mismatch."""
    from .harness.frames import frame_inputs, frames_text, run_frames
    from .harness.per_layer_report import per_layer_lines
    frames = frame_inputs(args.input, result.inputs, args.frames or 1, args.seed)
    from .driver import stateful_pairs
    pairs = stateful_pairs(args.stateful) if args.stateful else ()
    from .harness.workdir import keep_dir
    kept = keep_dir(args.keep, result, target, "run", frames=True)
    summary = {"tinyfuse_version": __version__, **run_frames(args.model, result, target, frames, kept, pairs),
               "per_layer": None}
    text = frames_text(summary)
    if args.per_layer:              # the first frame, from the reset state
        summary["per_layer"], more = per_layer_lines(args.model, result, target, frames[0], args.keep)
        text += "\n" + "\n".join(more)
    print(json.dumps(summary) if args.json else text)
    return EXIT_OK if summary["outputs_match"] else EXIT_MISMATCH


def cmd_bench(args) -> int:
    from .harness.bench import bench_target
    from .harness.realtime import realtime_figures
    from .harness.qemu import build_target
    from .harness.workdir import keep_dir
    from .targets import TARGETS, get_target
    target = get_target(args.target)
    if target.is_host:
        raise TinyfuseError(f"bench runs on a qemu target: --target one of {', '.join(t for t in TARGETS if t != 'host')}")
    result = _compile(args, needs_board=True)
    inputs = load_inputs(args.input, result.inputs, args.seed)
    kept = keep_dir(args.keep, result, target, "bench")
    with tempfile.TemporaryDirectory(prefix="tinyfuse_") as tmp:
        build = build_target(result, target, kept or Path(tmp), inputs)
        figures = bench_target(build, measure=args.measure)
        figures |= realtime_figures(build, args.wcet, inputs, args.seed)
    if args.clock_mhz:
        figures["time_estimate_ms"] = time_estimate(figures, args.clock_mhz)
    if args.json:
        print(json.dumps(figures))
        return 0
    from .harness.measure_text import bench_text
    print(bench_text(figures))
    if args.measure:
        from .harness.measure_text import measured_text
        print(measured_text(figures))
    if args.clock_mhz:
        print("\n".join(time_text(figures["time_estimate_ms"])))
    return 0


def cmd_validate(args) -> int:
    from .validate import validate, validate_text
    s = validate(args.model, args.inputs, labels=args.labels, target=args.target, float_model=args.float_model,
                 progress=not args.no_progress and not args.json, result=_compile(args, needs_board=True),
                 quantize_inputs=args.quantize_inputs, fail_under=args.fail_under)
    print(json.dumps(s) if args.json else validate_text(s))
    return EXIT_OK if s["passed"] else EXIT_MISMATCH


def cmd_tune(args) -> int:
    from .tune.command import cmd_tune as run
    return run(args)


COMMANDS = {"compile": cmd_compile, "run": cmd_run, "bench": cmd_bench, "report": cmd_report, "tune": cmd_tune,
            "validate": cmd_validate, "project": cmd_project, "quantize": cmd_quantize}


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    """Compiler warnings (a node left in float, a possible int32 overflow) as one ``warning:`` line."""
    print(f"warning: {message}", file=file or sys.stderr)


def _internal_error(e: BaseException) -> str:
    first = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
    return (f"error: internal error in tinyfuse {__version__}: {type(e).__name__}{': ' + first if first else ''}"
            " — please report it (rerun with --debug for the traceback)")


def _stdout_closed() -> bool:
    """True when stdout is a pipe whose reader went away (poll reports an error on its write end)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (AttributeError, OSError, ValueError):      # no poll (Windows), no file descriptor
        return True


def _pipe_closed() -> int:
    """stdout's reader went away (``tinyfuse report ... | head -1``): nothing more to say, EXIT_PIPE_CLOSED.
    stdout becomes /dev/null so the interpreter's last flush stays quiet."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_PIPE_CLOSED


def main(argv=None) -> int:
    """Run one command and return its exit code (module doc); never raises. argparse usage errors
    return 2 and --help/--version 0; Ctrl-C prints one line and returns 130; a closed stdout (``| head``)
    returns 141 quietly."""
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as e:   # argparse: usage error (2, message already printed) or --help/--version (0)
            return e.code if isinstance(e.code, int) else EXIT_USER_ERROR
        if not args.debug:
            warnings.showwarning = _one_line_warning
        return _run_command(args)
    except KeyboardInterrupt:
        return interrupted()
    except BrokenPipeError:
        return _pipe_closed()


def _user_error(args, e: Exception) -> int:
    if args.debug:
        traceback.print_exc()
    msg = e if isinstance(e, TinyfuseError) else f"{e.filename or ''}: {e.strerror or e}".lstrip(": ")
    print(f"error: {msg}", file=sys.stderr)
    return EXIT_USER_ERROR


def _run_command(args) -> int:
    """The command of ``args``, its errors as one line and an exit code (module doc); stdout flushed,
    so a closed pipe shows here (BrokenPipeError) and not at the interpreter's exit."""
    try:
        status = COMMANDS[args.command](args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        if _stdout_closed():
            raise
        return _user_error(args, OSError(errno.EPIPE, "a pipe tinyfuse wrote to was closed"))
    except (TinyfuseError, OSError) as e:   # OSError: a path the user gave (unreadable, read-only, ...)
        return _user_error(args, e)
    except Exception as e:   # a tinyfuse bug
        if args.debug:
            traceback.print_exc()
        print(_internal_error(e), file=sys.stderr)
        return EXIT_INTERNAL_ERROR


if __name__ == "__main__":
    sys.exit(main())
