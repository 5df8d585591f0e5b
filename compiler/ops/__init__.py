"""Op definitions, one module per op or tight family (``ops/<family>.py``).

Importing this package imports every module in it (``pkgutil.iter_modules``, in name order), and each
module's ``@register_op`` classes enter the registry ``tinyfuse.ir.op.OPS``: adding ``ops/foo.py`` is
enough to add its ops, there is no list to extend.
"""
import importlib
import pkgutil
from typing import Callable

from ..ir.op import OPS, OpDef

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
del _module


def ops_where(fact: Callable[[OpDef], object]) -> tuple[str, ...]:
    """The names of the registered ops whose OpDef satisfies ``fact`` (e.g. ``lambda d: d.lut``), sorted.

    Passes derive their op sets from the registry with it, so a new op states its facts in its own
    class; importing it from here guarantees every op is registered before the set is taken."""
    return tuple(sorted(name for name, opdef in OPS.items() if fact(opdef)))
