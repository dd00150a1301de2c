"""Noise kernels (gaussian, salt-and-pepper, shot) over batches, with a counter-based RNG in torch.

Every random word is a hash of (the sample's key, the element's index in its sample, a stream
number), computed with int64 torch ops on the data's device: a dense batch draws all its samples
in one set of calls, the result of a sample does not depend on the batch around it, on threads or
on the device, and the sample's key comes from its keyed `SampleRNG` (pipeline seed, op seed,
iteration, sample index). 32-bit words are made with a two-round multiply-xorshift hash whose
products are split in 16-bit halves, so no int64 product overflows.
"""
from __future__ import annotations

import math

import torch

from .crop import convert

_M32 = 0xFFFFFFFF
_C1, _C2 = 0x7FEB352D, 0x846CA68B  # multipliers of a well-mixing 32-bit hash (lowbias32)


def _mul32(a: torch.Tensor, c: int) -> torch.Tensor:
    """(a * c) mod 2**32 for 0 <= a < 2**32, without int64 overflow."""
    lo, hi = a & 0xFFFF, a >> 16
    return (lo * c + (((hi * c) & 0xFFFF) << 16)) & _M32


def hash32(x: torch.Tensor) -> torch.Tensor:
    x = x ^ (x >> 16)
    x = _mul32(x, _C1)
    x = x ^ (x >> 15)
    x = _mul32(x, _C2)
    return x ^ (x >> 16)


def words(keys: torch.Tensor, counters: torch.Tensor, stream: int, ids: torch.Tensor | None = None) -> torch.Tensor:
    """32-bit random words (int64 in [0, 2**32)): `keys` (N, 1...) 63-bit per-sample keys broadcast
    against `counters` (element indices). With `ids` (a flat batch, `functional.ragged`), keys are
    (N,) and each counter's key is that of sample ids[i]: the same words."""
    k_lo, k_hi = keys & _M32, (keys >> 32) & _M32
    k = hash32(k_lo ^ hash32(k_hi ^ ((stream * 0x9E3779B9) & _M32)))
    if ids is not None:
        k, k_hi = k.index_select(0, ids), k_hi.index_select(0, ids)
    return hash32(hash32(counters ^ k) ^ k_hi)


def uniform(keys: torch.Tensor, counters: torch.Tensor, stream: int,
            dtype: torch.dtype = torch.float32, ids: torch.Tensor | None = None) -> torch.Tensor:
    """Uniform values in (0, 1), 24 random bits (float32) or 32 (float64)."""
    w = words(keys, counters, stream, ids)
    if dtype == torch.float64:
        return (w.to(torch.float64) + 0.5) * 2.0 ** -32
    return ((w >> 8).to(torch.float32) + 0.5) * 2.0 ** -24


def normal(keys: torch.Tensor, counters: torch.Tensor, stream: int, ids: torch.Tensor | None = None) -> torch.Tensor:
    """Standard normal float32 values (Box-Muller on streams `stream` and `stream + 1`)."""
    u1 = uniform(keys, counters, stream, ids=ids)
    u2 = uniform(keys, counters, stream + 1, ids=ids)
    return torch.sqrt(-2.0 * torch.log(u1)) * torch.cos((2.0 * math.pi) * u2)


def counters_for(shape: tuple[int, ...], device: torch.device) -> torch.Tensor:
    """Each element's index within its sample, shaped like one sample."""
    n = math.prod(shape)
    return torch.arange(n, dtype=torch.int64, device=device).reshape(shape)


def _bcast(v: torch.Tensor, ndim: int) -> torch.Tensor:
    return v.reshape(v.shape[0], *([1] * (ndim - 1)))


def gaussian(x: torch.Tensor, keys: torch.Tensor, mean: torch.Tensor, stddev: torch.Tensor) -> torch.Tensor:
    """x + N(mean, stddev) for a batch (N, ...); per-sample (N,) mean/stddev; converted back to
    x's type (integers rounded, saturated)."""
    c = counters_for(tuple(x.shape[1:]), x.device).unsqueeze(0)
    k = _bcast(keys.to(x.device), x.dim())
    z = normal(k, c, 0)
    y = x.to(torch.float32) + (_bcast(mean.to(x.device), x.dim()) + _bcast(stddev.to(x.device), x.dim()) * z)
    return convert(y, x.dtype)


def gaussian_flat(values: torch.Tensor, ids: torch.Tensor, counters: torch.Tensor, keys: torch.Tensor,
                  mean: torch.Tensor, stddev: torch.Tensor) -> torch.Tensor:
    """`gaussian` for a flat batch (`functional.ragged`): values (E,) of the samples ids (E,),
    their indices in their samples `counters` (E,); per-sample (N,) keys, mean and stddev."""
    dev = values.device
    z = normal(keys.to(dev), counters, 0, ids)
    m = mean.to(dev).index_select(0, ids)
    sd = stddev.to(dev).index_select(0, ids)
    return convert(values.to(torch.float32) + (m + sd * z), values.dtype)


def salt_and_pepper_flat(items: torch.Tensor, ids: torch.Tensor, counters: torch.Tensor, keys: torch.Tensor,
                         prob: torch.Tensor, salt_vs_pepper: torch.Tensor, salt: torch.Tensor,
                         pepper: torch.Tensor) -> torch.Tensor:
    """`salt_and_pepper` for a flat batch: items (E, K) (K values sharing a draw: a pixel's
    channels, or 1) of the samples ids (E,), their indices `counters` (E,); per-sample (N,)
    parameters, salt/pepper in the items' type."""
    dev = items.device
    k = keys.to(dev)
    hit = uniform(k, counters, 0, ids=ids) < prob.to(dev).index_select(0, ids)
    is_salt = uniform(k, counters, 1, ids=ids) < salt_vs_pepper.to(dev).index_select(0, ids)
    s = salt.to(dev, items.dtype).index_select(0, ids)
    p = pepper.to(dev, items.dtype).index_select(0, ids)
    noise = torch.where(is_salt, s, p)
    return torch.where(hit[:, None], noise[:, None], items)


