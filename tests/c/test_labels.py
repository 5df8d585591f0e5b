"""--labels FILE: class names in the generated header (<NAME>_LABELS, <NAME>_NUM_LABELS) as C strings
that a C program prints back byte for byte (quotes, backslashes, '??' trigraph starts, UTF-8), in
metadata.json and in run's top-5; a count that is not output 0's last axis is one error line."""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from tinyfuse.cli import main
from tinyfuse.codegen.labels import c_string
from tests.conftest import require_programs, shared_or_skip, tflm_run

NAMES = ["down", 'say "go"', "left\\right", "no??=", "café", "naïve ☃", "on", "right", "stop", "up", "yes",
         "_unknown_"]


def test_c_string_escapes():
    assert c_string('a"b\\c?d') == '"a\\"b\\\\c\\?d"'
    assert c_string("é\t") == '"\\303\\251\\011"'


def test_labels_in_the_header_read_back_by_c(tmp_path, capsys):
    require_programs("gcc")
    model = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    (tmp_path / "labels.txt").write_text("\n".join(NAMES) + "\n\n", encoding="utf-8")      # trailing blank line: ok
    out = tmp_path / "out"
    assert main(["compile", str(model), "-o", str(out), "--name", "kws", "--labels", str(tmp_path / "labels.txt")]) == 0
    capsys.readouterr()
    header = (out / "kws.h").read_text()
    assert "#define KWS_NUM_LABELS 12" in header and "extern const char *const KWS_LABELS[KWS_NUM_LABELS];" in header
    assert json.loads((out / "metadata.json").read_text())["labels"] == NAMES
    (tmp_path / "main.c").write_text('#include <stdio.h>\n#include "kws.h"\nint main(void) {\n  int i;\n'
                                     '  for (i = 0; i < KWS_NUM_LABELS; ++i) printf("%s\\n", KWS_LABELS[i]);\n'
                                     '  return 0;\n}\n')
    exe = tmp_path / "labels"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{out}", str(tmp_path / "main.c"),
                    str(out / "kws.c"), str(out / "kws_weights.c"), "-o", str(exe), "-lm"], check=True)
    assert subprocess.run([str(exe)], capture_output=True, check=True).stdout.decode("utf-8").splitlines() == NAMES


def test_run_prints_class_names_in_its_top5(tmp_path, capsys):
    require_programs("gcc")
    model = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    (tmp_path / "labels.txt").write_text("\n".join(NAMES), encoding="utf-8")
    x = np.random.default_rng(3).integers(-128, 128, (1, 49, 10, 1)).astype(np.int8)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", str(model), "--input", str(tmp_path / "x.npy"), "--labels", str(tmp_path / "labels.txt")]) == 0
    (top,) = [ln for ln in capsys.readouterr().out.splitlines() if "top-5:" in ln]
    (y,) = tflm_run(model.read_bytes(), [x])
    best = int(np.argmax(y.reshape(-1)))                 # TFLM's top class, named from the file
    assert f"class {best} ({NAMES[best]}): " in top.split(", ")[0]


@pytest.mark.parametrize("names, why", [(NAMES[:3], "3 class names, but output 'Identity' [1, 12] has 12 classes"),
                                        (["a", "", "b"], "line 2 is empty")])
def test_label_count_must_match_the_output(tmp_path, capsys, names, why):
    model = shared_or_skip("models", "tflite", "kws_ref_model.tflite")
    (tmp_path / "labels.txt").write_text("\n".join(names))
    out = tmp_path / "out"
    assert main(["compile", str(model), "-o", str(out), "--labels", str(tmp_path / "labels.txt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --labels") and why in err[0], err
    assert not out.exists()
