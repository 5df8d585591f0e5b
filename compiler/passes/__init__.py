"""IR → IR passes and the named pipeline that runs them (see ``pipeline.py``). Importing the package
imports every module (pkgutil): modules that define rules register them (``rules.py``)."""
import importlib
import pkgutil

for _m in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_m.name}")

from .pipeline import PASSES, run_pipeline  # noqa: E402

__all__ = ["PASSES", "run_pipeline"]
