"""`nvidia.dali.plugin.numba`'s names: the NumbaFunction op class (`fn.numba_function`,
`fn.experimental.numba_function` in the submodules). The op is torch_dali's
`experimental.numba_function` (ops/numba_function.py); importing this module does not import
Numba, building a pipeline that uses the op does (pip install 'torch_dali[numba]')."""
from __future__ import annotations

from ... import ops as _ops

NumbaFunction = _ops.experimental.NumbaFunction

from . import experimental, fn  # noqa: E402,F401

__all__ = ["NumbaFunction"]
