"""The command line's arguments: the exit codes, the options every command shares, one parser per
command (``build_parser``)."""
from __future__ import annotations

import argparse


from .._version import __version__
from ..harness.cycles import clock_mhz
from ..options import IO_BUFFERS, KERNEL_CHOICES, SPARSE_CHOICES
from ..quantize import add_parser as add_quantize_parser
from ..validate import criterion
from ..memory import PLANNERS
from ..driver import PASS_CHOICES
from ..targets import TARGETS
from ..tune.command import RAM_LIMIT_HELP, int_at_least, specialize_options


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


def build_options(p: argparse.ArgumentParser) -> None:
    """The compile options that change a build (``cost.records.build_options``): compile, run, bench,
    report, validate, project and tune take them alike (tune records them with every measured build)."""
    p.add_argument("--disable-pass", action="append", default=[], metavar="NAME", choices=PASS_CHOICES,
                   help=f"skip a pass of the pipeline or an ONNX layer recognition (repeatable): {', '.join(PASS_CHOICES)}")
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
    p.add_argument("--input-rows", type=_non_negative, default=0, metavar="N",
                   help="the input arrives by rows: <name>_push_rows(arena, rows, n <= N, out...) feeds a ring read by "
                   "the first conv/depthwise/fused chain; the arena holds no input frame, outputs are caller buffers "
                   "(default 0: whole frames)")
    p.add_argument("--kernels", default=None, choices=KERNEL_CHOICES,
                   help="kernel variants: auto (the target's SIMD kernels: arm_dsp on M4/M7/M33, arm_mve on M55; "
                   "default, or $TINYFUSE_KERNELS), ref (portable C everywhere) or one variant")
    p.add_argument("--sparse", default=None, choices=SPARSE_CHOICES,
                   help="weight sparsity: auto (default, or $TINYFUSE_SPARSE: kernels whose int8 weights have enough "
                   "zeros run without them when the cost model says it pays), off (dense kernels only) or on (every "
                   "int8 conv/FC kernel sparse, for measurements)")
    p.add_argument("--scratch-bytes", type=_non_negative, default=None, metavar="N",
                   help="working-set budget of a poly-fused kernel's line buffers (default: the target's)")
    p.add_argument("--skip-zero-activations", action="store_true", help="int8 pointwise conv / fully connected "
                   "kernels skip groups of input activations at the zero point (exact; data-dependent time)")
    p.add_argument("--wcet", action="store_true", help="real-time mode: no data-dependent branches (bench: per-kernel "
                   "instructions over 20 random inputs + --input, min/max and the bound)")
    p.add_argument("--max-step-instructions", type=_positive, default=None, metavar="N", help="also emit "
                   "<name>_step(arena), each call at most about N instructions (kernels split by output rows)")


def _common(p: argparse.ArgumentParser, model_option: bool = False) -> None:
    if model_option:      # tinyfuse project DIR --model M
        p.add_argument("--model", required=True, help="an ONNX or TFLite file (told apart by content, not suffix)")
    else:
        p.add_argument("model", help="an ONNX or TFLite file (told apart by content, not suffix)")
    p.add_argument("--target", default="host", choices=list(TARGETS), metavar="TARGET",
                   help=f"target to compile for: {', '.join(TARGETS)} (default host; all but host run under qemu)")
    p.add_argument("--name", help="C identifier prefix of the generated API (default: file stem)")
    p.add_argument("--dump-ir", metavar="DIR", help="write the IR after each pass into DIR")
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
    build_options(p)
    specialize_options(p)
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
    from ..project.command import add_archive_options
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
    from ..project.command import add_parser
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
    from ..tune.command import add_parser
    add_parser(sub, _epilog, [n for n, tg in TARGETS.items() if not tg.is_host], build_options)
