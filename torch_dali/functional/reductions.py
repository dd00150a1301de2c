"""Reductions over axes (reductions.sum/min/max/mean/mean_square/rms/std_dev/variance), with DALI
2.4's types and conventions. Pure torch; a kernel takes a sample, or a whole dense batch with its
leading sample axis (`axes` then count from 1).

DALI's rules kept here: sums of integers are 64-bit of the input's signedness (uint8 -> uint64);
integer results wrap (an integer `dtype` accumulates modulo 2**bits); means (and variances) are the
sum times 1/N rounded to float32 (float64 for FLOAT64 outputs), integer ones then truncated;
min/max of nothing is the type's identity (the largest/lowest value, floats' largest finite); a
mean over nothing is NaN; variance divides by N - ddof as given (0: inf or NaN). Float results are
summed in the output type in DALI's order (`reduce_order`); squares of integers are taken in 64 bits
(uint16's too: DALI's 32-bit int square overflows there, see conformance/on_purpose.md).
torch lacks min/max and sum kernels for uint16/32/64: those compute on wider or bit-flipped int64.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import torch

from .reduce_order import dali_sum

_UNSIGNED = (torch.uint8, torch.uint16, torch.uint32, torch.uint64)
_WIDER = {torch.uint16: torch.int32, torch.uint32: torch.int64}
_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
MEAN_KINDS = ("mean", "mean_square", "rms")


def is_int(dt: torch.dtype) -> bool:
    return not dt.is_floating_point and not dt.is_complex and dt != torch.bool


def default_dtype(kind: str, dt: torch.dtype) -> torch.dtype:
    """The output type DALI gives a reduction of `dt` when `dtype` is not set."""
    if kind == "sum" and is_int(dt):
        return torch.uint64 if dt in _UNSIGNED else torch.int64
    if kind in ("sum", "min", "max"):
        return dt
    return torch.float64 if dt == torch.float64 else torch.float32


def _identity(kind: str, dt: torch.dtype) -> float | int:
    info = torch.finfo(dt) if dt.is_floating_point else torch.iinfo(dt)
    return info.max if kind == "min" else info.min


def _ordered(x: torch.Tensor) -> tuple[torch.Tensor, torch.dtype | None]:
    """`x` in a type torch compares natively, in the same order (uint64: sign bit flipped)."""
    if x.dtype in _WIDER:
        return x.to(_WIDER[x.dtype]), None
    if x.dtype == torch.uint64:
        return x.view(torch.int64) ^ torch.iinfo(torch.int64).min, torch.uint64
    return x, None


def _wrap(v: torch.Tensor, dt: torch.dtype) -> torch.Tensor:
    """An int64 result as `dt`, modulo 2**bits (uint64: the same bits)."""
    if dt == torch.uint64:
        return v.view(torch.uint64)
    return v.to(dt)


def _int64(x: torch.Tensor) -> torch.Tensor:
    return x.view(torch.int64) if x.dtype == torch.uint64 else x.to(torch.int64)


#: sums over axes in DALI's order: `dali_sum`, or a caller's stand-in with the same results
SumFn = Callable[[torch.Tensor, Sequence[int]], torch.Tensor]


def reduce(x: torch.Tensor, kind: str, axes: Sequence[int], keep_dims: bool, dtype: torch.dtype,
           sum_fn: SumFn = dali_sum) -> torch.Tensor:
    """`kind` ("sum", "min", "max", "mean", "mean_square", "rms") of `x` over `axes`, as `dtype`."""
    dims = tuple(axes)
    count = math.prod(int(x.shape[a]) for a in dims)
    shape = [1 if k in dims else int(s) for k, s in enumerate(x.shape)] if keep_dims else \
        [int(s) for k, s in enumerate(x.shape) if k not in dims]
    if not dims:  # nothing reduced: the values, converted (and squared) as the reduction would
        dims, count = (), 1
    if kind in ("min", "max"):
        if count == 0:
            return torch.full(shape, _identity(kind, x.dtype), dtype=x.dtype, device=x.device)
        if not dims:
            return x.clone()
        if x.dtype.is_floating_point:  # DALI 2.4 starts from the type's finite extreme and keeps
            ident = _identity(kind, x.dtype)  # it against NaN and infinities: NaNs never win
            x = torch.where(x.isnan(), torch.full_like(x, ident), x)
            x = x.clamp(min=ident) if kind == "max" else x.clamp(max=ident)
        v, back = _ordered(x)
        r = _extreme(v, kind, dims, keep_dims)
        if back is not None:
            return (r ^ torch.iinfo(torch.int64).min).view(torch.uint64)
        return r.to(x.dtype)
    if is_int(dtype):
        v = _int64(x)
        if kind != "sum" and kind != "mean":
            v = v * v
        s = v.sum(dim=dims, keepdim=keep_dims) if dims else v.clone()
        s = _int64(_wrap(s, dtype))  # accumulated in `dtype`: modulo 2**bits
        if kind == "sum":
            return _wrap(s, dtype).reshape(shape)
        if count == 0:
            return torch.zeros(shape, dtype=dtype, device=x.device)
        f = s.to(torch.float64) + (s < 0) * 2.0**64 if dtype == torch.uint64 else s
        q = scaled(f, count, dtype)  # the sum as float32 times 1/count, truncated back to `dtype`
        if kind == "rms":
            q = sqrt(q)
        return _wrap(q.to(torch.int64), dtype).reshape(shape)
    acc = dtype if dtype.is_floating_point else torch.float32  # DALI accumulates in the output type
    v = _as_float(_square(x) if kind in ("mean_square", "rms") else x, acc, x.dtype in _UNSIGNED)
    s = sum_fn(v, dims) if dims else v
    if kind == "sum":
        return s.to(dtype).reshape(shape)
    m = scaled(s, count, dtype)
    if kind == "rms":
        m = sqrt(m)
    return m.to(dtype).reshape(shape)


_BITS = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def _extreme(v: torch.Tensor, kind: str, dims: tuple[int, ...], keep_dims: bool) -> torch.Tensor:
    """torch's amin / amax of `v` over `dims`. Over several dims, one dim at a time (3x faster for
    the H and W of an HWC image: torch's reduction over a strided set of dims is slow). A min or max
    has one value whatever the order, and one bit pattern too, except a NaN (its payload) or a zero
    from a region holding both +0 and -0: there the one call decides, as before. (-0.0 is the
    lowest integer of its bits, which no other value is: a region's min of the bits finds it.)"""
    f = v.amin if kind == "min" else v.amax
    if len(dims) < 2:
        return f(dim=dims, keepdim=keep_dims)
    axes = sorted({d % v.dim() for d in dims})

    def steps(t: torch.Tensor, g: str) -> torch.Tensor:
        for d in axes:
            t = getattr(t, g)(dim=d, keepdim=True)
        return t
    r = steps(v, "amin" if kind == "min" else "amax")
    if r.dtype.is_floating_point:
        if bool(r.isnan().any()):
            return f(dim=dims, keepdim=keep_dims)
        zero = r == 0
        if bool(zero.any()):
            bits = _BITS[v.element_size()]
            if bool((zero & (steps(v.view(bits), "amin") == torch.iinfo(bits).min)).any()):
                return f(dim=dims, keepdim=keep_dims)
    return r if keep_dims else r.reshape([int(s) for k, s in enumerate(v.shape) if k not in axes])


def _square(x: torch.Tensor) -> torch.Tensor:
    """x * x as DALI's preprocessor computes it: floats in their own type, integers in 64 bits
    (wrapping for 64-bit inputs, as C++ does)."""
    return x * x if x.dtype.is_floating_point else _int64(x) * _int64(x)


def _as_float(v: torch.Tensor, acc: torch.dtype, unsigned: bool) -> torch.Tensor:
    """`v` converted to `acc` as C converts; `unsigned`: int64 bits of values up to 2**64."""
    if unsigned and v.dtype in (torch.uint64, torch.int64):  # narrower values convert as they are
        w = _int64(v)
        if bool(w.lt(0).any()):  # bits of values past 2**63 (uint64s, uint32 squares)
            return (w.double() + w.lt(0).double() * 2.0**64).to(acc)
        return w.to(acc)
    return v.to(acc)


def scaled(s: torch.Tensor, count: int, dtype: torch.dtype) -> torch.Tensor:
    """`s / count` as DALI's CPU kernels compute it: `s` in float32 (float64 for a FLOAT64 output)
    times 1/count rounded to that type (133.58334 where the quotient rounds to 133.58333)."""
    acc = torch.float64 if dtype == torch.float64 else torch.float32
    return s.to(acc) * torch.tensor(1.0 / count if count else math.inf, dtype=acc, device=s.device)


def sqrt(x: torch.Tensor) -> torch.Tensor:
    """A correctly rounded square root, as C's sqrtf: torch's float32 CPU kernel is 1 ulp off on
    some inputs (sqrt(4015.3335) gives 63.366657, not 63.36666); float64 then rounded is exact."""
    return torch.sqrt(x.double()).to(x.dtype) if x.dtype != torch.float64 else torch.sqrt(x)


def broadcast_mean(mean: torch.Tensor, shape: Sequence[int], axes: Sequence[int]) -> torch.Tensor | None:
    """A sample's `mean` shaped to broadcast over a sample of `shape` reduced over `axes`: it holds
    one value, or one per result element (kept dimensions or not); None if it fits neither."""
    kept = [1 if k in axes else int(s) for k, s in enumerate(shape)]
    if mean.numel() == 1:
        return mean.reshape([1] * len(shape))
    if mean.numel() == math.prod(kept):
        return mean.reshape(kept)
    return None


def variance(x: torch.Tensor, mean: torch.Tensor, axes: Sequence[int], keep_dims: bool, ddof: int,
             dtype: torch.dtype, std: bool, sum_fn: SumFn = dali_sum) -> torch.Tensor:
    """sum((x - mean)**2) / (N - ddof) over `axes` (its square root when `std`); `mean` broadcasts
    over `x` (`broadcast_mean`)."""
    dims = tuple(axes)
    work = torch.float64 if dtype == torch.float64 or x.dtype == torch.float64 else torch.float32
    d = x.to(work) - mean.to(work)
    count = math.prod(int(x.shape[a]) for a in dims)
    s = sum_fn(d * d, dims).reshape(result_shape(x.shape, dims, True)) if dims else d * d
    r = scaled(s, count - ddof, dtype)
    if std:
        r = sqrt(r)
    out = r if keep_dims else r.reshape([int(n) for k, n in enumerate(x.shape) if k not in dims])
    return out.to(dtype)


def result_shape(shape: Sequence[int], axes: Sequence[int], keep_dims: bool) -> list[int]:
    return [1 if k in axes else int(s) for k, s in enumerate(shape)] if keep_dims else \
        [int(s) for k, s in enumerate(shape) if k not in axes]
