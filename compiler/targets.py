"""Targets as data: what tinyfuse compiles for and where the code runs.

A Target names a core: its compiler and flags, its ISA features (dsp, mve, fpu), a default scratch
budget for kernels, and the boards that run it under QEMU. A Board is one emulated machine: the
QEMU command, its linker script and start-up files under ``runtime_c/boards/``, and its flash and
RAM sizes. A target lists its boards smallest first; the harness takes the first one the image fits
in (the linker decides: region overflow or too little RAM left for the stack), so a small model on
``cortex-m0`` runs on the 16 KB micro:bit and a larger one on the MPS2 AN385.

    from tinyfuse.targets import get_target
    t = get_target("cortex-m4")      # t.cflags, t.machine, t.flash_bytes, t.dsp, ...
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .errors import TinyfuseError
from .resources import runtime_dir

RUNTIME_DIR = runtime_dir()
BOARDS_DIR = RUNTIME_DIR / "boards"

KiB = 1024
MiB = 1024 * KiB

# Byte alignment of every arena buffer offset and size (the memory plan, the schedule's live-byte
# counts, the kernels' scratch) and the default alignment of the weights and the arena (Placement):
# 16 bytes covers the widest access of any kernel (Helium 128-bit vector loads, host SSE/NEON).
ARENA_ALIGN = 16

_ARM_QEMU = ("qemu-system-arm", "-display", "none", "-serial", "none", "-monitor", "none")
_RV_QEMU = ("qemu-system-riscv32", "-bios", "none", "-display", "none", "-serial", "none", "-monitor", "none")


@dataclass(frozen=True)
class Board:
    """One QEMU machine: ``qemu`` is the command up to (not including) the semihosting and
    ``-kernel`` options; ``linker_script`` and ``sources`` are relative to ``runtime_c/boards``;
    ``lib_dirs`` are added with -L (for the linker script's INCLUDE)."""

    name: str
    qemu: tuple[str, ...]
    linker_script: str
    sources: tuple[str, ...]
    flash_bytes: int
    ram_bytes: int
    lib_dirs: tuple[str, ...] = ()

    @property
    def machine(self) -> str:
        return self.qemu[self.qemu.index("-M") + 1]


@dataclass(frozen=True)
class Target:
    """A core tinyfuse compiles for. ``cflags`` select the core (and float ABI); ``ldflags`` the C
    library; ``boards`` are tried in order (empty for ``host``)."""

    name: str
    cc: str
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...]
    boards: tuple[Board, ...]
    scratch_bytes: int
    dsp: bool = False
    mve: bool = False
    fpu: bool = False
    peak_macs_per_cycle: float = 1.0     # int8 MACs per cycle the core can issue (roofline, cost model)
    sram_bytes_per_cycle: float = 4.0    # SRAM bytes per cycle (one 32-bit access)

    @property
    def features(self) -> frozenset[str]:
        """The ISA features the core has, by flag name: 'dsp', 'mve', 'fpu', and 'vfp' (an FPU on an Arm
        core: single-precision VFMA and 32 S registers, what the arm_fpu kernels are written for)."""
        vfp = self.fpu and self.cc.startswith("arm-")
        return frozenset(f for f, on in (("dsp", self.dsp), ("mve", self.mve), ("fpu", self.fpu), ("vfp", vfp)) if on)

    @property
    def is_host(self) -> bool:
        return not self.boards

    @property
    def board(self) -> Board | None:
        return self.boards[0] if self.boards else None

    # the first board's figures, as the target's own
    @property
    def machine(self) -> str | None:
        return self.board.machine if self.board else None

    @property
    def qemu(self) -> tuple[str, ...]:
        return self.board.qemu if self.board else ()

    @property
    def linker_script(self) -> str | None:
        return self.board.linker_script if self.board else None

    @property
    def flash_bytes(self) -> int | None:
        return self.board.flash_bytes if self.board else None

    @property
    def ram_bytes(self) -> int | None:
        return self.board.ram_bytes if self.board else None

    @property
    def tools(self) -> tuple[str, ...]:
        """Executables the qemu harness needs for this target (ELF sizes and symbols are read with
        pyelftools: no binutils)."""
        if self.is_host:
            return (self.cc,)
        return (self.cc, *sorted({b.qemu[0] for b in self.boards}))


