#!/usr/bin/env python3
"""Published ONNX models as their exporters wrote them, compiled and run against onnxruntime (host
build; `tinyfuse run --json`), with the flags a user needs (--input-shape for dynamic dims, --bind for a
constant input). The models are not in this repository: give the folder they were saved in.

    python benchmarks/published_onnx.py DIR [--out benchmarks/data/published_onnx.md]

DIR holds (name: source repository, path at the commit given):
  silero_vad.onnx   snakers4/silero-vad @806dcba src/silero_vad/data/silero_vad.onnx (MIT): If on the sample rate
  slim320.onnx      Linzaer/Ultra-Light-Fast-Generic-Face-Detector-1MB models/onnx/version-slim-320.onnx (MIT): Exp box decoding
  rfb320.onnx       same repository, models/onnx/version-RFB-320.onnx
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

MODELS = {
    "silero_vad.onnx": ["--input-shape", "input=1x512", "--input-shape", "state=2x1x128", "--bind", "sr=16000"],
    "slim320.onnx": [],
    "rfb320.onnx": [],
}


def run(path: Path, flags: list[str]) -> dict:
    proc = subprocess.run([sys.executable, "-m", "tinyfuse", "run", str(path), "--json", *flags], capture_output=True,
                          text=True)
    if proc.returncode not in (0, 1):
        return {"exit": proc.returncode, "error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return {"exit": proc.returncode, **json.loads(proc.stdout)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    lines = ["| model | flags | exit | verdict vs onnxruntime | max abs diff | kernels | arena B | weights B |",
             "|---|---|---:|---|---:|---:|---:|---:|"]
    for name, flags in MODELS.items():
        path = Path(a.dir) / name
        if not path.is_file():
            continue
        r = run(path, flags)
        if "error" in r:
            lines.append(f"| {name} | {' '.join(flags)} | {r['exit']} | {r['error']} | | | | |")
            continue
        lines.append(f"| {name} | {' '.join(flags) or '-'} | {r['exit']} | {'match' if r.get('outputs_match') else 'MISMATCH'} | "
                     f"{r.get('max_abs_diff', '-')} | {r.get('kernels', '-')} | {r.get('arena_bytes', '-')} | {r.get('weights_bytes', '-')} |")
    text = "\n".join(lines)
    print(text)
    if a.out:
        Path(a.out).write_text("# Published ONNX models against onnxruntime\n\n`python benchmarks/published_onnx.py DIR` "
                               "(sources in the script's docstring)\n\n" + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
