"""`torch_dali.backend` mirrors what DALI code reads from `nvidia.dali.backend` (and
`backend_impl`): the batch and sample classes, version numbers and the memory knobs. DALI's memory
knobs tune its own allocators; torch's caching allocator replaces them, so they are accepted and,
where torch has an equivalent, do that."""
from __future__ import annotations

import ctypes
from typing import Any

import torch

from . import __version__ as _version
from . import tfrecord, types  # noqa: F401 - DALI's `backend_impl.tfrecord` / `.types`
from .samples import TensorCPU, TensorGPU  # noqa: F401
from .tensor_list import TensorListCPU, TensorListGPU  # noqa: F401
from .ops.dali_schema import DaliSchema as OpSchema, get_schema as GetSchema  # noqa: F401
from .ops.dali_schema import registered_ops, try_get_schema as TryGetSchema  # noqa: F401


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


def GetNvjpegVersion() -> int:  # noqa: N802
    """-1, as DALI 2.4 answers everywhere: it no longer links nvJPEG itself. DALI's tests compare
    this with a version (`GetNvjpegVersion() < 11040`) to pick tolerances or skip HW-decoder cases."""
    return -1


def GetNppVersion() -> int:  # noqa: N802
    """-1, as DALI 2.4 answers without NPP linked in; torch_dali uses no NPP."""
    return -1


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


def RegisteredCPUOps(internal_ops: bool = False) -> list[str]:  # noqa: N802
    """DALI's schema names of the ops that run on the CPU (deprecated names included)."""
    return registered_ops("cpu")


def RegisteredGPUOps(internal_ops: bool = False) -> list[str]:  # noqa: N802
    return registered_ops("gpu")


def RegisteredMixedOps(internal_ops: bool = False) -> list[str]:  # noqa: N802
    return registered_ops("mixed")


def _accepted(*args: object, **kwargs: object) -> None:
    """DALI allocator knobs: torch's caching allocator has no counterpart; accepted, no effect."""


# DALI's buffer-size policy (its defaults): kept to be read back, used by nothing here
_buffer_policy = {"host_shrink": 0.5, "host_growth": 1.1, "device_growth": 1.1}


def _in_range(what: str, value: float, lo: float, hi: float) -> float:
    if not lo <= value <= hi:
        raise ValueError(f"{what} must be in [{lo:g}, {hi:g}], got {value}")
    return float(value)


def SetHostBufferShrinkThreshold(ratio: float) -> None:  # noqa: N802
    _buffer_policy["host_shrink"] = _in_range("the host buffer shrink threshold", ratio, 0, 1)


def SetHostBufferGrowthFactor(factor: float) -> None:  # noqa: N802
    _buffer_policy["host_growth"] = _in_range("a buffer growth factor", factor, 1, 4)


def SetDeviceBufferGrowthFactor(factor: float) -> None:  # noqa: N802
    _buffer_policy["device_growth"] = _in_range("a buffer growth factor", factor, 1, 4)


def SetBufferGrowthFactor(factor: float) -> None:  # noqa: N802
    SetHostBufferGrowthFactor(factor)
    SetDeviceBufferGrowthFactor(factor)


def GetHostBufferShrinkThreshold() -> float:  # noqa: N802
    return _buffer_policy["host_shrink"]


def GetHostBufferGrowthFactor() -> float:  # noqa: N802
    return _buffer_policy["host_growth"]


def GetDeviceBufferGrowthFactor() -> float:  # noqa: N802
    return _buffer_policy["device_growth"]


PreallocateDeviceMemory = _accepted
PreallocatePinnedMemory = _accepted


_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_DL_CPU, _DL_CUDA = 1, 2  # DLPack's device types


def CheckDLPackCapsule(obj: Any) -> tuple[bool, bool]:  # noqa: N802
    """(a DLPack capsule of a CPU or CUDA tensor, on CUDA), read without consuming the capsule;
    anything that is no capsule is (False, False). As DALI 2.4: a capsule whose name is not an
    unconsumed "dltensor" (consumed, or DLPack 1.0's "dltensor_versioned") is a RuntimeError."""
    if type(obj).__name__ != "PyCapsule" or type(obj).__module__ != "builtins":
        return (False, False)
    if _capsule_name(obj) != b"dltensor":
        raise RuntimeError(f"CheckDLPackCapsule: {obj!r} is not an unconsumed DLPack 'dltensor' capsule")
    device_type = ctypes.c_int32.from_address(_capsule_pointer(obj, b"dltensor") + 8).value  # after `data`
    return (device_type in (_DL_CPU, _DL_CUDA), device_type == _DL_CUDA)
