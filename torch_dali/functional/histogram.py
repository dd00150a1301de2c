"""Histogram equalization of uint8 images (fn.equalize), batched: the histograms of every
(image, channel) of a batch come from one bincount, their tables from one cumulative sum.

The table is OpenCV's equalizeHist (which DALI 2.4 matches): with `lo` the first occupied bin and
n the pixel count, value v maps to round((cdf(v) - hist(lo)) * 255 / (n - hist(lo))) in float32
(halves to even); an image of one value is left as it is.
"""
from __future__ import annotations

import torch


def equalize_planes(x: torch.Tensor) -> torch.Tensor:
    """Equalizes each row of `x` (P, pixels), uint8, independently."""
    p, n = int(x.shape[0]), int(x.shape[1])
    if p == 0 or n == 0:
        return x.clone()
    idx = x.to(torch.int64) + 256 * torch.arange(p, device=x.device).unsqueeze(1)
    hist = torch.bincount(idx.reshape(-1), minlength=256 * p).reshape(p, 256)
    cdf = hist.cumsum(1)
    first = (hist > 0).to(torch.int64).argmax(1, keepdim=True)
    h_lo = hist.gather(1, first)
    denom = (n - h_lo).to(torch.float32)
    scale = torch.where(denom > 0, torch.tensor(255.0, device=x.device) / torch.where(denom > 0, denom,
                        torch.ones_like(denom)), torch.zeros_like(denom))
    lut = torch.round((cdf - h_lo).to(torch.float32) * scale).clamp(0, 255)
    bins = torch.arange(256, device=x.device).unsqueeze(0)
    lut = torch.where(bins < first, torch.zeros_like(lut), lut)
    flat = denom <= 0  # one value: unchanged
    lut = torch.where(flat, bins.to(lut.dtype).expand(p, 256), lut).to(torch.uint8)
    return lut.gather(1, x.to(torch.int64))


def equalize(x: torch.Tensor, h_axis: int, w_axis: int) -> torch.Tensor:
    """Equalizes every H x W plane of `x` apart (each sample, frame and channel)."""
    if x.numel() == 0:
        return x.clone()
    order = [a for a in range(x.dim()) if a not in (h_axis, w_axis)] + [h_axis, w_axis]
    moved = x.permute(order)
    planes = moved.reshape(-1, int(moved.shape[-2]) * int(moved.shape[-1]))
    out = equalize_planes(planes).reshape(moved.shape)
    return out.permute([order.index(a) for a in range(x.dim())]).contiguous()