def _cm_board(name: str, machine: str, board_dir: str, flash: int, ram: int) -> Board:
    return Board(name, (*_ARM_QEMU[:1], "-M", machine, *_ARM_QEMU[1:]), f"{board_dir}/board.ld",
                 ("cortex_m/startup_cm.c",), flash, ram, ("cortex_m",))


MICROBIT = _cm_board("microbit", "microbit", "microbit", 256 * KiB, 16 * KiB)
AN385 = _cm_board("mps2-an385", "mps2-an385", "mps2", 4 * MiB, 4 * MiB)
AN386 = _cm_board("mps2-an386", "mps2-an386", "mps2", 4 * MiB, 4 * MiB)
AN500 = _cm_board("mps2-an500", "mps2-an500", "mps2", 4 * MiB, 4 * MiB)
AN505 = _cm_board("mps2-an505", "mps2-an505", "an505", 4 * MiB, 4 * MiB)
AN547 = _cm_board("mps3-an547", "mps3-an547", "an547", 512 * KiB + 8 * MiB, 512 * KiB)  # ITCM code + QSPI consts
RV_VIRT = Board("virt", (_RV_QEMU[0], "-M", "virt", *_RV_QEMU[1:]), "rv_virt/board.ld",
                ("rv_virt/start.S", "rv_virt/board.c"), 16 * MiB, 16 * MiB)

_ARM_LD = ("-nostartfiles",)
_NANO = "--specs=nano.specs"           # newlib-nano: headers when compiling, libc when linking
_ARM_HARD = ("-mthumb", "-mfloat-abi=hard")

TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("host", "gcc", (), ("-lm",), (), 1 * MiB, fpu=True),
    Target("cortex-m0", "arm-none-eabi-gcc", ("-mcpu=cortex-m0", "-mthumb", _NANO), _ARM_LD, (MICROBIT, AN385), 2 * KiB),
    Target("cortex-m3", "arm-none-eabi-gcc", ("-mcpu=cortex-m3", "-mthumb", _NANO), _ARM_LD, (AN385,), 8 * KiB),
    Target("cortex-m4", "arm-none-eabi-gcc", ("-mcpu=cortex-m4", *_ARM_HARD, "-mfpu=fpv4-sp-d16", _NANO), _ARM_LD,
           (AN386,), 16 * KiB, dsp=True, fpu=True),
    Target("cortex-m7", "arm-none-eabi-gcc", ("-mcpu=cortex-m7", *_ARM_HARD, "-mfpu=fpv5-d16", _NANO), _ARM_LD,
           (AN500,), 32 * KiB, dsp=True, fpu=True),
    Target("cortex-m33", "arm-none-eabi-gcc", ("-mcpu=cortex-m33", *_ARM_HARD, "-mfpu=fpv5-sp-d16", _NANO), _ARM_LD,
           (AN505,), 16 * KiB, dsp=True, fpu=True),
    Target("cortex-m55", "arm-none-eabi-gcc", ("-mcpu=cortex-m55", *_ARM_HARD, _NANO), _ARM_LD,
           (AN547,), 32 * KiB, dsp=True, mve=True, fpu=True),
    Target("rv32imac", "riscv64-unknown-elf-gcc", ("-march=rv32imac", "-mabi=ilp32", "--specs=picolibc.specs"),
           ("-nostartfiles",), (RV_VIRT,), 16 * KiB),
)}


