"""Turning user data (NumPy arrays, torch tensors, DLPack objects, Python scalars and lists, enum
values, torch_dali tensors) into the torch tensors the dynamic mode's Tensor and Batch hold, with
DALI's types for Python values (ints INT32, floats FLOAT, bools BOOL)."""
from __future__ import annotations

import enum
from typing import Any

import numpy as np
import torch

from ...backend import TensorCPU, TensorGPU
from ...ops import arith_kernels as K
from ...tensor_list import TensorList
from . import _device as D
from . import _type as T
from ._device import Device

def enum_type(x: Any) -> T.DType | None:
    return T.ENUM_TYPES.get(type(x)) if isinstance(x, enum.Enum) else None


def python_scalar_dtype(x: Any) -> torch.dtype | None:
    if isinstance(x, (bool, np.bool_)):
        return torch.bool
    if isinstance(x, int):
        return torch.int32
    if isinstance(x, float):
        return torch.float32
    return None


def from_nested(data: Any) -> tuple[torch.Tensor, T.DType | None]:
    """Python scalars / (nested) lists: ints are INT32, floats FLOAT, bools BOOL (as DALI)."""
    flat = data
    while isinstance(flat, (list, tuple)) and flat:
        flat = flat[0]
    et = enum_type(flat)
    if et is not None:
        return torch.tensor(np.vectorize(int, otypes=[np.int32])(np.array(data, dtype=object)) if isinstance(
            data, (list, tuple)) else int(data), dtype=torch.int32), et
    arr = np.asarray(data)
    if arr.dtype == np.float64 and not isinstance(data, np.ndarray):
        arr = arr.astype(np.float32)
    elif arr.dtype == np.int64 and not isinstance(data, (np.ndarray, np.generic)):
        arr = arr.astype(np.int32)
    if arr.dtype == object:
        raise TypeError(f"ndd: cannot make a tensor of {type(data).__name__} data")
    return torch.from_numpy(np.array(arr)), None


def to_torch(data: Any, copy: bool) -> tuple[torch.Tensor, T.DType | None, str | None]:
    """(torch tensor, enum dtype if any, layout found) of any data a Tensor is made from; shares
    memory unless `copy`."""
    if isinstance(data, TensorCPU):
        layout = data.dali_layout() or None
        t = data.as_subclass(torch.Tensor)
        return (t.clone() if copy else t), None, layout
    if isinstance(data, torch.Tensor):
        return (data.clone() if copy else data), None, None
    if isinstance(data, np.ndarray):
        if data.dtype == object:
            raise TypeError("ndd: NumPy arrays of objects cannot be tensors")
        if not copy and data.flags.writeable and data.dtype.isnative:
            try:
                return torch.from_numpy(data), None, None
            except (TypeError, ValueError):
                pass
        return torch.from_numpy(np.array(data)), None, None
    if isinstance(data, TensorList):
        dense = data.as_tensor()
        return (dense.clone() if copy else dense), None, None
    if hasattr(data, "__dlpack__") and not isinstance(data, (list, tuple)):
        try:
            t = torch.from_dlpack(data)
            return (t.clone() if copy else t), None, None
        except (TypeError, BufferError, RuntimeError):
            pass
    if hasattr(data, "__array__") or hasattr(data, "__array_interface__"):
        return to_torch(np.asarray(data), copy)
    t, et = from_nested(data)
    return t, et, None


def cast(t: torch.Tensor, dt: T.DType) -> torch.Tensor:
    if t.dtype == dt.torch_dtype:
        return t
    if dt.kind is T.DType.Kind.enum:
        return t.to(torch.int32)
    return K.cast_sat(t, dt.torch_dtype)


def check_layout(layout: str | None, ndim: int, what: str) -> str | None:
    if layout is None or layout == "":
        return None
    layout = str(layout)
    if len(layout) != ndim:
        raise ValueError(f"{what}: layout {layout!r} has {len(layout)} dimensions, the data have {ndim} dimensions")
    return layout


def wrap(t: torch.Tensor, layout: str | None) -> TensorCPU:
    cls = TensorGPU if t.is_cuda else TensorCPU
    out = t.as_subclass(cls)
    out.set_layout(layout or "")
    return out


def place(t: torch.Tensor, dev: Device | None) -> torch.Tensor:
    if dev is None:
        return t
    target = D.to_torch(dev)
    return t if t.device == target else t.to(target)
