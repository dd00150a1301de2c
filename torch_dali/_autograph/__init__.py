"""DALI's `nvidia.dali._autograph` names that code written for DALI reaches for.

DALI converts a pipeline definition with a fork of TensorFlow's AutoGraph; torch_dali rewrites it
with its own, much smaller rewrite (`torch_dali.conditionals`). What this package holds is the part
of DALI's module that user code and DALI's tests import: whether a function went through the
rewrite, the `do_not_convert` marker, and the debug-logging switches (`utils.ag_logging`).
"""
from __future__ import annotations

from ..conditionals import is_autograph_artifact
from ..graph.pipeline_def import do_not_convert
from . import utils
from .utils import ag_logging

__all__ = ["ag_logging", "do_not_convert", "is_autograph_artifact", "utils"]
