"""The one patch applied to both sides (real DALI and torch_dali), identically.

DALI's tests build nearly every pipeline with `device_id=0`; DALI 2.4 refuses to build such a
pipeline on a machine without CUDA ("set `device_id = None`"). So when no CUDA device is present,
`Pipeline.__init__` (reached by subclasses' `super().__init__` and by `pipeline_def`) sees
`device_id=0` replaced by `None`. Nothing else is changed. A pipeline that really needs the GPU
(gpu/mixed ops, `.gpu()`) still fails under DALI; the runner counts such cases as not runnable here.
"""
from __future__ import annotations

import ctypes
import functools
import inspect
from typing import Any


def cuda_present() -> bool:
    """A CUDA driver with at least one device, asked of the driver itself (no torch, no DALI)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    try:
        if lib.cuInit(0) != 0 or lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return False
    except AttributeError:
        return False
    return count.value > 0


def patch_device_id(pipeline_cls: type) -> None:
    """`device_id=0` -> `None` in `pipeline_cls.__init__` (positional or keyword)."""
    orig = pipeline_cls.__init__
    if getattr(orig, "_conformance_patched", False):
        return
    sig = inspect.signature(orig)

    @functools.wraps(orig)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            bound = sig.bind_partial(self, *args, **kwargs)
        except TypeError:  # the original raises its own error for a bad call
            return orig(self, *args, **kwargs)
        dev = bound.arguments.get("device_id")
        if isinstance(dev, int) and not isinstance(dev, bool) and dev == 0:
            bound.arguments["device_id"] = None
            return orig(*bound.args, **bound.kwargs)
        return orig(self, *args, **kwargs)

    # DALI's pipeline_def reads the constructor's arguments with inspect.getfullargspec, which
    # does not follow __wrapped__ but does read __signature__.
    __init__.__signature__ = sig  # type: ignore[attr-defined]
    __init__._conformance_patched = True  # type: ignore[attr-defined]
    pipeline_cls.__init__ = __init__  # type: ignore[method-assign]
