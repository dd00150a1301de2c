"""Displacement filters (water, sphere, jitter) and grid_mask on HWC batches (CPU or CUDA).

Facts (DALI 2.4, checked against its CPU backend):
* the output pixel (y, x) reads the input at a source point p; nearest sampling takes
  (floor(p.x), floor(p.y)); linear sampling puts pixel centers at +0.5 (it interpolates at
  p - 0.5) and takes `fill_value` for taps outside the image; nearest gives `fill_value` there;
* water: p = (x + ampl_x * sin(freq_x * y + phase_x), y + ampl_y * cos(freq_y * x + phase_y));
* sphere: with mid = (W / 2, H / 2), d = int(max(mid)), t = (x + 0.5, y + 0.5) - mid and
  r = |t| / d: p = mid + r * t;
* jitter (GPU-only in DALI): p = the pixel moved by a random integer in [-n//2, n - n//2] on
  each axis, clamped to the image;
* grid_mask: with c = cos(angle) / tile, s = sin(angle) / tile, fx = x c - y s - shift_x / tile
  and fy = x s + y c - shift_y / tile, a pixel is kept when frac(fx) >= ratio or frac(fy) >= ratio,
  else zeroed (products in float32 as DALI orders them).
"""
from __future__ import annotations

import math

import torch

from .crop import convert
from .noise import words

F32 = torch.float32


def fill_in_type(fill: float, dtype: torch.dtype) -> float:
    """The fill value as the input type holds it (integers: truncated, then saturated)."""
    if dtype.is_floating_point:
        return float(fill)
    info = torch.iinfo(dtype)
    return float(min(max(math.trunc(fill), info.min), info.max))


def _sqrt32(v: torch.Tensor) -> torch.Tensor:
    """float32 sqrt rounded correctly, as C's sqrtf: torch's vectorized CPU float32 sqrt is not (it
    is one ulp off for about 15% of inputs, measured with torch 2.14 on AVX-512), and one ulp of a
    source point moves a nearest-sampled pixel. Through float64, whose sqrt is exact to the bit."""
    return torch.sqrt(v.to(torch.float64)).to(F32)


def _sin32(v: torch.Tensor) -> torch.Tensor:
    """float32 sin rounded as glibc's sinf (through float64; torch's float32 sin can be an ulp off)."""
    return torch.sin(v.to(torch.float64)).to(F32)


def _cos32(v: torch.Tensor) -> torch.Tensor:
    return torch.cos(v.to(torch.float64)).to(F32)


def _gather(x: torch.Tensor, iy: torch.Tensor, ix: torch.Tensor, fill: float) -> torch.Tensor:
    """x (N, H, W, C) at integer points (iy, ix) of shape (N or 1, H', W'); `fill` outside."""
    n, h, w, c = (int(s) for s in x.shape)
    ok = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
    flat = (iy.clamp(0, h - 1) * w + ix.clamp(0, w - 1)).expand(n, *iy.shape[1:]).reshape(n, -1)
    vals = x.reshape(n, h * w, c).gather(1, flat.unsqueeze(-1).expand(n, flat.shape[1], c))
    vals = vals.reshape(n, *iy.shape[1:], c)
    return torch.where(ok.unsqueeze(-1), vals, torch.full_like(vals, fill))


def sample(x: torch.Tensor, px: torch.Tensor, py: torch.Tensor, linear: bool, fill: float) -> torch.Tensor:
    """x (N, H, W, C) read at float32 source points (px, py) of shape (N or 1, H, W)."""
    fill = fill_in_type(fill, x.dtype)
    if not linear:
        return _gather(x, torch.floor(py).to(torch.int64), torch.floor(px).to(torch.int64), fill)
    X, Y = px - 0.5, py - 0.5
    x0, y0 = torch.floor(X), torch.floor(Y)
    fx, fy = (X - x0).unsqueeze(-1), (Y - y0).unsqueeze(-1)
    x0i, y0i = x0.to(torch.int64), y0.to(torch.int64)
    xf = x.to(F32)
    a, b = _gather(xf, y0i, x0i, fill), _gather(xf, y0i, x0i + 1, fill)
    c, d = _gather(xf, y0i + 1, x0i, fill), _gather(xf, y0i + 1, x0i + 1, fill)
    top = a + (b - a) * fx
    bottom = c + (d - c) * fx
    return convert(top + (bottom - top) * fy, x.dtype)


