"""The tinyfuse version (pyproject.toml reads it: one place)."""
__version__ = "0.1.0"
