"""`nvidia.dali.plugin.numba.fn`: numba_function, the functional form of NumbaFunction."""
from __future__ import annotations

from .... import fn as _fn

numba_function = _fn.experimental.numba_function

from . import experimental  # noqa: E402,F401

__all__ = ["numba_function"]