def sample_flat(items: torch.Tensor, px: torch.Tensor, py: torch.Tensor, h: torch.Tensor, w: torch.Tensor,
                base: torch.Tensor, linear: bool, fill: float) -> torch.Tensor:
    """`sample` for a flat batch (`functional.ragged`): items (rows, C) hold every image; each
    point (px, py, (M,)) reads the image of extents (h, w) whose first pixel is row `base`
    (per-point (M,) tensors). -> (M, C), the values `sample` gives."""
    fill = fill_in_type(fill, items.dtype)

    def gather(src: torch.Tensor, iy: torch.Tensor, ix: torch.Tensor) -> torch.Tensor:
        ok = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
        lin = base + torch.minimum(iy.clamp(min=0), h - 1) * w + torch.minimum(ix.clamp(min=0), w - 1)
        vals = src.index_select(0, lin)
        return torch.where(ok.unsqueeze(-1), vals, torch.full_like(vals, fill))

    if not linear:
        return gather(items, torch.floor(py).to(torch.int64), torch.floor(px).to(torch.int64))
    X, Y = px - 0.5, py - 0.5
    x0, y0 = torch.floor(X), torch.floor(Y)
    fx, fy = (X - x0).unsqueeze(-1), (Y - y0).unsqueeze(-1)
    x0i, y0i = x0.to(torch.int64), y0.to(torch.int64)
    xf = items.to(F32)
    a, b = gather(xf, y0i, x0i), gather(xf, y0i, x0i + 1)
    c, d = gather(xf, y0i + 1, x0i), gather(xf, y0i + 1, x0i + 1)
    top = a + (b - a) * fx
    bottom = c + (d - c) * fx
    return convert(top + (bottom - top) * fy, items.dtype)


def water_points_flat(y: torch.Tensor, x: torch.Tensor, ampl_x: float, ampl_y: float, freq_x: float,
                      freq_y: float, phase_x: float, phase_y: float) -> tuple[torch.Tensor, torch.Tensor]:
    """`water_points` of the pixels (y, x) of a flat batch."""
    dev = x.device
    f = lambda v: torch.tensor(v, dtype=F32, device=dev)  # noqa: E731 - float32 constants, as DALI's
    yy, xx = y.to(F32), x.to(F32)
    px = xx + f(ampl_x) * _sin32(f(freq_x) * yy + f(phase_x))
    py = yy + f(ampl_y) * _cos32(f(freq_y) * xx + f(phase_y))
    return px, py


