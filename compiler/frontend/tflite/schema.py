"""The .tflite schema, read through the pure-Python ``tflite`` package (PyPI ``tflite``, flatc-generated
from TensorFlow's ``schema.fbs``; any platform, only ``flatbuffers`` and ``numpy`` beneath it).

``tflite`` holds flatc's table accessors (``Tensor.Shape(j)``, ``ShapeAsNumpy()``, ``ShapeIsNone()``),
not the object API (``TensorT.shape``) the frontend reads. :func:`read_model` turns the flatbuffer
into the object API's shape, all at once (as ``ModelT.InitFromPackedBuf`` does, so a damaged file
fails there and nowhere later): every table becomes a :class:`Table` whose attributes are the
schema's fields in the object API's spelling (``isVariable``, ``zeroPoint``, ``builtinOptions``):

- a scalar or string field is its value (strings as ``bytes``), a sub-table a :class:`Table` or None;
- a vector field is ``None`` when absent, a numpy array for scalars (a view of the file's bytes,
  no copy of the weights), a list for tables and strings;
- ``OperatorCode.builtinCode`` is the stored field: the ``tflite`` package's accessor answers
  ``deprecatedBuiltinCode`` for codes below 127, wrong for files that store only ``builtin_code``
  (as the schema allows since TF 2.4);
- a union (``builtinOptions``) is the table its ``...Type`` field names, ``None`` for NONE or for
  options newer than the schema (the converter then refuses the op by name and version).

The enums (``S.TensorType``, ``S.BuiltinOperator``, ``S.Padding``, ``S.ActivationFunctionType``) are the
``tflite`` package's classes of integer constants, as in the object API module.
"""
from __future__ import annotations

from ...errors import TinyfuseError

try:
    import flatbuffers
    import tflite as S
except ImportError:  # pragma: no cover - a declared dependency
    S = None

__all__ = ["S", "Table", "read_model", "schema"]


def schema():
    """The ``tflite`` schema module; :class:`TinyfuseError` when the package is missing."""
    if S is None:
        raise TinyfuseError("reading .tflite files needs the tflite package: pip install tflite")
    return S


class Table:
    """One table of the model, its fields as attributes (object-API names). Fields a table does not
    have raise ``AttributeError``, so ``getattr(options, field, default)`` gives the default."""

    def __init__(self, kind: str, fields: dict):
        self._kind = kind
        self.__dict__.update(fields)

    def __repr__(self) -> str:
        return f"<tflite {self._kind}>"


_SKIP = ("GetRootAs",)      # and "Init" itself (not InitSubgraphIndex, a field of CallOnceOptions)
_AUX = ("Length", "AsNumpy", "IsNone", "BufferHasIdentifier")
_FIELDS: dict[type, list[tuple[str, str]]] = {}


def _fields(cls: type) -> list[tuple[str, str]]:
    """(accessor, kind) of every field of a flatc-generated table class; kind: value, vector, union."""
    if cls not in _FIELDS:
        names = {n for n in vars(cls) if n[:1].isupper() and n != "Init" and not n.startswith(_SKIP) and not n.endswith(_AUX)}
        unions = {n for n in names if n + "Type" in names}
        kinds = []
        for n in sorted(names):
            if n in unions:
                kinds.append((n, "union"))
            elif n[:-4] in unions and n.endswith("Type"):
                kinds.append((n, "value"))
            else:
                kinds.append((n, "vector" if hasattr(cls, n + "Length") else "value"))
        _FIELDS[cls] = kinds
    return _FIELDS[cls]


def _builtin_code(code) -> int:
    """OperatorCode.builtin_code as stored (vtable slot 3, int32, default 0 = ADD): schema.fbs."""
    o = code._tab.Offset(10)
    return code._tab.Get(flatbuffers.number_types.Int32Flags, o + code._tab.Pos) if o else 0


def _table(obj) -> Table:
    fields = {}
    for acc, kind in _fields(type(obj)):
        if acc == "BuiltinCode" and type(obj).__name__ == "OperatorCode":
            value = _builtin_code(obj)
        elif kind == "union":
            value = _union(obj, acc)
        elif kind == "value":
            value = getattr(obj, acc)()
            value = _table(value) if hasattr(value, "_tab") else value
        elif getattr(obj, acc + "IsNone")():
            value = None
        elif hasattr(obj, acc + "AsNumpy"):
            value = getattr(obj, acc + "AsNumpy")()
        else:
            get = getattr(obj, acc)
            value = [_table(v) if hasattr(v, "_tab") else v for v in map(get, range(getattr(obj, acc + "Length")()))]
        fields[acc[0].lower() + acc[1:]] = value
    return Table(type(obj).__name__, fields)


# union fields whose enum is not named as the field (schema.fbs: DimensionMetadata's index vectors)
_UNION_ENUMS = {"ArraySegments": "SparseIndexVector", "ArrayIndices": "SparseIndexVector"}


def _union(obj, field: str) -> Table | None:
    """The table behind union ``field`` (e.g. Operator.BuiltinOptions, DimensionMetadata.ArraySegments),
    or None."""
    kind, raw = getattr(obj, field + "Type")(), getattr(obj, field)()
    if kind == 0 or raw is None:
        return None
    enum = getattr(S, _UNION_ENUMS.get(field, field), None)
    if not isinstance(enum, type):
        return None
    names = {v: k for k, v in vars(enum).items() if not k.startswith("_")}
    cls = getattr(S, names.get(kind, ""), None)
    if not isinstance(cls, type):
        return None
    table = cls()
    table.Init(raw.Bytes, raw.Pos)
    return _table(table)


def read_model(data: bytes) -> Table:
    """The ``Model`` table of a .tflite flatbuffer ``data`` (the ``TFL3`` identifier is the caller's
    check), every field read. Raises what flatbuffers raises on a damaged buffer (struct.error,
    IndexError, ...); the caller turns that into a TinyfuseError."""
    return _table(schema().Model.GetRootAs(data, 0))
