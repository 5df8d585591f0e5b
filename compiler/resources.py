"""Where the package's data lives: the jinja2 templates and the C runtime (headers, boards, tools).

In an installed wheel they are package data inside ``tinyfuse/`` (``codegen_templates/`` and
``runtime_c/``, mapped from the repo folders of the same names by pyproject.toml); in a source
checkout (editable install or ``PYTHONPATH``) they are the repo's own folders beside ``compiler/``.
Both are found through :mod:`importlib.resources`; the repo folders are the single source.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path


@lru_cache(maxsize=None)
def data_dir(name: str) -> Path:
    """The directory ``name`` ('codegen_templates' or 'runtime_c') as a real path on disk.

    Raises FileNotFoundError when neither the installed nor the checkout copy exists (a broken install).
    """
    installed = Path(str(resources.files(__package__).joinpath(name)))
    if installed.is_dir():
        return installed
    checkout = Path(__file__).resolve().parents[1] / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"tinyfuse data folder '{name}' is missing (looked in {installed} and {checkout})")


def template_dir() -> Path:
    return data_dir("codegen_templates")


def runtime_dir() -> Path:
    return data_dir("runtime_c")
