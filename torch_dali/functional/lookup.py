"""Lookup tables (fn.lookup_table): integer inputs mapped through a table, a default elsewhere."""
from __future__ import annotations

from typing import Sequence

import torch

from .crop import convert

MAX_KEY = 65535


def make_table(keys: Sequence[int], values: Sequence[float], default: float,
               dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """(table, default) in `dtype`: table[k] = the last value given for key k, `default` for keys
    not given; values are converted as DALI converts (rounded half away from zero, saturated)."""
    size = (max(keys) + 1) if keys else 0
    table = torch.full((size,), float(default), dtype=torch.float32)
    for k, v in zip(keys, values):
        table[int(k)] = float(v)
    dflt = torch.tensor([float(default)], dtype=torch.float32)
    return convert(table, dtype), convert(dflt, dtype)[0]


def lookup(x: torch.Tensor, table: torch.Tensor, default: torch.Tensor) -> torch.Tensor:
    """table[x] where 0 <= x < len(table), `default` elsewhere (any shape, one launch)."""
    n = int(table.numel())
    table, default = table.to(x.device), default.to(x.device)
    if n == 0:
        return default.expand(x.shape).clone()
    xi = x.to(torch.int64)  # uint64 beyond 2**63 wraps negative: outside the table either way
    inside = (xi >= 0) & (xi < n)
    return torch.where(inside, table[torch.where(inside, xi, torch.zeros_like(xi))], default)
