"""DALI's `nvidia.dali.pipeline.experimental`: the same decorator (conditionals are a keyword of
pipeline_def either way)."""
from __future__ import annotations

from ..graph.pipeline_def import pipeline_def  # noqa: F401