def jitter_points_flat(keys: torch.Tensor, ids: torch.Tensor, y: torch.Tensor, x: torch.Tensor, h: torch.Tensor,
                       w: torch.Tensor, n_degree: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`jitter_points` of the pixels (y, x) of samples `ids` (a flat batch), per-sample (N,) keys."""
    counters = (y * w + x).to(torch.int64)
    k = keys.to(x.device)
    span, lo = n_degree + 1, -(n_degree >> 1)
    dx = words(k, counters, 0, ids) % span + lo
    dy = words(k, counters, 1, ids) % span + lo
    return (torch.minimum((x + dx).clamp(min=0), w - 1).to(F32),
            torch.minimum((y + dy).clamp(min=0), h - 1).to(F32))


def water_points(h: int, w: int, ampl_x: float, ampl_y: float, freq_x: float, freq_y: float,
                 phase_x: float, phase_y: float, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    yy, xx = torch.meshgrid(torch.arange(h, dtype=F32, device=device), torch.arange(w, dtype=F32, device=device),
                            indexing="ij")
    f = lambda v: torch.tensor(v, dtype=F32, device=device)  # noqa: E731 - float32 constants, as DALI's
    px = xx + f(ampl_x) * _sin32(f(freq_x) * yy + f(phase_x))
    py = yy + f(ampl_y) * _cos32(f(freq_y) * xx + f(phase_y))
    return px.unsqueeze(0), py.unsqueeze(0)


def sphere_points(h: int, w: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    mx, my = w * 0.5, h * 0.5
    d = float(int(max(mx, my)))
    yy, xx = torch.meshgrid(torch.arange(h, dtype=F32, device=device), torch.arange(w, dtype=F32, device=device),
                            indexing="ij")
    ty, tx = yy + 0.5 - my, xx + 0.5 - mx
    rad = _sqrt32(tx * tx + ty * ty) / d
    return (mx + rad * tx).unsqueeze(0), (my + rad * ty).unsqueeze(0)


def jitter_points(keys: torch.Tensor, h: int, w: int, n_degree: int,
                  device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Integer source points (as float32, so nearest sampling reads them) for a batch with (N,) keys."""
    counters = torch.arange(h * w, dtype=torch.int64, device=device).reshape(1, h, w)
    k = keys.to(device).reshape(-1, 1, 1)
    span, lo = n_degree + 1, -(n_degree >> 1)
    dx = words(k, counters, 0) % span + lo
    dy = words(k, counters, 1) % span + lo
    yy, xx = torch.meshgrid(torch.arange(h, device=device), torch.arange(w, device=device), indexing="ij")
    return (xx + dx).clamp(0, w - 1).to(F32), (yy + dy).clamp(0, h - 1).to(F32)


def grid_mask(x: torch.Tensor, tile: torch.Tensor, ratio: torch.Tensor, angle: torch.Tensor,
              shift_x: torch.Tensor, shift_y: torch.Tensor) -> torch.Tensor:
    """x (N, H, W, C) times each sample's grid (per-sample (N,) parameters): pixel (y, x) is kept
    where frac(fx) >= ratio or frac(fy) >= ratio, fx = (-sx + y * -sa) + x * ca and
    fy = (-sy + y * ca) + x * sa in float32 (`grid_mask_coefficients`)."""
    n, h, w = int(x.shape[0]), int(x.shape[1]), int(x.shape[2])
    dev = x.device
    ca, sa, sx, sy, r = (v.to(dev).reshape(n, 1, 1) for v in grid_mask_coefficients(tile, ratio, angle, shift_x, shift_y))
    yy = torch.arange(h, dtype=F32, device=dev).reshape(1, h, 1)
    xx = torch.arange(w, dtype=F32, device=dev).reshape(1, 1, w)
    fx = (-sx + yy * -sa) + xx * ca
    fy = (-sy + yy * ca) + xx * sa
    keep = ((fx - torch.floor(fx)) >= r) | ((fy - torch.floor(fy)) >= r)
    return x * keep.unsqueeze(-1).to(x.dtype)


def grid_mask_coefficients(tile: torch.Tensor, ratio: torch.Tensor, angle: torch.Tensor, shift_x: torch.Tensor,
                           shift_y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """grid_mask's per-sample float32 (N,) values (ca, sa, sx, sy, ratio): cos and sin of the angle
    (in float64, then float32) and the shifts, each divided by the tile."""
    t = tile.cpu().to(F32).reshape(-1)
    ang = angle.cpu().to(torch.float64).reshape(-1)
    ca = torch.cos(ang).to(F32) / t
    sa = torch.sin(ang).to(F32) / t
    sx = shift_x.cpu().to(F32).reshape(-1) / t
    sy = shift_y.cpu().to(F32).reshape(-1) / t
    return ca, sa, sx, sy, ratio.cpu().to(F32).reshape(-1)
