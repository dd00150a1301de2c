"""Kernels of one_hot and the C-style conversions of its on/off values. Pure torch."""
from __future__ import annotations

import math

import torch

_I64 = (-(1 << 63), (1 << 63) - 1)


def c_cast(value: float, dtype: torch.dtype, device: torch.device | str = "cpu") -> torch.Tensor:
    """`value` converted as C converts a float to `dtype` (what DALI's one_hot does with on_value and
    off_value): floats as they are; integers truncated toward zero and wrapped modulo 2**bits
    (300.0 -> 44 as uint8, -1.5 -> 255)."""
    if dtype.is_floating_point:
        return torch.tensor(value, dtype=dtype, device=device)
    if dtype == torch.bool:
        return torch.tensor(value != 0, device=device)
    if math.isnan(value):
        value = 0.0
    whole = int(min(max(math.trunc(value) if math.isfinite(value) else value, _I64[0]), _I64[1]))
    return torch.tensor(whole, dtype=torch.int64, device=device).to(dtype)


def one_hot(x: torch.Tensor, num_classes: int, axis: int, on: torch.Tensor, off: torch.Tensor) -> torch.Tensor:
    """A new axis of `num_classes` entries at `axis`: `on` where the entry's index is the input's
    class (its value truncated to an integer), `off` elsewhere (classes outside [0, num_classes)
    give no `on`). Works on a batch as on a sample: `axis` counts the batch axis if there is one."""
    cls = x.to(torch.int64) if x.dtype.is_floating_point else x.to(torch.int64)
    cls = cls.unsqueeze(axis)
    view = [1] * cls.dim()
    view[axis] = num_classes
    idx = torch.arange(num_classes, device=x.device).reshape(view)
    return torch.where(cls == idx, on, off)
