"""Convolution filters on any tensor (CPU or CUDA): borders, 1-D correlation along an axis, DALI's
Gaussian and Laplacian windows, and an N-D correlation with an anchor (fn.filter).

Each tap is a product and a sum over the whole tensor (a batch of samples at once), in float32, so the CPU and CUDA results are the same bits and no cuDNN/TF32
setting changes them. Borders (DALI's names):

* reflect_101 (default)  dcb|abcdefgh|gfe     reflect_1001  cba|abcdefgh|hgf
* wrap                   fgh|abcdefgh|abc     clamp         aaa|abcdefgh|hhh
* constant               the fill value (0 unless given)
Reflections repeat for windows wider than the axis; an axis of extent 1 repeats its one value.

Window facts (DALI 2.4): a Gaussian of `sigma` has diameter 2 * ceil(3 * sigma) + 1; a diameter d
alone gives sigma = ((d - 1) / 2 - 1) * 0.3 + 0.8; the window is exp(-x^2 / (2 sigma^2)) scaled to
sum to 1, in float32. The Laplacian's smoothing window of size n is the binomial row n - 1, its
derivative window of size n (>= 3) the binomial row n - 3 convolved with [1, -2, 1].
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import torch

from .crop import convert
from .half import to_half

BORDERS = ("reflect_101", "reflect_1001", "wrap", "clamp", "constant")


def work_dtype(dtype: torch.dtype) -> torch.dtype:
    """float32, whatever the data (DALI computes float64 data in float32 too)."""
    return torch.float32


def border_indices(n: int, lo: int, hi: int, border: str) -> torch.Tensor:
    """Source index of each of the n + lo + hi positions of an axis padded by `lo` and `hi`; -1
    where `constant` fills."""
    i = torch.arange(-lo, n + hi, dtype=torch.int64)
    if border == "constant":
        return torch.where((i >= 0) & (i < n), i, torch.full_like(i, -1))
    if border == "clamp" or n == 1:
        return i.clamp(0, n - 1)
    if border == "wrap":
        return i.remainder(n)
    if border == "reflect_101":
        j = i.remainder(2 * n - 2)
        return torch.where(j >= n, 2 * n - 2 - j, j)
    if border == "reflect_1001":
        j = i.remainder(2 * n)
        return torch.where(j >= n, 2 * n - 1 - j, j)
    raise ValueError(f"unknown border {border!r}; expected one of {', '.join(BORDERS)}")


def pad_axis(x: torch.Tensor, axis: int, lo: int, hi: int, border: str,
             fill: torch.Tensor | float = 0.0) -> torch.Tensor:
    """`x` extended by `lo` and `hi` positions along `axis`, following `border`."""
    if lo == 0 and hi == 0:
        return x
    n = int(x.shape[axis])
    if n == 0:  # an empty axis has no border to read: the (empty) result never looks at these
        shape = list(x.shape)
        shape[axis] = lo + hi
        return torch.zeros(shape, dtype=x.dtype, device=x.device)
    if border == "constant":
        parts = []
        for k in (lo, hi):
            shape = list(x.shape)
            shape[axis] = k
            parts.append(torch.empty(shape, dtype=x.dtype, device=x.device).copy_(
                torch.as_tensor(fill, dtype=x.dtype, device=x.device).expand(shape)))
        return torch.cat([parts[0], x, parts[1]], dim=axis)
    return x.index_select(axis, border_indices(n, lo, hi, border).to(x.device))


def correlate1d(x: torch.Tensor, axis: int, weights: torch.Tensor, anchor: int | None = None,
                border: str = "reflect_101", fill: torch.Tensor | float = 0.0) -> torch.Tensor:
    """sum_j weights[j] * x[i - anchor + j] along `axis` (a correlation), `x` in its work type."""
    k = int(weights.numel())
    anchor = k // 2 if anchor is None else anchor
    if k == 1 and anchor == 0:
        return x * weights.to(x.device, x.dtype)[0]
    n = int(x.shape[axis])
    xp = pad_axis(x, axis, anchor, k - 1 - anchor, border, fill)
    w = weights.to(x.device, x.dtype)
    out = xp.narrow(axis, 0, n) * w[0]
    for j in range(1, k):  # a product, then a sum: no fused multiply-add (DALI's CPU rounding)
        out.add_(xp.narrow(axis, j, n) * w[j])
    return out


def fma32(acc: torch.Tensor, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """float32 `acc + x * w` rounded once, as a fused multiply-add. On CUDA, torch's addcmul is
    compiled to one (bench/diag/fma_probe.py: equal to the emulation on 16.7M values of an H100, 32x
    faster; tests/gpu/test_gpu_filter_fma.py holds it); elsewhere `fma32_emulated`."""
    if acc.is_cuda:
        return torch.addcmul(acc, x, w)
    return fma32_emulated(acc, x, w)


def fma32_emulated(acc: torch.Tensor, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """fma32 without a fused multiply-add in torch: the product is exact in float64, TwoSum gives
    the float64 sum's error, and a sum landing exactly halfway between two float32 values goes to
    the side that error is on (no double rounding)."""
    p = x.double() * w.double()
    c = acc.double()
    s = p + c
    bp = s - c
    e = (p - bp) + (c - (s - bp))  # s + e == p + c exactly
    r = s.float()
    rd = r.double()
    up = torch.nextafter(r, torch.full_like(r, math.inf))
    dn = torch.nextafter(r, torch.full_like(r, -math.inf))
    above = (s > rd) & ((rd + up.double()) * 0.5 == s) & (e > 0)
    below = (s < rd) & ((rd + dn.double()) * 0.5 == s) & (e < 0)
    return torch.where(above, up, torch.where(below, dn, r))


def correlate(x: torch.Tensor, axes: Sequence[int], kernel: torch.Tensor, anchor: Sequence[int],
              border: str = "reflect_101", fill: torch.Tensor | float = 0.0, valid: bool = False,
              fused: bool = False) -> torch.Tensor:
    """An N-D correlation of `x` over `axes` with `kernel` (one extent per axis) placed at `anchor`;
    `valid` keeps only the positions where the kernel lies inside `x` (no border). `fused`: each
    tap after the first is a fused multiply-add (float32 `x` only)."""
    xp = x
    if not valid:
        for a, k, an in zip(axes, kernel.shape, anchor):
            xp = pad_axis(xp, a, an, int(k) - 1 - an, border, fill)
    sizes = [int(xp.shape[a]) - int(k) + 1 for a, k in zip(axes, kernel.shape)]
    w = kernel.to(x.device, x.dtype).reshape(-1)
    out: torch.Tensor | None = None
    for flat, offs in enumerate(np.ndindex(*[int(k) for k in kernel.shape])):
        view = xp
        for a, o, s in zip(axes, offs, sizes):
            view = view.narrow(a, int(o), s)
        if out is None:
            out = view * w[flat]
        elif fused:
            out = fma32(out, view, w[flat])
        else:
            out.add_(view * w[flat])
    if out is None:  # a kernel with no elements
        raise ValueError("filter: the kernel is empty")
    return out


def filter_sample(x: torch.Tensor, axes: Sequence[int], kernel: torch.Tensor, anchor: Sequence[int],
                  border: str = "reflect_101", fill: torch.Tensor | float = 0.0, valid: bool = False,
                  dtype: torch.dtype | None = None) -> torch.Tensor:
    """fn.experimental.filter of one sample: `correlate` of `x` taken to its work type, converted
    to `dtype` (x's own when None). DALI 2.4's CPU operator is OpenCV's filter2D, whose arithmetic
    (on x86-64 with AVX2) depends on the output type: to float32 from integers, plain products and
    sums; to the input's own type, each row (the last axis with the ones after it: W * C of HWC)
    in blocks of 8 values where each tap after the first is a fused multiply-add, then its tail
    plain, integers rounded half to even. Large kernels (12x12 measured) go through OpenCV's DFT
    there, whose roundings are not followed."""
    out = x.dtype if dtype is None else dtype
    same = out == x.dtype
    xw, kw = x.to(work_dtype(x.dtype)), kernel.to(torch.float32)
    y = correlate(xw, axes, kw, anchor, border, fill, valid, fused=same)
    last = int(axes[-1]) % x.dim()
    row = math.prod(int(v) for v in y.shape[last:])
    if same and row % 8:  # the tail of each row: plain sums
        tail = (torch.arange(row, device=y.device) >= row // 8 * 8).reshape(y.shape[last:])
        y = torch.where(tail, correlate(xw, axes, kw, anchor, border, fill, valid), y)
    if same and not out.is_floating_point:
        return convert(torch.round(y), out)  # half to even first: convert's own rounding then keeps it
    return convert(y, out)


# -- windows --------------------------------------------------------------------------------------

def sigma_to_diameter(sigma: float) -> int:
    return 2 * int(math.ceil(np.float32(sigma) * np.float32(3))) + 1


def diameter_to_sigma(diameter: int) -> float:
    radius = (diameter - 1) // 2
    return float(np.float32((radius - 1) * 0.3 + 0.8))


def gaussian_window(sigma: float, size: int) -> torch.Tensor:
    """DALI's Gaussian window (float32): symmetric, center 1 before scaling, sum 1."""
    r = (size - 1) // 2
    f32 = np.float32
    exp_scale = f32(0.5) / (f32(sigma) * f32(sigma))
    half = [f32(math.exp(-float(f32(x * x) * exp_scale))) for x in range(-r, 0)]
    total = f32(0.0)
    for v in half:
        total = f32(total + v)
    total = f32(f32(total * f32(2.0)) + f32(1.0))
    scale = f32(f32(1.0) / total)
    w = [f32(v * scale) for v in half]
    return torch.tensor(w + [scale] + w[::-1], dtype=torch.float32)


def smoothing_window(size: int) -> list[float]:
    """Binomial row `size - 1`: [1], [1, 2, 1], [1, 4, 6, 4, 1], ..."""
    return [float(math.comb(size - 1, k)) for k in range(size)]


def derivative_window(size: int) -> list[float]:
    """Second derivative of size `size` >= 3: the binomial row size - 3 convolved with [1, -2, 1]."""
    s = smoothing_window(size - 2)
    out = [0.0] * size
    for i, v in enumerate(s):
        out[i] += v
        out[i + 1] -= 2 * v
        out[i + 2] += v
    return out


def separable(x: torch.Tensor, axes: Sequence[int], windows: Sequence[torch.Tensor],
              pads: Sequence[int] | None = None, lengths: Sequence[int] | None = None) -> torch.Tensor:
    """Correlates `x` (work type) with one window per axis, innermost axis first (reflect_101).
    With `pads` and `lengths` (per axis), `x` already holds its borders: its first value along
    axes[i] is at pads[i] (a padded group of `functional.ragged`), and the result keeps
    lengths[i] values; the taps are the same products and sums."""
    order = sorted(range(len(axes)), key=lambda i: -axes[i])
    for i in order:
        a, w = axes[i], windows[i]
        if pads is None or lengths is None:
            if w.numel() > 1:
                x = correlate1d(x, a, w)
        elif w.numel() > 1:
            x = _taps(x, a, w, pads[i] - int(w.numel()) // 2, lengths[i])
        else:
            x = x.narrow(a, pads[i], lengths[i])
    return x


def _taps(xp: torch.Tensor, axis: int, weights: torch.Tensor, start: int, n: int) -> torch.Tensor:
    """sum_j weights[j] * xp[start + j + i] along `axis`, i < n: `correlate1d`'s loop."""
    w = weights.to(xp.device, xp.dtype)
    out = xp.narrow(axis, start, n) * w[0]
    for j in range(1, int(w.numel())):
        out.add_(xp.narrow(axis, start + j, n) * w[j])
    return out


def gaussian_blur(x: torch.Tensor, axes: Sequence[int], sigmas: Sequence[float], sizes: Sequence[int],
                  pads: Sequence[int] | None = None, lengths: Sequence[int] | None = None) -> torch.Tensor:
    """Blurs `x` (work type) along `axes`; `sigmas`/`sizes` are final (one per axis); `pads` and
    `lengths`: see `separable`."""
    return separable(x, axes, [gaussian_window(s, d) for s, d in zip(sigmas, sizes)], pads, lengths)


def _pass_half(x: torch.Tensor, axis: int, w: torch.Tensor) -> torch.Tensor:
    """One correlation pass of DALI 2.4's CPU float16 convolutions (reflect_101): each tap's
    product rounded to float16 (`half.to_half`), the taps summed in float32 in window order."""
    w = w.to(x.device, torch.float32)
    if w.numel() == 1:
        return x
    n, r = int(x.shape[axis]), int(w.numel()) // 2
    xp = pad_axis(x, axis, r, r, "reflect_101")
    out = to_half(xp.narrow(axis, 0, n) * w[0]).float()
    for j in range(1, int(w.numel())):
        out.add_(to_half(xp.narrow(axis, j, n) * w[j]).float())
    return out


def _separable_half(x: torch.Tensor, axes: Sequence[int], windows: Sequence[torch.Tensor]) -> torch.Tensor:
    """`separable` with `_pass_half`; every pass's result but the last is rounded to float16."""
    order = sorted(range(len(axes)), key=lambda i: -axes[i])
    for k, i in enumerate(order):
        x = _pass_half(x, axes[i], windows[i])
        if k < len(order) - 1 and windows[i].numel() > 1:
            x = to_half(x).float()
    return x


def gaussian_blur_half(x: torch.Tensor, axes: Sequence[int], sigmas: Sequence[float],
                       sizes: Sequence[int]) -> torch.Tensor:
    """`gaussian_blur` of float16 data (`x`: its float32 values) as DALI 2.4's CPU computes it
    (measured, bit for bit): `_separable_half`; the caller converts the last pass's float32 sums."""
    return _separable_half(x, axes, [gaussian_window(s, d) for s, d in zip(sigmas, sizes)])


def laplacian_half(x: torch.Tensor, axes: Sequence[int], sizes: Sequence[Sequence[int]],
                   scales: Sequence[float]) -> torch.Tensor:
    """`laplacian` of float16 data (`x`: its float32 values) as DALI 2.4's CPU computes it
    (measured, bit for bit, float16 and float32 outputs): each partial derivative through
    `_separable_half`, times its scale in float32, and the running sum of the partials rounded to
    float16 after each one is added."""
    acc: torch.Tensor | None = None
    for i, (row, sc) in enumerate(zip(sizes, scales)):
        wins = [torch.tensor(derivative_window(d) if i == j else smoothing_window(d), dtype=torch.float64)
                .to(torch.float32) for j, d in enumerate(row)]
        term = _separable_half(x, axes, wins) * torch.tensor(sc, dtype=torch.float32)
        acc = to_half(term if acc is None else acc + term).float()
    if acc is None:
        raise ValueError("filter: no spatial axis to filter")
    return acc


def laplacian(x: torch.Tensor, axes: Sequence[int], sizes: Sequence[Sequence[int]],
              scales: Sequence[float], pads: Sequence[int] | None = None,
              lengths: Sequence[int] | None = None) -> torch.Tensor:
    """sum_i scales[i] * d2x/daxis_i^2, each partial a separable correlation with the derivative
    window (sizes[i][i]) along axis i and smoothing windows (sizes[i][j]) along the others;
    `pads` and `lengths`: see `separable`."""
    acc: torch.Tensor | None = None
    for i, (row, sc) in enumerate(zip(sizes, scales)):
        wins = [torch.tensor(derivative_window(d) if i == j else smoothing_window(d), dtype=torch.float64)
                .to(torch.float32) for j, d in enumerate(row)]
        part = separable(x, axes, wins, pads, lengths)
        term = part * torch.tensor(sc, dtype=torch.float32).to(x.dtype)
        acc = term if acc is None else acc.add_(term)
    if acc is None:  # no axis to filter
        raise ValueError("filter: no spatial axis to filter")
    return acc
