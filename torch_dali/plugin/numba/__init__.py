"""`nvidia.dali.plugin.numba`'s names: the NumbaFunction op class (`fn.numba_function`,
`fn.experimental.numba_function` in the submodules). The op is torch_dali's
`experimental.numba_function` (ops/numba_function.py); importing this module does not import
Numba, building a pipeline that uses the op does (pip install 'torch_dali[numba]')."""
from __future__ import annotations

from ... import ops as _ops
from ...ops.numba_function import gpu_variant_usable as _gpu_variant_usable

NumbaFunction = _ops.experimental.NumbaFunction
# DALI's static checks of its GPU variant (its tests call them to skip GPU cases)
NumbaFunction._check_minimal_numba_version = staticmethod(_gpu_variant_usable)
NumbaFunction._check_cuda_compatibility = staticmethod(_gpu_variant_usable)

from . import experimental, fn  # noqa: E402,F401

__all__ = ["NumbaFunction"]
