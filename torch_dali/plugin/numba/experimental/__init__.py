"""`nvidia.dali.plugin.numba.experimental`: the NumbaFunction class, as DALI keeps it there too."""
from __future__ import annotations

from .. import NumbaFunction  # noqa: F401

__all__ = ["NumbaFunction"]
