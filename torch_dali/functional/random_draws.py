"""Draws of random.beta and random.choice from a caller's torch.Generator (a sample's keyed one).

Beta(a, b) is G_a / (G_a + G_b) with G gamma variates, computed from their logarithms (a sigmoid
of the difference), so parameters from 1e-44 to 1e35 neither underflow nor overflow. Gamma
variates: Marsaglia and Tsang's squeeze method (a >= 1; its test is evaluated without cancellation
for large a) and, for a < 1, G_a = G_{a+1} * U**(1/a) in logarithms."""
from __future__ import annotations

import math
from typing import Sequence

import torch

_F64 = torch.float64


def _excess(w: torch.Tensor) -> torch.Tensor:
    """exp(w) - 1 - w, accurate for small |w| (a series there instead of a difference)."""
    series = w * w * (0.5 + w * (1.0 / 6 + w * (1.0 / 24 + w / 120)))
    return torch.where(w.abs() < 1e-3, series, torch.expm1(w) - w)


def log_gamma(alpha: float, n: int, gen: torch.Generator) -> torch.Tensor:
    """log of `n` Gamma(alpha, 1) variates (float64)."""
    a = alpha if alpha >= 1.0 else alpha + 1.0
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    out = torch.empty(n, dtype=_F64)
    todo = torch.arange(n)
    while todo.numel():
        m = int(todo.numel())
        x = torch.randn(m, generator=gen, dtype=_F64)
        u = 1.0 - torch.rand(m, generator=gen, dtype=_F64)  # (0, 1]
        t = c * x
        ok = t > -1.0
        w = 3.0 * torch.log1p(torch.where(ok, t, torch.zeros_like(t)))  # log v, v = (1 + t)**3
        ok &= torch.log(u) < 0.5 * x * x - d * _excess(w)  # d - d*v + d*log(v) = -d*(v - 1 - log v)
        out[todo[ok]] = math.log(d) + w[ok]
        todo = todo[~ok]
    if alpha < 1.0:
        u = 1.0 - torch.rand(n, generator=gen, dtype=_F64)
        out += torch.log(u) / alpha
    return out


def beta(alpha: float, beta_: float, shape: Sequence[int], gen: torch.Generator, dtype: torch.dtype) -> torch.Tensor:
    n = math.prod(shape)
    ga, gb = log_gamma(alpha, n, gen), log_gamma(beta_, n, gen)
    return torch.sigmoid(ga - gb).to(dtype).reshape(list(shape))


def choice_indices(count: int, n: int, probs: torch.Tensor | None, gen: torch.Generator) -> torch.Tensor:
    """`count` indices in [0, n): uniform, or drawn with probabilities `probs` (never one of
    probability 0)."""
    if probs is None:
        return torch.randint(n, (count,), generator=gen, dtype=torch.int64)
    p = probs.to(_F64)
    cdf = torch.cumsum(p, 0)
    u = torch.rand(count, generator=gen, dtype=_F64) * cdf[-1]
    idx = torch.searchsorted(cdf, u, right=True)
    last = int(torch.nonzero(p > 0)[-1])
    return idx.clamp_(max=last)
