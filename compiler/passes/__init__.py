"""IR → IR passes and the named pipeline that runs them (see ``pipeline.py``)."""
from .pipeline import PASSES, run_pipeline

__all__ = ["PASSES", "run_pipeline"]
