"""Build and run generated C: host gcc now; qemu targets later."""
from .host import build_host, run_host

__all__ = ["build_host", "run_host"]