# Roofline data (cost model, ``tinyfuse report``), int8 MACs and SRAM bytes per cycle, from the cores'
# pipelines: M0/M0+ and RV32IMAC multiply then add, M3 a 2-cycle MLA (1 MAC per 2 cycles); M4/M33 SMLAD
# (2 16x16 MACs per cycle); M7 dual-issue SMLAD with 64-bit
# loads; M55 Helium VMLADAVA.S8 on two beats (8 per cycle) with 64-bit SRAM beats; host: a nominal
# 128-bit SIMD core.
_PEAKS = {"host": (32.0, 32.0), "cortex-m0": (0.5, 4.0), "cortex-m3": (0.5, 4.0), "cortex-m4": (2.0, 4.0),
          "cortex-m7": (4.0, 8.0), "cortex-m33": (2.0, 4.0), "cortex-m55": (8.0, 8.0), "rv32imac": (0.5, 4.0)}
TARGETS = {n: replace(t, peak_macs_per_cycle=_PEAKS[n][0], sram_bytes_per_cycle=_PEAKS[n][1]) if n in _PEAKS else t
           for n, t in TARGETS.items()}


def get_target(target: str | Target) -> Target:
    """The Target named ``target`` (a Target passes through); TinyfuseError listing the names if unknown."""
    if isinstance(target, Target):
        return target
    if target not in TARGETS:
        raise TinyfuseError(f"unknown target '{target}'; available: {', '.join(TARGETS)}")
    return TARGETS[target]


class NoBoardWarning(UserWarning):
    """A compiled model fits no qemu board of its target (``fit_problem``): ``compile`` writes it (a real
    board may have external RAM/flash), ``run`` and ``bench`` refuse it (``check_fits``)."""


def fit_problem(result, t: Target) -> str | None:
    """None when a compiled model fits some board of target ``t``: its arena (activations, input and
    output, or with ``--io-buffers caller`` the arena plus the caller's I/O buffers) in the board's RAM
    and its weights in the board's flash (host: no limit); else the sizes, as one sentence."""
    if t.is_host:
        return None
    if any(result.arena_bytes + result.io_bytes <= b.ram_bytes and result.weights_bytes <= b.flash_bytes for b in t.boards):
        return None
    big = max(t.boards, key=lambda b: (b.ram_bytes, b.flash_bytes))
    io = f" (+ {result.io_bytes} bytes of caller I/O buffers)" if result.io_bytes else ""
    return (f"model '{result.name}' needs {result.arena_bytes} bytes of RAM for its arena{io} and "
            f"{result.weights_bytes} bytes of flash for its weights; the largest {t.name} board tinyfuse runs "
            f"under qemu ({big.name}) has {big.ram_bytes} bytes of RAM and {big.flash_bytes} bytes of flash")


def check_fits(result, t: Target) -> None:
    """TinyfuseError when a compiled model fits no board of target ``t`` (``fit_problem``): what
    ``run``, ``bench`` and every qemu build check before building."""
    problem = fit_problem(result, t)
    if problem:
        raise TinyfuseError(f"{problem}: choose a larger target or a smaller model")


_SECTION_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._$")


@dataclass(frozen=True)
class Placement:
    """Where a firmware's linker puts the generated model (GNU C section attributes, ELF only; other
    compilers get only the alignment or nothing). Defaults match ``.text.*``, ``.rodata.*`` and
    ``.bss.*`` in any linker script, so nothing changes until a script names them.

    ``align`` (bytes, a power of two >= 4) aligns the weights and the arena; the memory plan keeps
    ``ARENA_ALIGN``-byte (16) offsets inside the arena.
    """

    code_section: str = ".text.tinyfuse"
    weights_section: str = ".rodata.tinyfuse.weights"
    arena_section: str = ".bss.tinyfuse.arena"
    align: int = ARENA_ALIGN

    def __post_init__(self):
        for what in ("code_section", "weights_section", "arena_section"):
            v = getattr(self, what)
            if not v or not set(v) <= _SECTION_CHARS:
                raise TinyfuseError(f"--{what.replace('_', '-')} '{v}': a section name is letters, digits, '.', '_', '$'")
        if self.align < 4 or self.align & (self.align - 1):
            raise TinyfuseError(f"--align {self.align}: must be a power of two >= 4")


__all__ = ["ARENA_ALIGN", "Board", "NoBoardWarning", "Placement", "Target", "TARGETS", "BOARDS_DIR", "RUNTIME_DIR",
           "check_fits", "fit_problem", "get_target"]
