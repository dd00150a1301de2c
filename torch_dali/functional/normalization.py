"""fn.normalize: (x - mean) / stddev * scale + shift with statistics over chosen axes, per sample or
across the batch (CPU or CUDA tensors).

Facts (DALI 2.4): stddev = sqrt(sum((x - mean)^2) / (n - ddof) + epsilon), with the variance 0
when n <= ddof; an external stddev becomes sqrt(stddev^2 + epsilon); where stddev is 0 the output
is `shift` (the reciprocal is taken as 0). Statistics are accumulated in float64, the output is
computed in float32 and converted (integers rounded half away from zero, saturated).
"""
from __future__ import annotations

import math
from typing import Sequence

import torch

from .crop import convert

F64, F32 = torch.float64, torch.float32


def reduce_sums(samples: Sequence[torch.Tensor], axes: Sequence[int],
                center: torch.Tensor | None = None) -> tuple[torch.Tensor, int]:
    """sum over `axes` (kept, extent 1) of each sample (or of its squared distance to `center`),
    added over the samples, and the number of values summed."""
    total: torch.Tensor | None = None
    count = 0
    for s in samples:
        v = s.to(F64)
        if center is not None:
            v = (v - center.to(v.device)) ** 2
        part = v.sum(dim=tuple(axes), keepdim=True) if axes else v
        total = part if total is None else total + part
        count += math.prod(int(s.shape[a]) for a in axes)
    if total is None:
        raise ValueError("no samples to reduce")
    return total, count


def stddev_from(ssq: torch.Tensor, count: int, ddof: int, epsilon: float) -> torch.Tensor:
    factor = count - ddof
    var = ssq / factor if factor > 0 else torch.zeros_like(ssq)
    return torch.sqrt(var + epsilon)


def apply(x: torch.Tensor, mean: torch.Tensor, stddev: torch.Tensor, scale: float, shift: float,
          dtype: torch.dtype) -> torch.Tensor:
    """scale * (x - mean) / stddev + shift in float32 (0 * ... where stddev is 0), as `dtype`."""
    std = stddev.to(x.device, F64)
    inv = torch.where(std != 0, scale / torch.where(std != 0, std, torch.ones_like(std)), torch.zeros_like(std))
    # one new tensor, the rest in place: the same float32 operations as (x - mean) * inv + shift
    y = torch.sub(x.to(F32), mean.to(x.device, F32))
    inv32 = inv.to(F32)
    y = y.mul_(inv32) if torch.broadcast_shapes(y.shape, inv32.shape) == y.shape else y * inv32
    return convert(y.add_(shift), dtype)
