"""`nvidia.dali.plugin.numba.fn.experimental`: numba_function (the same function as in `fn`)."""
from __future__ import annotations

from .. import numba_function  # noqa: F401

__all__ = ["numba_function"]
