"""The cycle and energy estimates of bench --measure on hand-computed instruction mixes."""
import pytest

from tinyfuse.harness.cycles import CLASSES, CYCLES, cycles_figures, estimate_cycles
from tinyfuse.harness.energy import energy_uj

MIX = {"alu": 10, "ld": 4, "ldst_pipe": 3, "ldm": 1, "ldm_words": 4, "bcond": 5, "bcond_taken": 3, "dsp": 8,
       "div": 1, "fp_mac": 2}


def test_every_core_table_has_every_class():
    assert all(set(table) == set(CLASSES) for table in CYCLES.values())


def test_cortex_m4_and_m0_cycles_by_hand():
    # M4 TRM Table 3-1: ALU 1, LDR 2, pipelined neighbour 1, LDM 1+N, B<c> 1 (+P=2 taken), SMLAD 1,
    # SDIV 2..12 -> 7, VFMA 3
    assert estimate_cycles(MIX, "cortex-m4") == 10 + 4 * 2 + 3 + (1 + 4) + 5 + 3 * 2 + 8 + 7 + 2 * 3 == 58
    # M0: no pipelining of neighbouring loads (2 each); taken branch 3 = 1 + 2
    assert estimate_cycles(MIX, "cortex-m0") == 58 + 3 == 61
    # M3: MLA 2, SMULL 3..5 -> 4
    assert estimate_cycles({"mac": 3, "mull": 2}, "cortex-m3") == 3 * 2 + 2 * 4


def test_cycles_figures_per_kernel_and_unknown_core():
    f = cycles_figures(MIX, {"k0": {"alu": 2}, "k1": {"ld": 1}}, "cortex-m4")
    assert f["total"] == 58 and f["per_kernel"] == {"k0": 2, "k1": 2} and f["estimate"] is True
    assert f["by_core"]["cortex-m4"] == 58 and set(f["by_core"]) == set(CYCLES)
    assert cycles_figures(MIX, {}, "rv32imac")["total"] is None
    with pytest.raises(KeyError):
        estimate_cycles({"not_a_class": 1}, "cortex-m4")


def test_energy_by_hand():
    traffic = {"sram_read_bytes": 6000, "sram_write_bytes": 2000, "flash_read_bytes": 8000}
    # 1e6 cycles x 100 µA/MHz x 3.0 V = 300 µJ; 8000 B x 2.5 pJ + 8000 B x 12.5 pJ = 0.12 µJ
    assert energy_uj("cortex-m4", 1_000_000, traffic) == pytest.approx(300.12)
    assert energy_uj("cortex-m0", 1_000_000, traffic) is None and energy_uj("cortex-m4", None, traffic) is None
