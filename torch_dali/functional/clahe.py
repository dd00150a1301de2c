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


# sRGB (D65) <-> CIE Lab with OpenCV's constants: the way back in float32
_RGB2XYZ = torch.tensor([[0.412453, 0.357580, 0.180423], [0.212671, 0.715160, 0.072169],
                         [0.019334, 0.119193, 0.950227]], dtype=F32)
_XYZ2RGB = torch.tensor([[3.240479, -1.53715, -0.498535], [-0.969256, 1.875991, 0.041556],
                         [0.055648, -0.204043, 1.057311]], dtype=F32)
_WHITE = torch.tensor([0.950456, 1.0, 1.088754], dtype=F32)


def _lab_to_rgb(lab: torch.Tensor) -> torch.Tensor:
    fy = (lab[..., 0] + 16.0) / 116.0
    f = torch.stack([lab[..., 1] / 500.0 + fy, fy, fy - lab[..., 2] / 200.0], -1)
    t = 6.0 / 29.0
    xyz = torch.where(f > t, f ** 3, 3 * t * t * (f - 4.0 / 29.0)) * _WHITE.to(lab.device)
    lin = xyz @ _XYZ2RGB.to(lab.device).T
    c = torch.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin.clamp(min=0) ** (1 / 2.4) - 0.055)
    return torch.round((c * 255.0).clamp(0, 255)).to(torch.uint8)


_LAB8_TABLES: dict[str, torch.Tensor] = {}


def _lab8_tables(device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """OpenCV's fixed-point tables for 8-bit RGB -> Lab: the sRGB decoding of each byte (scaled by
    255 * 8), the cube root of i / 2040 for i < 3072 (scaled by 2**15; below 216 / 24389 the
    straight line 841 / 108 * x + 16 / 116) and the RGB -> XYZ matrix over the D65 white (2**12)."""
    if "gamma" not in _LAB8_TABLES:
        x = torch.arange(256, dtype=torch.float64) / 255.0
        lin = torch.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)
        _LAB8_TABLES["gamma"] = torch.round(255 * 8 * lin).to(torch.int64)
        t = torch.arange(3072, dtype=torch.float64) / 2040.0
        f = torch.where(t < 216.0 / 24389.0, t * (841.0 / 108.0) + 16.0 / 116.0, t ** (1.0 / 3.0))
        cbrt = torch.round(32768 * f).to(torch.int64)
        # OpenCV builds this table in single precision, which lands these two entries, a hair
        # from a half, on the other side of it (measured over all 2**24 colours)
        cbrt[49], cbrt[628] = 9454, 22126
        _LAB8_TABLES["cbrt"] = cbrt
        white = torch.tensor([0.950456, 1.0, 1.088754], dtype=torch.float64)
        _LAB8_TABLES["coef"] = torch.round(4096 * _RGB2XYZ.to(torch.float64) / white[:, None]).to(torch.int64)
    return (_LAB8_TABLES["gamma"].to(device), _LAB8_TABLES["cbrt"].to(device), _LAB8_TABLES["coef"].to(device))


def rgb_to_lab8(rgb: torch.Tensor) -> torch.Tensor:
    """(..., 3) uint8 RGB -> OpenCV's 8-bit Lab (L * 255 / 100, a + 128, b + 128), bit for bit its
    fixed-point conversion (checked over all 2**24 colours)."""
    gamma, cbrt, coef = _lab8_tables(rgb.device)
    xyz = (gamma[rgb.to(torch.int64)] @ coef.T + 2048) >> 12
    f = cbrt[xyz]
    fx, fy, fz = f[..., 0], f[..., 1], f[..., 2]
    half = 1 << 14
    light = (296 * fy - 1336934 + half) >> 15  # 296 = 116 * 255 / 100, 1336934 = 16 * 255 * 2**15 / 100
    a = (500 * (fx - fy) + (128 << 15) + half) >> 15
    b = (200 * (fy - fz) + (128 << 15) + half) >> 15
    return torch.stack([light, a, b], -1).clamp(0, 255).to(torch.uint8)


def clahe_rgb_luma(x: torch.Tensor, tiles_x: int, tiles_y: int, clip_limit: float, bins: int = 256) -> torch.Tensor:
    """(N, H, W, 3) RGB: CLAHE of the 8-bit Lab lightness, a and b kept, as OpenCV does it: the
    conversion to Lab is OpenCV's fixed-point one, bit for bit; the way back is float32."""
    lab8 = rgb_to_lab8(x)
    new = clahe_planes(lab8[..., 0].contiguous(), tiles_x, tiles_y, clip_limit, bins).to(F32) * (100.0 / 255.0)
    ab = lab8[..., 1:].to(F32) - 128
    return _lab_to_rgb(torch.cat([new.unsqueeze(-1), ab], -1))
