"""bench --clock-mhz: milliseconds = cycles / (MHz x 1000), from the cycle estimate when bench measured
the instruction mix, else from the instructions; labelled an estimate."""
from tinyfuse.harness.cycles import time_estimate, time_text


def test_milliseconds_from_cycles_or_instructions():
    f = {"instructions": 800_000, "kernels": [{"name": "k0", "instructions": 600_000}, {"name": "k1", "instructions": None}],
         "cycles_estimate": {"total": 1_200_000, "per_kernel": {"k0": 1_000_000}, "source": "TRM"}}
    t = time_estimate(f, 80)
    assert t["basis"] == "cycles_estimate" and t["total_ms"] == 15.0 and t["per_kernel_ms"] == {"k0": 12.5}
    assert t["estimate"] is True and "not a measurement" in t["note"]
    t = time_estimate({**f, "cycles_estimate": None}, 160)
    assert t["basis"] == "instructions" and t["total_ms"] == 5.0 and t["per_kernel_ms"] == {"k0": 3.75}
    text = "\n".join(time_text(t))
    assert "ESTIMATED time at 160 MHz: 5.000 ms per inference" in text and "k0" in text and "3.7500" in text