def salt_and_pepper(x: torch.Tensor, keys: torch.Tensor, prob: torch.Tensor, salt_vs_pepper: torch.Tensor,
                    salt: torch.Tensor, pepper: torch.Tensor, channel_axis: int | None) -> torch.Tensor:
    """Each value (or each pixel, when `channel_axis` (of x, batch axis 0) is given: all its
    channels together) becomes `salt` or `pepper` with probability `prob`; `salt_vs_pepper` of
    those are salt. Per-sample (N,) parameters; `salt`/`pepper` already in x's type."""
    shape = list(x.shape[1:])
    if channel_axis is not None:
        shape[channel_axis - 1] = 1
    c = counters_for(tuple(shape), x.device).unsqueeze(0)
    k = _bcast(keys.to(x.device), x.dim())
    hit = uniform(k, c, 0) < _bcast(prob.to(x.device), x.dim())
    is_salt = uniform(k, c, 1) < _bcast(salt_vs_pepper.to(x.device), x.dim())
    s = _bcast(salt.to(x.device, x.dtype), x.dim())
    p = _bcast(pepper.to(x.device, x.dtype), x.dim())
    noise = torch.where(is_salt, s, p)
    return torch.where(hit, noise, x)


# -- Poisson --------------------------------------------------------------------------------------

_INVERSION_MAX = 12.0  # below: sequential inversion; above: transformed rejection (PTRS)


def _poisson_small(lam: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Inversion: the smallest k with CDF(k) >= u, for lam < 12 (float64)."""
    k = torch.zeros_like(lam)
    p = torch.exp(-lam)
    cdf = p.clone()
    for i in range(1, 200):  # P(k >= 200 | lam < 12) is below 1e-150
        more = u > cdf
        if not bool(more.any()):
            break
        k = k + more.to(k.dtype)
        p = p * lam / i
        cdf = cdf + p
    return k


def _poisson_large(lam: torch.Tensor, keys: torch.Tensor, counters: torch.Tensor) -> torch.Tensor:
    """Hörmann's transformed rejection (PTRS) for lam >= 10, float64; each round draws on its own
    streams, so an element's value depends only on its key and index."""
    slam, loglam = torch.sqrt(lam), torch.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    out = torch.full_like(lam, -1.0)
    todo = torch.ones_like(lam, dtype=torch.bool)
    for rnd in range(64):  # acceptance is above 0.9 a round: 64 rounds leave ~1e-64 undecided
        idx = todo.nonzero(as_tuple=True)
        if idx[0].numel() == 0:
            break
        kk, cc = keys[idx], counters[idx]
        u = uniform(kk, cc, 2 + 2 * rnd, torch.float64) - 0.5
        v = uniform(kk, cc, 3 + 2 * rnd, torch.float64)
        us = 0.5 - u.abs()
        la, bb, aa = lam[idx], b[idx], a[idx]
        k = torch.floor((2 * aa / us + bb) * u + la + 0.43)
        quick = (us >= 0.07) & (v <= vr[idx])
        bad = (k < 0) | ((us < 0.013) & (v > us))
        lhs = torch.log(v) + torch.log(inv_alpha[idx]) - torch.log(aa / (us * us) + bb)
        rhs = -la + k * loglam[idx] - torch.lgamma(k + 1)
        ok = quick | (~bad & (lhs <= rhs))
        out[idx] = torch.where(ok, k, out[idx])
        todo[idx] = ~ok
    if bool(todo.any()):  # never seen; a normal approximation keeps the result defined
        out = torch.where(todo, torch.clamp(torch.round(lam), min=0), out)
    return out


def poisson(lam: torch.Tensor, keys: torch.Tensor, counters: torch.Tensor) -> torch.Tensor:
    """Poisson draws of rate `lam` (>= 0, float64), keyed per element."""
    out = torch.zeros_like(lam)
    small = (lam > 0) & (lam < _INVERSION_MAX)
    if bool(small.any()):
        idx = small.nonzero(as_tuple=True)
        out[idx] = _poisson_small(lam[idx], uniform(keys[idx], counters[idx], 0, torch.float64))
    large = lam >= _INVERSION_MAX
    if bool(large.any()):
        idx = large.nonzero(as_tuple=True)
        out[idx] = _poisson_large(lam[idx], keys[idx], counters[idx])
    return out


def shot(x: torch.Tensor, keys: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """poisson(max(0, x / factor)) * factor per value (x unchanged where factor is 0), back in
    x's type. Per-sample (N,) factors."""
    f = _bcast(factor.to(x.device, torch.float64), x.dim())
    xf = x.to(torch.float64)
    lam = torch.clamp(torch.where(f != 0, xf / torch.where(f != 0, f, torch.ones_like(f)), torch.zeros_like(xf)),
                      min=0)
    c = counters_for(tuple(x.shape[1:]), x.device).unsqueeze(0).expand(x.shape)
    k = _bcast(keys.to(x.device), x.dim()).expand(x.shape)
    y = poisson(lam, k, c) * f
    y = torch.where(f != 0, y, xf)
    return convert(y.to(torch.float32) if x.dtype == torch.float32 else y, x.dtype)
