"""The command-line side of ``tinyfuse project`` and ``compile --archive`` / ``--format archive``
(cli.py hands over its shared option set and its compile step, as tune/command.py does)."""
from __future__ import annotations

from pathlib import Path

from ..errors import TinyfuseError
from ..harness.inputs import load_inputs
from ..targets import get_target


def add_archive_options(c) -> None:
    """compile's archive options (its -o doubles as the archive path with --format archive)."""
    c.add_argument("--format", default="dir", choices=("dir", "archive"), help="dir: the files into OUTDIR (default); "
                   "archive: one tar of the sources, headers, metadata.json and the report (layout in the README)")
    c.add_argument("--archive", metavar="FILE.tar", help="the same as --format archive -o FILE.tar")


def archive_output(args) -> str | None:
    """compile's archive file (--archive, or -o with --format archive), None for a directory output;
    TinyfuseError when the options name no output or two."""
    if args.archive is not None and args.output is not None:
        raise TinyfuseError("compile: give -o OUTDIR or --archive FILE.tar, not both")
    if args.archive is None and args.output is None:
        raise TinyfuseError("compile: give -o OUTDIR (or --archive FILE.tar)")
    if args.archive is None and args.format != "archive":
        return None
    out = args.archive if args.archive is not None else args.output
    if not out.strip():
        raise TinyfuseError("compile: empty archive name")
    return out


def write_archive_output(args, result, archive: str) -> int:
    from .archive import archive_path, write_archive
    path = write_archive(result, get_target(args.target), archive_path(archive, result.name))
    print(f"wrote {path} ({len(result.files) + 2} files under {result.name}/: sources, headers, metadata.json, report)")
    return 0


def add_parser(sub, epilog: dict, common, non_negative) -> None:
    """tinyfuse project DIR --model M: ``common(parser, model_option=True)`` adds the compile options."""
    p = sub.add_parser("project", help="write a CMake project (main.c, board start-up and linker script, the model) "
                       "that builds with arm-none-eabi-gcc and runs under qemu as written, or with --target host, gcc",
                       **epilog)
    p.add_argument("dir", metavar="DIR", help="the project directory (created if missing; a file tinyfuse did not "
                   "write there, or one edited since, stops the command)")
    common(p, model_option=True)
    p.add_argument("--input", metavar="FILE", help="the example input main.c feeds: .npy, or .npz with key 'input' or "
                   "the graph input names (default: seeded random)")
    p.add_argument("--seed", type=non_negative, default=0, help="seed of the random input when --input is absent")


def run_project(args, compile_model) -> int:
    """tinyfuse project: compile (``compile_model(args)``), then write and describe the project."""
    from .cmake import project_board, project_commands, write_project
    target = get_target(args.target)
    result = compile_model(args)
    project_board(result, target)            # an unsupported target stops before anything is written
    inputs = load_inputs(args.input, result.inputs, args.seed)
    source = f"from {Path(args.input).name}" if args.input else f"seeded random, --seed {args.seed}"
    out, files = write_project(result, target, args.dir, inputs, Path(args.model).name, source)
    print(f"wrote {len(files) + 1} files to {out}/ (model {result.name} for {target.name}); build and run:")
    for line in project_commands(target, str(out)):
        print(f"  {line}")
    return 0
