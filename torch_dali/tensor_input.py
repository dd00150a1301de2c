"""How data from outside becomes torch tensors for DALI's batch and sample classes: NumPy arrays,
DLPack capsules and other array-likes, shared without a copy where torch can; and a batch's
bytes seen as another element type (DALI's `reinterpret`)."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from . import types
from .errors import ArgumentError, ArgumentTypeError


def from_numpy(x: np.ndarray) -> torch.Tensor:
    """A NumPy array as a torch tensor, sharing memory where torch can: read-only arrays and
    negative strides are copied; NumPy's second names of a type (`np.ulonglong` beside `np.uint64`,
    which torch does not know) are viewed as the first."""
    if not x.flags.writeable:
        x = x.copy()  # torch tensors are writable; never alias read-only memory
    canonical = np.dtype(x.dtype.str) if x.dtype.kind in "biuf" else x.dtype
    if canonical != x.dtype or canonical.char != x.dtype.char:
        x = x.view(canonical)
    try:
        return torch.from_numpy(x)
    except ValueError:  # negative strides
        return torch.from_numpy(np.ascontiguousarray(x).copy())


def from_user(x: Any, where: str) -> torch.Tensor:
    """One array-like (NumPy, torch, DLPack, TensorCPU, scalar) as a torch tensor, sharing memory
    where it can (read-only NumPy arrays are copied: torch tensors are writable)."""
    if isinstance(x, torch.Tensor):
        return x if type(x) is torch.Tensor else x.as_subclass(torch.Tensor)
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            raise ArgumentTypeError(f"{where}: got a NumPy array of Python objects; give numbers")
        return from_numpy(x)
    if isinstance(x, (bool, int, float, np.generic)):
        return torch.from_numpy(np.asarray(x))
    if hasattr(x, "__dlpack__") or type(x).__name__ == "PyCapsule":  # a DLPack capsule too
        return torch.from_dlpack(x)
    if hasattr(x, "__array__") or isinstance(x, (list, tuple)):
        return from_user(np.asarray(x), where)
    raise ArgumentTypeError(f"{where}: cannot make a tensor out of {type(x).__name__}")


class ReinterpretError(ArgumentError, RuntimeError):
    """`reinterpret` to a type of another element size: a ValueError, and a RuntimeError as in DALI."""


def reinterpreted(t: torch.Tensor, dtype: Any) -> torch.Tensor:
    want = types.to_torch_dtype(dtype)
    if want.itemsize != t.dtype.itemsize:
        raise ReinterpretError(f"reinterpret: {want} has a different element size ({want.itemsize} bytes) "
                               f"than the data's {t.dtype} ({t.dtype.itemsize} bytes)")
    return t.view(want)
