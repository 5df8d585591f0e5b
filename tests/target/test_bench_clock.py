"""bench --clock-mhz on a qemu target: the estimated milliseconds are the bench's own cycle estimate
(or instruction count) over the clock, total and per kernel, in --json and in the text."""
import json

from tinyfuse.cli import main
from tests.conftest import shared_or_skip
from tests.target.conftest import require_tools


def test_bench_clock_mhz(capsys):
    require_tools("cortex-m4")
    model = str(shared_or_skip("models", "tflite", "ad01_int8.tflite"))
    assert main(["bench", model, "--target", "cortex-m4", "--clock-mhz", "80", "--json"]) == 0
    f = json.loads(capsys.readouterr().out)
    t, cyc = f["time_estimate_ms"], f["cycles_estimate"]
    assert t["basis"] == "cycles_estimate" and abs(t["total_ms"] - cyc["total"] / 80e3) < 1e-9
    assert set(t["per_kernel_ms"]) == {k["name"] for k in f["kernels"]}
    assert all(abs(t["per_kernel_ms"][k] - c / 80e3) < 1e-9 for k, c in cyc["per_kernel"].items())
    assert main(["bench", model, "--target", "cortex-m4", "--clock-mhz", "80", "--no-measure"]) == 0
    out = capsys.readouterr().out
    assert "ESTIMATED time at 80 MHz:" in out and "executed instructions taken as one cycle each" in out
