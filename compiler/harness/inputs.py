"""Model inputs for ``tinyfuse run``/``bench``/``tune``: from a .npy/.npz file, or seeded random ones."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import TinyfuseError
from ..userdir import input_file


def random_inputs(infos, seed: int) -> list[np.ndarray]:
    """One array per ``infos`` entry (TensorInfo: shape, dtype): normal(0, 1) for float dtypes, uniform
    over the whole range for integer ones, from ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    out = []
    for t in infos:
        if t.dtype.startswith("float"):
            out.append(rng.standard_normal(t.shape).astype(t.dtype))
        else:
            info = np.iinfo(t.dtype)
            out.append(rng.integers(info.min, info.max + 1, t.shape).astype(t.dtype))
    return out


def _arrays(p: Path, data, infos) -> list[np.ndarray]:
    if isinstance(data, np.ndarray):
        if len(infos) != 1:
            raise TinyfuseError(f"--input {p}: a .npy holds one array but the model has {len(infos)} inputs")
        return [data]
    arrays = []
    for t in infos:
        key = t.name if t.name in data else "input" if "input" in data and len(infos) == 1 else None
        if key is None:
            raise TinyfuseError(f"--input {p}: no array named '{t.name}' (keys: {sorted(data.keys())})")
        arrays.append(data[key])
    return arrays


def load_inputs(path: str | None, infos, seed: int) -> list[np.ndarray]:
    """Inputs of the model whose inputs are ``infos`` (TensorInfo list), cast to their dtypes.

    ``path``: a .npy (one-input models) or .npz holding an array per graph input name (or ``input``
    for a one-input model); None gives :func:`random_inputs` with ``seed``. Raises TinyfuseError for a
    missing or unreadable file, a missing key or a shape that differs from the model's.
    """
    if path is None:
        return random_inputs(infos, seed)
    p = input_file(path, "--input")
    try:
        data = np.load(p, allow_pickle=False)
        arrays = _arrays(p, data, infos)
    except TinyfuseError:
        raise
    except Exception as e:        # OSError, ValueError, zipfile.BadZipFile, ...
        raise TinyfuseError(f"--input {path}: not a readable .npy/.npz file ({type(e).__name__})") from None
    for a, t in zip(arrays, infos):
        if tuple(a.shape) != tuple(t.shape):
            raise TinyfuseError(f"--input {path}: input '{t.name}' has shape {list(a.shape)}, "
                                f"model expects {list(t.shape)}")
        _check_values(path, a, t)
    return [a.astype(t.dtype) for a, t in zip(arrays, infos)]


def _check_values(path, a: np.ndarray, t) -> None:
    """No silent value change by the cast to the input's dtype: float samples for an integer (quantized)
    input, or integers outside its range, are a TinyfuseError (quantize them with the input's scale and
    zero point from the generated header, or let ``tinyfuse validate`` do it)."""
    if t.dtype.startswith("float") or not a.size:
        return
    info = np.iinfo(t.dtype)
    if a.dtype.kind == "f" or a.min() < info.min or a.max() > info.max:
        raise TinyfuseError(f"--input {path}: input '{t.name}' is {t.dtype}: give {t.dtype} values "
                            f"(real = scale * (q - zero_point), see the header), or use tinyfuse validate "
                            f"with float samples")
