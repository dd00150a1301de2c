"""CLAHE (contrast limited adaptive histogram equalization) on uint8 planes, batched in torch with
the algorithm of OpenCV's createCLAHE, which DALI 2.4's CPU backend runs:

* a plane whose size is not a multiple of the tile grid is extended (reflect_101) at the bottom
  and right by tiles - size % tiles on both axes (a whole tile on an axis that divides); each tile's histogram is clipped at max(1, int(clip_limit * tile_area / bins)) and
  the clipped excess spread over all bins (the remainder one by one, every bins // remainder);
* a tile's table is round(cdf * (bins - 1) / tile_area) (float32, halves to even);
* a pixel blends the tables of the 4 nearest tile centers bilinearly (float32), clamped at the
  grid's edges, and is rounded to uint8.
"""
from __future__ import annotations

import functools

import numpy as np
import torch

from .filters import pad_axis

F32 = torch.float32


def _clip(hist: torch.Tensor, limit: int) -> torch.Tensor:
    """OpenCV's histogram clipping, for (..., bins) int64 histograms."""
    bins = int(hist.shape[-1])
    excess = (hist - limit).clamp(min=0).sum(-1, keepdim=True)
    hist = hist.clamp(max=limit)
    batch = excess // bins
    residual = excess - batch * bins
    hist = hist + batch
    idx = torch.arange(bins, device=hist.device)
    step = torch.clamp(bins // torch.clamp(residual, min=1), min=1)
    extra = (idx % step == 0) & (idx // step < residual) & (residual > 0)
    return hist + extra.to(hist.dtype)


def clahe_planes(x: torch.Tensor, tiles_x: int, tiles_y: int, clip_limit: float, bins: int = 256) -> torch.Tensor:
    """CLAHE of each plane of `x` (P, H, W), uint8."""
    p, h, w = (int(s) for s in x.shape)
    if p == 0 or h == 0 or w == 0:
        return x.clone()
    if h % tiles_y or w % tiles_x:  # OpenCV then extends both axes, by a whole tile where it divides
        hp, wp = h + tiles_y - h % tiles_y, w + tiles_x - w % tiles_x
    else:
        hp, wp = h, w
    ext = pad_axis(pad_axis(x, 1, 0, hp - h, "reflect_101"), 2, 0, wp - w, "reflect_101")
    th, tw = hp // tiles_y, wp // tiles_x
    shift = 8 - (bins.bit_length() - 1)
    vals = ext.to(torch.int64) >> shift
    tiles = vals.reshape(p, tiles_y, th, tiles_x, tw).permute(0, 1, 3, 2, 4).reshape(p * tiles_y * tiles_x, th * tw)
    offs = torch.arange(tiles.shape[0], device=x.device).unsqueeze(1) * bins
    hist = torch.bincount((tiles + offs).reshape(-1), minlength=tiles.shape[0] * bins).reshape(-1, bins)
    area = th * tw
    if clip_limit > 0:
        hist = _clip(hist, max(int(clip_limit * area / bins), 1))
    scale = torch.tensor((bins - 1) / area, dtype=F32)
    lut = torch.round(hist.cumsum(-1).to(F32) * scale.to(x.device)).clamp(0, 255)
    if bins != 256:  # tables in 0..bins-1 stretched back to the uint8 range
        lut = torch.round(lut * (255.0 / (bins - 1)))
    lut = lut.reshape(p, tiles_y, tiles_x, bins)

    def axis(n: int, tile: int, count: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        f = torch.arange(n, dtype=F32, device=x.device) * torch.tensor(1.0 / tile, dtype=F32) - 0.5
        t1 = torch.floor(f)
        a = f - t1
        t1i = t1.to(torch.int64)
        return t1i.clamp(min=0), (t1i + 1).clamp(max=count - 1), a

    ty1, ty2, ya = axis(h, th, tiles_y)
    tx1, tx2, xa = axis(w, tw, tiles_x)
    v = x.to(torch.int64) >> shift
    pi = torch.arange(p, device=x.device).reshape(p, 1, 1)

    def at(ty: torch.Tensor, tx: torch.Tensor) -> torch.Tensor:
        return lut[pi, ty.reshape(1, h, 1), tx.reshape(1, 1, w), v]

    xa, ya = xa.reshape(1, 1, w), ya.reshape(1, h, 1)
    xa1, ya1 = 1.0 - xa, 1.0 - ya
    res = (at(ty1, tx1) * xa1 + at(ty1, tx2) * xa) * ya1 + (at(ty2, tx1) * xa1 + at(ty2, tx2) * xa) * ya
    return torch.round(res).clamp(0, 255).to(torch.uint8)


# sRGB (D65) -> CIE XYZ with OpenCV's constants
_RGB2XYZ = torch.tensor([[0.412453, 0.357580, 0.180423], [0.212671, 0.715160, 0.072169],
                         [0.019334, 0.119193, 0.950227]], dtype=F32)


def _rne(x: np.ndarray) -> np.ndarray:
    return np.rint(x).astype(np.int64)  # round half to even, as OpenCV's cvRound


@functools.cache  # made whole before it is shared: threads running clahe at once meet no half-built set
def _lab8_inverse_tables_cpu() -> tuple[torch.Tensor, ...]:
    """OpenCV's fixed-point tables for 8-bit Lab -> RGB (base 2**14): per L byte, Y and f(Y); f(X)
    or f(Z) -> X or Z (the inverse of the cube-root curve, integer arithmetic truncating toward
    zero, from f = -8145); the XYZ -> sRGB matrix times the white point (2**12); and the sRGB
    encoding of i / 4096 as a byte. The float steps are done in float32 as OpenCV does them."""
    f32 = np.float32
    base = 1 << 14
    i = np.arange(256)
    low = i <= 20
    y_low = _rne(f32(i * base * 20 * 9) / f32(17 * 29 ** 3))
    ify_low = _rne(f32(base) * (f32(16) / f32(116) + (i * 5).astype(f32) / f32(3 * 17 * 29)))
    fy = ((i * 100 * base).astype(f32) / f32(255 * 116) + f32(16 * base) / f32(116)).astype(f32)
    y_high = _rne(((fy * fy).astype(f32) * fy).astype(f32) / f32(base * base))
    yf = np.stack([np.where(low, y_low, y_high), np.where(low, ify_low, _rne(fy))], -1)
    v = np.arange(-8145, (1 << 14) * 9 // 4 - 8145, dtype=np.int64)
    lin = np.trunc(v * 108 / 841).astype(np.int64) - 290  # C division truncates toward zero
    cube = (v * v // base) * v // base
    xz = np.where(v <= 3390, lin, cube)
    m = np.array([[3.240479, -1.53715, -0.498535], [-0.969256, 1.875991, 0.041556],
                  [0.055648, -0.204043, 1.057311]], f32).astype(np.float64)
    white = np.array([0.950456, 1.0, 1.088754], f32).astype(np.float64)
    coef = _rne(4096.0 * m * white[None, :])
    x = (np.arange(4096) * f32(1.0 / 4096)).astype(f32).astype(np.float64)
    enc = np.where(x <= 7827 / 2500000, x * (323 / 25), x ** (5 / 12) * 1.055 - 0.055).astype(f32)
    gamma = _rne((f32(255) * enc).astype(f32))
    return tuple(torch.from_numpy(np.ascontiguousarray(t)) for t in (yf, xz, coef, gamma))


@functools.cache  # one copy per device, not one per call
def _lab8_inverse_tables(device: torch.device) -> tuple[torch.Tensor, ...]:
    return tuple(t.to(device) for t in _lab8_inverse_tables_cpu())


def _int_mat3(v: torch.Tensor, coef: torch.Tensor) -> torch.Tensor:
    """(..., 3) int64 times a 3x3 int64 matrix, v @ coef.T, as three sums: CUDA has no integer
    matmul (addmm is float-only there)."""
    return torch.stack([(v * coef[i]).sum(-1) for i in range(3)], -1)


def lab8_to_rgb(lab: torch.Tensor) -> torch.Tensor:
    """(..., 3) OpenCV 8-bit Lab -> uint8 RGB with OpenCV's fixed-point arithmetic (what DALI's CPU
    clahe gets back from Lab; checked over all 2**24 Lab bytes)."""
    yf, xz, coef, gamma = _lab8_inverse_tables(lab.device)
    q = lab.to(torch.int64)
    y, ify = yf[q[..., 0], 0], yf[q[..., 0], 1]
    adiv = ((5 * q[..., 1] * 53687 + (1 << 7)) >> 13) - (128 * (1 << 14)) // 500
    bdiv = ((q[..., 2] * 41943 + (1 << 4)) >> 9) - (128 * (1 << 14)) // 200 + 1
    x = xz[ify + adiv + 8145]
    z = xz[ify - bdiv + 8145]
    lin = (_int_mat3(torch.stack([x, y, z], -1), coef) + (1 << 13)) >> 14
    return gamma[lin.clamp(0, 4095)].to(torch.uint8)


@functools.cache  # whole before shared, as the inverse tables
def _lab8_tables_cpu() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """OpenCV's fixed-point tables for 8-bit RGB -> Lab: the sRGB decoding of each byte (scaled by
    255 * 8), the cube root of i / 2040 for i < 3072 (scaled by 2**15; below 216 / 24389 the
    straight line 841 / 108 * x + 16 / 116) and the RGB -> XYZ matrix over the D65 white (2**12)."""
    x = torch.arange(256, dtype=torch.float64) / 255.0
    lin = torch.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)
    gamma = torch.round(255 * 8 * lin).to(torch.int64)
    t = torch.arange(3072, dtype=torch.float64) / 2040.0
    f = torch.where(t < 216.0 / 24389.0, t * (841.0 / 108.0) + 16.0 / 116.0, t ** (1.0 / 3.0))
    cbrt = torch.round(32768 * f).to(torch.int64)
    # OpenCV builds this table in single precision, which lands these two entries, a hair
    # from a half, on the other side of it (measured over all 2**24 colours)
    cbrt[49], cbrt[628] = 9454, 22126
    white = torch.tensor([0.950456, 1.0, 1.088754], dtype=torch.float64)
    coef = torch.round(4096 * _RGB2XYZ.to(torch.float64) / white[:, None]).to(torch.int64)
    return gamma, cbrt, coef


@functools.cache  # one copy per device, not one per call
def _lab8_tables(device: torch.device) -> tuple[torch.Tensor, ...]:
    return tuple(t.to(device) for t in _lab8_tables_cpu())


def rgb_to_lab8(rgb: torch.Tensor) -> torch.Tensor:
    """(..., 3) uint8 RGB -> OpenCV's 8-bit Lab (L * 255 / 100, a + 128, b + 128), bit for bit its
    fixed-point conversion (checked over all 2**24 colours)."""
    gamma, cbrt, coef = _lab8_tables(rgb.device)
    xyz = (_int_mat3(gamma[rgb.to(torch.int64)], coef) + 2048) >> 12
    f = cbrt[xyz]
    fx, fy, fz = f[..., 0], f[..., 1], f[..., 2]
    half = 1 << 14
    light = (296 * fy - 1336934 + half) >> 15  # 296 = 116 * 255 / 100, 1336934 = 16 * 255 * 2**15 / 100
    a = (500 * (fx - fy) + (128 << 15) + half) >> 15
    b = (200 * (fy - fz) + (128 << 15) + half) >> 15
    return torch.stack([light, a, b], -1).clamp(0, 255).to(torch.uint8)


def clahe_rgb_luma(x: torch.Tensor, tiles_x: int, tiles_y: int, clip_limit: float, bins: int = 256) -> torch.Tensor:
    """(N, H, W, 3) RGB: CLAHE of the 8-bit Lab lightness, a and b kept, as OpenCV does it: both
    conversions (to 8-bit Lab and back) are OpenCV's fixed-point ones, bit for bit."""
    lab8 = rgb_to_lab8(x)
    new = clahe_planes(lab8[..., 0].contiguous(), tiles_x, tiles_y, clip_limit, bins)
    return lab8_to_rgb(torch.cat([new.unsqueeze(-1), lab8[..., 1:]], -1))
