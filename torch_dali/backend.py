"""`torch_dali.backend` mirrors what DALI code reads from `nvidia.dali.backend` (and
`backend_impl`): the batch and sample classes, version numbers and the memory knobs. DALI's memory
knobs tune its own allocators; torch's caching allocator replaces them, so they are accepted and,
where torch has an equivalent, do that."""
from __future__ import annotations

import torch

from . import __version__ as _version
from . import types  # noqa: F401 - DALI's `backend_impl.types`: the type enums
from .tensor_list import TensorCPU, TensorGPU, TensorListCPU, TensorListGPU  # noqa: F401
from .ops.dali_schema import DaliSchema as OpSchema, get_schema as GetSchema  # noqa: F401
from .ops.dali_schema import try_get_schema as TryGetSchema  # noqa: F401


def _cuda_int(v: str | None) -> int:
    """"12.4" -> 12040 (DALI's encoding: major * 1000 + minor * 10); 0 without CUDA."""
    if not v:
        return 0
    parts = (v.split(".") + ["0"])[:2]
    try:
        return int(parts[0]) * 1000 + int(parts[1]) * 10
    except ValueError:
        return 0


__version__ = _version
#: the CUDA version torch was built with (DALI reports the one it was built with); 0 without CUDA
__cuda_version__ = _cuda_int(torch.version.cuda)


def GetCudaVersion() -> int:  # noqa: N802 - DALI's name
    """The CUDA runtime version (torch's build), 0 without CUDA."""
    return __cuda_version__


def GetCUDADeviceCount() -> int:  # noqa: N802
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def GetCUDACurrentDevice() -> int:  # noqa: N802
    return torch.cuda.current_device() if torch.cuda.is_available() else 0


def IsDriverInitialized() -> bool:  # noqa: N802
    return torch.cuda.is_initialized()


def ReleaseUnusedMemory() -> None:  # noqa: N802
    """Returns cached device memory to the driver."""
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def RestrictPinnedMemUsage() -> bool:  # noqa: N802
    """Whether pinned host memory is restricted (never, here: torch's allocator manages it)."""
    return False


def _accepted(*args: object, **kwargs: object) -> None:
    """DALI allocator knobs: torch's caching allocator has no counterpart; accepted, no effect."""


SetHostBufferShrinkThreshold = _accepted
SetHostBufferGrowthFactor = _accepted
SetDeviceBufferGrowthFactor = _accepted
SetBufferGrowthFactor = _accepted
PreallocateDeviceMemory = _accepted
PreallocatePinnedMemory = _accepted
