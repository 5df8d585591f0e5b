"""Specialise an ONNX model to the static program tinyfuse compiles: input shapes and bound inputs.

- ``--input-shape NAME=1x3x224x224`` fixes every dim of graph input NAME; ``NAME=DIM=VALUE`` one symbolic
  dim, by its ``dim_param`` name or its axis number (NAME ``*``: every input carrying that ``dim_param``).
  These are tvmc's ``--input-shapes`` and onnxruntime's ``make_dynamic_shape_fixed`` (``--input_shape``,
  ``--dim_param/--dim_value``). A static dim the model declares must be given its own size.
- A symbolic batch dim alone (dim 0 the only unknown one) becomes 1, with one warning line; any other
  unknown dim is one TinyfuseError naming the input, the dim and the flag.
- ``--bind NAME=VALUE`` (a number, ``true``/``false``, or an ``.npy`` file) makes graph input NAME an
  initializer of that value, in the input's declared element type and shape: the nodes it feeds fold
  at compile time (an ``If`` on a sample-rate input picks its branch; ``control_flow.py``).

``specialize(model, input_shapes, binds)`` returns the rewritten copy and a :class:`Specialization`
(what was fixed, recorded in metadata.json and the generated header).
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ...errors import TinyfuseError
from .registry import shown

_DIMS = re.compile(r"^\s*(\d+\s*([x,]\s*\d+\s*)*)?$")


@dataclass(frozen=True)
class InputShape:
    """One ``--input-shape``: input ``name`` with every dim (``dims``), or one symbolic ``dim`` = ``value``."""

    name: str
    dims: tuple[int, ...] | None = None
    dim: str | None = None
    value: int | None = None

    def __str__(self) -> str:
        if self.dims is not None:
            return f"{self.name}={'x'.join(map(str, self.dims))}"
        return f"{self.name}={self.dim}={self.value}"


@dataclass
class Specialization:
    """What ``specialize`` fixed: the final shape of every runtime input it touched (``input_shapes``),
    the bound inputs (``bound``: name → array), the batch dims it set to 1 (``batch_default``)."""

    input_shapes: dict[str, list[int]] = field(default_factory=dict)
    bound: dict[str, np.ndarray] = field(default_factory=dict)
    batch_default: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.input_shapes or self.bound)

    def as_json(self) -> dict:
        """metadata.json's ``specialization``: shapes, and per bound input its dtype, shape and value
        (the value itself for at most 8 elements, else its sha-less summary: min / max)."""
        bound = {}
        for name, v in self.bound.items():
            entry = {"dtype": str(v.dtype), "shape": list(v.shape)}
            if v.size <= 8:
                entry["value"] = v.reshape(-1).tolist()
            else:
                entry["min"], entry["max"] = v.min().item(), v.max().item()
            bound[name] = entry
        return {"input_shapes": self.input_shapes, "bound": bound, "batch_default": self.batch_default}

    def lines(self) -> list[str]:
        """One line each for the header's comment: the fixed shapes and the bound values."""
        out = [f"--input-shape {n}={'x'.join(map(str, s)) or '(scalar)'}" for n, s in self.input_shapes.items()]
        for n, v in self.bound.items():
            shown_v = v.reshape(-1).tolist() if v.size <= 8 else f"{v.dtype}{list(v.shape)} array"
            out.append(f"--bind {n}={shown_v}")
        return out


def parse_input_shape(text: str) -> InputShape:
    """``NAME=1x3x224x224`` (also ``1,3,224,224``; an empty shape is a scalar) or ``NAME=DIM=VALUE``."""
    parts = text.split("=")
    if len(parts) == 2 and parts[0] and _DIMS.match(parts[1]):
        dims = tuple(int(d) for d in re.split(r"[x,]", parts[1].replace(" ", ""))) if parts[1].strip() else ()
        return InputShape(parts[0], dims=dims)
    if len(parts) == 3 and parts[0] and parts[1] and parts[2].strip().isdigit():
        return InputShape(parts[0], dim=parts[1], value=int(parts[2]))
    raise TinyfuseError(f"--input-shape '{text}': expected NAME=D0xD1x... (e.g. input=1x3x224x224) or NAME=DIM=VALUE "
                        "(a symbolic dim by name or axis, e.g. input=batch=4)")


