"""Energy of one inference: an ESTIMATE from the estimated cycles and the measured data traffic,
with published per-cycle and per-access energies as target data. Not a measurement.

    E = cycles * E_cycle + sram_bytes * E_sram_byte + flash_read_bytes * E_flash_byte

``E_cycle`` = run-mode supply current per MHz (datasheet, code running from flash: the core, its
instruction fetches and the datasheet benchmark's own data accesses) times the supply voltage the
datasheet states it at. The per-byte terms add the model's data traffic (``bench`` counts every load
and store by region) at array access energies: SRAM 20 pJ per 64-bit access of a 32 KB array (2.5
pJ/byte), 45 nm, 0.9 V (M. Horowitz, "Computing's energy problem (and what we can do about it)",
ISSCC 2014, energy table); the sources give no per-access figure of embedded flash, so a flash data
read is costed as Horowitz's 1 MB array (100 pJ per 64-bit access, 12.5 pJ/byte), an assumption.
The per-byte terms partly repeat what the datasheet current already holds, so the sum leans high.
"""
from __future__ import annotations

# E_cycle in pJ: (µA per MHz, volts, source). 1 µA/MHz at 1 V is 1 pJ per cycle.
CORE_ENERGY = {
    "cortex-m4": (100.0, 3.0, "STM32L476xx datasheet, features: Run mode 100 µA/MHz (LDO), VDD 3.0 V"),
    "cortex-m33": (19.5, 3.3, "STM32U575xx datasheet, features: Run mode 19.5 µA/MHz (SMPS), VDD 3.3 V"),
}
SRAM_PJ_PER_BYTE = 20.0 / 8      # Horowitz ISSCC 2014: 32 KB SRAM, 64-bit access, 20 pJ
FLASH_PJ_PER_BYTE = 100.0 / 8    # assumption: Horowitz ISSCC 2014's 1 MB array, 64-bit access, 100 pJ
ESTIMATE = ("estimate: cycles (estimated) x datasheet µA/MHz x V + measured SRAM/flash bytes x published "
            "array access energies; not a measurement")


def pj_per_cycle(core: str) -> float | None:
    """Energy per cycle (pJ) of the reference MCU of ``core``, None when no datasheet figure is recorded."""
    if core not in CORE_ENERGY:
        return None
    ua_per_mhz, volts, _ = CORE_ENERGY[core]
    return ua_per_mhz * volts


def energy_uj(core: str, cycles: float | None, traffic: dict) -> float | None:
    """Estimated µJ of one inference (module docstring): ``traffic`` holds ``sram_read_bytes``,
    ``sram_write_bytes``, ``flash_read_bytes``. None without a cycle estimate or a core figure."""
    e_cycle = pj_per_cycle(core)
    if e_cycle is None or cycles is None:
        return None
    sram = traffic["sram_read_bytes"] + traffic["sram_write_bytes"]
    pj = cycles * e_cycle + sram * SRAM_PJ_PER_BYTE + traffic["flash_read_bytes"] * FLASH_PJ_PER_BYTE
    return round(pj * 1e-6, 3)


__all__ = ["CORE_ENERGY", "ESTIMATE", "FLASH_PJ_PER_BYTE", "SRAM_PJ_PER_BYTE", "energy_uj", "pj_per_cycle"]
