"""Median blur, dilation and erosion over the H and W axes of a tensor (CPU or CUDA), with the
rules of DALI 2.4's CV-CUDA operators (which its tests hold to OpenCV's):

* median_blur: the median of a window (odd sizes), the image's edge values repeated outside it;
* dilate / erode: the maximum / minimum over a rectangle of mask_size placed at `anchor`, repeated
  `iterations` times; a "constant" border never wins (OpenCV's default morphology border), the
  others are replicate (clamp), reflect (reflect_1001), reflect_101 and wrap.
Rectangles are separable, so dilation and erosion take a pass along W and a pass along H.
"""
from __future__ import annotations

import torch

from .filters import pad_axis

MORPH_BORDERS = {"constant": "constant", "replicate": "clamp", "reflect": "reflect_1001",
                 "reflect_101": "reflect_101", "wrap": "wrap"}

# Unsigned types some torch builds (2.11's CUDA kernels) have no sort/min/max for: computed wider
_WIDER = {torch.uint16: torch.int32, torch.uint32: torch.int64}


def extreme(dtype: torch.dtype, high: bool) -> float:
    if dtype.is_floating_point:
        return float("inf") if high else float("-inf")
    info = torch.iinfo(dtype)
    return float(info.max if high else info.min)


def _pass(x: torch.Tensor, axis: int, size: int, anchor: int, border: str, dilate: bool,
          dtype: torch.dtype) -> torch.Tensor:
    if size == 1:
        return x
    n = int(x.shape[axis])
    fill = extreme(dtype, not dilate)  # a border value that never wins
    xp = pad_axis(x, axis, anchor, size - 1 - anchor, MORPH_BORDERS[border], fill)
    wide = _WIDER.get(xp.dtype)  # torch lacks min/max for these unsigned types on some builds
    if wide is not None:
        xp = xp.to(wide)
    out = xp.narrow(axis, 0, n).clone()
    for j in range(1, size):
        s = xp.narrow(axis, j, n)
        out = torch.maximum(out, s) if dilate else torch.minimum(out, s)
    return out if wide is None else out.to(x.dtype)


def morph(x: torch.Tensor, h_axis: int, w_axis: int, mask_hw: tuple[int, int], anchor_yx: tuple[int, int],
          border: str, iterations: int, dilate: bool) -> torch.Tensor:
    """Dilation (or erosion) of `x` over (h_axis, w_axis) with a rectangle of `mask_hw`."""
    dtype = x.dtype
    if x.device.type == "cpu" and dtype in (torch.uint16, torch.uint32):  # no CPU max/min kernels for these
        x = x.to(torch.int64)
    for i in range(iterations):
        prev = x
        x = _pass(x, w_axis, mask_hw[1], anchor_yx[1], border, dilate, dtype)
        x = _pass(x, h_axis, mask_hw[0], anchor_yx[0], border, dilate, dtype)
        if settled(i, prev, x):
            break
    return x.to(dtype)


_BITS = {2: torch.int16, 4: torch.int32, 8: torch.int64}
SETTLE_AFTER = 8  # iterations before each one's result is compared with the last (a host sync on CUDA)


def settled(i: int, prev: torch.Tensor, x: torch.Tensor) -> bool:
    """Whether iteration `i` changed nothing, so every later one would give the same bits: the
    window always holds the pixel itself, so each iteration only moves values towards the
    extreme and they settle within about the image's size in iterations. Checked from
    SETTLE_AFTER iterations on, so a config's `iterations` of 2**62 ends instead of running for
    ever, and a few iterations cost no sync. Bitwise, so NaNs settle too."""
    if i + 1 < SETTLE_AFTER or prev.shape != x.shape:
        return False
    if x.dtype.is_floating_point and x.element_size() in _BITS:
        bits = _BITS[x.element_size()]
        return torch.equal(prev.contiguous().view(bits), x.contiguous().view(bits))
    return torch.equal(prev, x)


def morph_padded(xp: torch.Tensor, h_axis: int, w_axis: int, mask_hw: tuple[int, int], lengths: tuple[int, int],
                 dilate: bool) -> torch.Tensor:
    """One iteration of `morph` on a tensor that holds its borders already (padded by the mask's
    anchor before each axis and the rest after it: a padded group of `functional.ragged`); keeps
    `lengths` (h, w). The same maxima (minima) as `_pass`, along W then H."""
    x = xp
    for axis, size, n in ((w_axis, mask_hw[1], lengths[1]), (h_axis, mask_hw[0], lengths[0])):
        out = x.narrow(axis, 0, n).clone() if size > 1 else x.narrow(axis, 0, n)
        for j in range(1, size):
            s = x.narrow(axis, j, n)
            out = torch.maximum(out, s) if dilate else torch.minimum(out, s)
        x = out
    return x


def median_blur(x: torch.Tensor, h_axis: int, w_axis: int, window_hw: tuple[int, int]) -> torch.Tensor:
    """The median of each window_hw window (odd sizes) over (h_axis, w_axis); edges replicated."""
    kh, kw = window_hw
    h, w = int(x.shape[h_axis]), int(x.shape[w_axis])
    xp = pad_axis(pad_axis(x, h_axis, kh // 2, kh // 2, "clamp"), w_axis, kw // 2, kw // 2, "clamp")
    return median_padded(xp, h_axis, w_axis, window_hw, (h, w))


def median_padded(xp: torch.Tensor, h_axis: int, w_axis: int, window_hw: tuple[int, int],
                  lengths: tuple[int, int]) -> torch.Tensor:
    """`median_blur` of a tensor padded by half the window on each side (its edges), keeping
    `lengths` (h, w)."""
    kh, kw = window_hw
    h, w = lengths
    taps = [xp.narrow(h_axis, i, h).narrow(w_axis, j, w) for i in range(kh) for j in range(kw)]
    stacked = torch.stack(taps, dim=0)
    if not xp.dtype.is_floating_point and xp.dtype != torch.int64 and (xp.device.type == "cpu" or xp.dtype in _WIDER):
        stacked = stacked.to(torch.int64)  # sort kernels cover every integer type this way
    return stacked.sort(dim=0).values[(kh * kw) // 2].to(xp.dtype)