def parse_bind(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` → (name, value text); the value is read against the input's type by ``specialize``."""
    name, sep, value = text.partition("=")
    if not sep or not name or not value:
        raise TinyfuseError(f"--bind '{text}': expected NAME=VALUE (a number, true/false, or a .npy file)")
    return name, value


def _dims(vi: onnx.ValueInfoProto) -> list[int | str | None]:
    """The declared dims of a graph input: int, the dim_param name, or None (unknown)."""
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return []
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tt.shape.dim]


def _set_dims(vi: onnx.ValueInfoProto, dims) -> None:
    shape = vi.type.tensor_type.shape
    del shape.dim[:]
    for d in dims:
        shape.dim.add().dim_value = int(d)


def _shown_dims(dims) -> str:
    return "[" + ", ".join(repr(shown(d)) if isinstance(d, str) else "?" if d is None else str(d) for d in dims) + "]"


def _apply_shape(vi: onnx.ValueInfoProto, spec: InputShape) -> bool:
    """Apply one --input-shape to input ``vi``; False when a ``*`` spec names no dim of it."""
    if spec.dims is not None:
        _apply_dims(vi, spec)
        return True
    name, declared = shown(vi.name), _dims(vi)
    axes = [i for i, d in enumerate(declared) if d == spec.dim]
    if not axes and spec.dim.isdigit() and int(spec.dim) < len(declared):
        axes = [int(spec.dim)]
    if not axes:
        if spec.name == "*":
            return False
        raise TinyfuseError(f"--input-shape {spec}: input '{name}' (shape {_shown_dims(declared)}) has no "
                            f"symbolic dim '{shown(spec.dim)}' (give a dim_param name or an axis number)")
    for a in axes:
        d = declared[a]
        if isinstance(d, int) and d > 0 and d != spec.value:
            raise TinyfuseError(f"--input-shape {spec}: input '{name}' dim {a} is {d} in the model, the flag "
                                f"gives {spec.value}")
        declared[a] = spec.value
    if not any(isinstance(d, str) or d is None for d in declared):
        _set_dims(vi, declared)
    else:
        shape = vi.type.tensor_type.shape
        for a in axes:
            shape.dim[a].Clear()
            shape.dim[a].dim_value = spec.value
    return True


def _apply_dims(vi: onnx.ValueInfoProto, spec: InputShape) -> None:
    """``--input-shape NAME=DIMS``: every dim of ``vi``; TinyfuseError for another rank or a static dim
    the flag contradicts."""
    name, declared = shown(vi.name), _dims(vi)
    if vi.type.tensor_type.HasField("shape") and len(declared) != len(spec.dims):
        raise TinyfuseError(f"--input-shape {spec}: input '{name}' has rank {len(declared)} "
                            f"(shape {_shown_dims(declared)}), the flag gives {len(spec.dims)} dims")
    for i, (d, v) in enumerate(zip(declared, spec.dims)):
        if isinstance(d, int) and d > 0 and d != v:
            raise TinyfuseError(f"--input-shape {spec}: input '{name}' dim {i} is {d} in the model "
                                f"(shape {_shown_dims(declared)}), the flag gives {v}")
    _set_dims(vi, spec.dims)


def _runtime_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = {i.name for i in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in inits]


def _check_static(model: onnx.ModelProto, spec: Specialization) -> None:
    """A symbolic batch dim alone becomes 1 (warning); any other unknown dim is the one error."""
    for vi in _runtime_inputs(model):
        dims, name = _dims(vi), shown(vi.name)
        unknown = [i for i, d in enumerate(dims) if not isinstance(d, int) or d < 0]
        if not unknown:
            continue
        if unknown == [0] and len(dims) > 1:
            spec.batch_default.append(f"'{name}' ({_shown_dims(dims[:1])[1:-1]})")
            spec.input_shapes.setdefault(vi.name, [])
            _set_dims(vi, [1, *dims[1:]])
            continue
        i = next((k for k in unknown if k != 0), unknown[0]) if len(dims) > 1 else unknown[0]
        example = "x".join(str(d) if isinstance(d, int) and d > 0 else "1" if k == 0 else "?"
                           for k, d in enumerate(dims))
        one = f"{name}={shown(dims[i]) if isinstance(dims[i], str) else i}=SIZE"
        raise TinyfuseError(f"input '{name}' has dynamic shape {_shown_dims(dims)}: dim {i} "
                            f"({_shown_dims(dims[i:i + 1])[1:-1]}) has no size; give it with --input-shape {one} "
                            f"(or every dim: {name}={example}); tinyfuse compiles static shapes")
    if spec.batch_default:
        warnings.warn(f"symbolic batch dim set to 1 for input {', '.join(spec.batch_default)}; give "
                      "--input-shape NAME=DIMS for another size", stacklevel=4)


def _bind_value(vi: onnx.ValueInfoProto, text: str) -> np.ndarray:
    """The value of ``--bind NAME=text`` in input ``vi``'s element type and (static) shape."""
    name = shown(vi.name)
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))
    except (KeyError, TypeError):
        raise TinyfuseError(f"--bind {name}: input '{name}' has element type code "
                            f"{vi.type.tensor_type.elem_type}, which tinyfuse cannot bind") from None
    declared = _dims(vi)
    if text.endswith(".npy"):
        from ...userdir import input_file
        try:
            arr = np.load(input_file(Path(text), "--bind"), allow_pickle=False)
        except (ValueError, OSError) as e:
            raise TinyfuseError(f"--bind {name}={text}: not a readable .npy file ({e})") from None
        if vi.type.tensor_type.HasField("shape") and (arr.ndim != len(declared) or any(
                isinstance(d, int) and d > 0 and d != s for d, s in zip(declared, arr.shape))):
            raise TinyfuseError(f"--bind {name}={text}: the array has shape {list(arr.shape)}, input '{name}' "
                                f"is declared {_shown_dims(declared)}")
        if arr.dtype.kind == "V" and arr.dtype.itemsize == dtype.itemsize:
            arr = arr.view(dtype)          # numpy saves an ml_dtypes array (bfloat16) as raw records
        return arr.astype(dtype)
    low = text.strip().lower()
    try:
        value = {"true": 1, "false": 0}[low] if low in ("true", "false") else float(text)
    except ValueError:
        raise TinyfuseError(f"--bind {name}={text}: not a number, true/false or a .npy file") from None
    if any(not isinstance(d, int) or d <= 0 for d in declared):
        raise TinyfuseError(f"--bind {name}={text}: input '{name}' has shape {_shown_dims(declared)}; a single "
                            f"value fills a static shape (give --input-shape {name}=... or a .npy file)")
    if dtype.kind in "iub" and value != int(value):
        raise TinyfuseError(f"--bind {name}={text}: input '{name}' is {dtype.name}, the value is not an integer")
    return np.full([int(d) for d in declared], value).astype(dtype)


def specialize(model: onnx.ModelProto, input_shapes=(), binds=()) -> tuple[onnx.ModelProto, Specialization]:
    """The model with ``input_shapes`` (InputShape or their text) and ``binds`` ((name, value text) pairs or
    ``NAME=VALUE`` texts) applied, every runtime input checked static (module doc); the model itself
    when there is nothing to change. TinyfuseError (one line) for an unknown input, a rank or static
    dim the flag contradicts, a dynamic dim left, a value that does not fit."""
    shapes = [s if isinstance(s, InputShape) else parse_input_shape(s) for s in input_shapes]
    pairs = [b if isinstance(b, tuple) else parse_bind(b) for b in binds]
    spec = Specialization()
    needs_copy = shapes or pairs or any(any(not isinstance(d, int) or d <= 0 for d in _dims(vi))
                                        for vi in _runtime_inputs(model))
    if not needs_copy:
        return model, spec
    m = onnx.ModelProto()
    m.CopyFrom(model)
    _apply_flags(m, shapes, pairs, spec)
    _check_static(m, spec)
    for vi in _runtime_inputs(m):
        if vi.name in spec.input_shapes or (shapes and shapes[0].name == "*"):
            spec.input_shapes[vi.name] = [int(d) for d in _dims(vi)]
    return m, spec


def _apply_flags(m: onnx.ModelProto, shapes, pairs, spec: Specialization) -> None:
    """The --input-shape and --bind flags applied to ``m`` (recorded in ``spec``); TinyfuseError for an
    input the model does not have."""
    by_name = {vi.name: vi for vi in m.graph.input}
    known = ", ".join(f"'{shown(v.name)}'" for v in _runtime_inputs(m))
    for s in shapes:
        if s.name == "*":
            if not any([_apply_shape(vi, s) for vi in _runtime_inputs(m)]):
                raise TinyfuseError(f"--input-shape {s}: no input has a symbolic dim '{shown(s.dim)}'")
            continue
        if s.name not in by_name:
            raise TinyfuseError(f"--input-shape {s}: the model has no input '{shown(s.name)}' (inputs: {known})")
        _apply_shape(by_name[s.name], s)
        spec.input_shapes[s.name] = []
    for name, text in pairs:
        if name not in by_name:
            raise TinyfuseError(f"--bind {shown(name)}: the model has no input '{shown(name)}' (inputs: {known})")
        spec.bound[name] = _bind_value(by_name[name], text)
    _bind(m, spec.bound)


def _bind(m: onnx.ModelProto, bound: dict[str, np.ndarray]) -> None:
    """Each bound input becomes an initializer (replacing a default initializer of the same name)."""
    if not bound:
        return
    keep = [vi for vi in m.graph.input if vi.name not in bound]
    del m.graph.input[:]
    m.graph.input.extend(keep)
    inits = [t for t in m.graph.initializer if t.name not in bound]
    del m.graph.initializer[:]
    m.graph.initializer.extend(inits)
    for name, arr in bound.items():
        m.graph.initializer.append(numpy_helper.from_array(arr, name))


__all__ = ["InputShape", "Specialization", "parse_bind", "parse_input_shape", "specialize"]
