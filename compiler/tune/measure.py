"""The two Dask tasks of ``tinyfuse tune``: compile a candidate (its exact arena and kernel features,
for the cost model's prediction) and measure it (a qemu run with exact instruction counts).

Both take a model *path* (workers of an external cluster read it from the same path) and return
plain JSON-able dicts, so they run unchanged in a LocalCluster worker or a remote ``dask worker``.
"""
from __future__ import annotations

import hashlib
import socket
import tempfile
import time

from ..cost.features import group_signature, kernel_features, record_key
from ..cost.knobs import config_key, normalize
from ..cost.records import TuningRecords, build_options
from .space import moves_of


def _compile(model: str, target: str, config: dict, options: dict | None = None):
    """Compile one candidate. A candidate may set knobs of groups its other moves removed (a chain's
    kernel knobs with the chain unfused): the driver's "match no kernel" warning is expected here. A
    model that fits no qemu board compiles quietly (its measurement refuses it: build_target).
    ``options``: compile_model's build options (tune.command.compile_options), every build alike."""
    import warnings
    from ..driver import compile_model
    from ..targets import NoBoardWarning
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*per-kernel knobs match no kernel")
        warnings.simplefilter("ignore", NoBoardWarning)
        return compile_model(model, target=target, tuning_records=TuningRecords(config=config), **(options or {}))


def build_hash(result) -> str:
    """sha256 (16 hex digits) of every generated file: two configurations that generate the same C."""
    h = hashlib.sha256()
    for name in sorted(result.files):
        data = result.files[name]
        h.update(name.encode() + b"\0" + (data.encode() if isinstance(data, str) else data))
    return h.hexdigest()[:16]


def _kernels(result) -> list[dict]:
    """One dict per kernel: signature (with the in-place rule it ran), knobs, features."""
    out = []
    tname = result.options.target.name
    for i, step in enumerate(result.steps):
        opt = result.memory.inplace.get(i)
        rule = opt.rule if opt is not None else None
        sig = group_signature(step.call.op, tname, rule)
        knob = {"variant": step.kernel.variant, "rule": rule, **step.kernel.knobs}
        out.append({"kind": "kernel", "key": record_key(sig, knob), "sig": sig, "target": tname, "knobs": knob,
                    "implementation": step.kernel.kind, "name": step.kernel.name, "macs": step.kernel.macs,
                    "features": kernel_features(step.call.op, step.kernel, result.options)})
    return out


def compile_candidate(model: str, target: str, config: dict, options: dict | None = None) -> dict:
    """Compile one configuration under the build ``options``: its key, arena bytes, kernels (key +
    features) and the moves its build offers (``space.moves_of``). No qemu."""
    result = _compile(model, target, config, options)
    return {"config_key": config_key(config), "config": normalize(config), "arena_bytes": result.arena_bytes,
            "model_hash": result.model_hash, "model": result.name, "kernels": _kernels(result),
            "build_hash": build_hash(result),
            "moves": moves_of(result)}


def measure_candidate(model: str, target: str, config: dict, changes: list[str], timeout: float = 600,
                      seed: int = 0, options: dict | None = None) -> dict:
    """Compile, build and run one configuration under qemu: the ``model`` record (instructions, arena,
    measured stack, the knobs changed against the default) with its ``kernel`` records (exact
    per-kernel instructions) under ``kernels``, and the moves its build offers under ``moves``; the record
    carries the build ``options`` it was compiled under (``cost.records.build_options``)."""
    from ..harness.bench import bench_target
    from ..harness.inputs import load_inputs
    from ..harness.qemu import build_target
    t0 = time.perf_counter()
    result = _compile(model, target, config, options)
    inputs = load_inputs(None, result.inputs, seed)
    with tempfile.TemporaryDirectory(prefix="tinyfuse_tune_") as tmp:
        figures = bench_target(build_target(result, result.options.target, tmp, inputs), timeout=timeout)
    kernels = _kernels(result)
    for k, kf in zip(kernels, figures["kernels"]):
        k["instructions"] = kf["instructions"]
    return {"kind": "model", "model_hash": result.model_hash, "model": result.name,
            "target": result.options.target.name, "options": build_options(**(options or {})),
            "config": normalize(config), "config_key": config_key(config),
            "changes": list(changes), "instructions": figures["instructions"], "arena_bytes": result.arena_bytes,
            "ram_stack": figures["ram_stack"], "flash_bytes": figures["flash_code"] + figures["flash_const"],
            "build_hash": build_hash(result), "seconds": round(time.perf_counter() - t0, 2),
            "worker": socket.gethostname(), "kernels": kernels, "moves": moves_of(result)}


__all__ = ["compile_candidate", "measure_candidate"]
