"""DALI's `nvidia.dali._autograph.utils`: the logging switches (`ag_logging`)."""
from __future__ import annotations

from . import ag_logging

__all__ = ["ag_logging"]
