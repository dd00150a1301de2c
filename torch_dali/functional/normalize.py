"""Pure-torch crop + mirror + normalize + layout change (DALI's CropMirrorNormalize), batched.

out = (in - mean) * (1 / std) * scale + shift, computed in float32 in exactly that order (DALI 2.4
multiplies by the float32 reciprocal of std: with scale 1 and shift 0 this is its output bit for bit,
see tests/test_ref_ops.py), then converted to `dtype` (integers: round half away from zero,
saturate). Pixels outside the image (out_of_bounds_policy="pad") take `fill_values`
as they are, after normalization, converted to `dtype` as C's static_cast does (DALI 2.4: 2.7 ->
2, 300 -> 44 as uint8; `regions.c_cast`). `pad_output` adds channels up to the next power of two,
holding `pad_values` (one per added channel; by default fill_values[c] when one value per output
channel is given, else 0), converted the same way.
"""
from __future__ import annotations

from typing import Sequence

import torch

from .crop import convert
from .regions import c_cast


def padded_channels(c: int) -> int:
    """The channel count `pad_output` produces: the next power of two."""
    p = 1
    while p < c:
        p *= 2
    return p


def per_channel(values: float | Sequence[float], channels: int, what: str,
                device: torch.device) -> torch.Tensor:
    """A (channels,) float32 tensor from one value or one value per channel."""
    vals = [float(values)] if isinstance(values, (int, float)) else [float(v) for v in values]
    if len(vals) == 1:
        vals = vals * channels
    if len(vals) != channels:
        raise ValueError(f"`{what}` must have 1 or {channels} values (one per channel), got {len(vals)}")
    return torch.tensor(vals, dtype=torch.float32, device=device)


def crop_mirror_normalize_batch(images: torch.Tensor, anchors: torch.Tensor, crop: tuple[int, int],
                                mirror: torch.Tensor | None, mean: torch.Tensor, std: torch.Tensor,
                                scale: float = 1.0, shift: float = 0.0,
                                dtype: torch.dtype = torch.float32, layout: str = "CHW",
                                pad_output: bool = False,
                                fill_values: Sequence[float] | None = None,
                                pad_values: Sequence[float] | None = None) -> torch.Tensor:
    """Dense batch version: images (N, H, W, C); anchors (N, 2) int (y, x) of each crop window,
    which may reach outside the image (filled); mirror (N,) bool or None. Returns (N, C', h, w)
    for layout "CHW" or (N, h, w, C') for "HWC"."""
    n, in_h, in_w, c = images.shape
    h, w = int(crop[0]), int(crop[1])
    dev = images.device
    anchors = anchors.to(dev, torch.int64)
    rows = anchors[:, :1] + torch.arange(h, device=dev)  # (N, h)
    cols = anchors[:, 1:] + torch.arange(w, device=dev)  # (N, w)
    if mirror is not None:
        cols = torch.where(mirror.to(dev, torch.bool)[:, None], cols.flip(1), cols)
    row_ok = (rows >= 0) & (rows < in_h)
    col_ok = (cols >= 0) & (cols < in_w)
    batch = torch.arange(n, device=dev)[:, None, None]
    if images.numel() == 0:  # empty images: every pixel of the window is fill
        x = torch.zeros((n, h, w, c), dtype=images.dtype, device=dev)
        row_ok = torch.zeros_like(row_ok)
    else:
        x = images[batch, rows.clamp(0, in_h - 1)[:, :, None], cols.clamp(0, in_w - 1)[:, None, :]]
    ok = None
    if not (bool(row_ok.all()) and bool(col_ok.all())):
        ok = (row_ok[:, :, None] & col_ok[:, None, :])[..., None]
    return _finish(x, ok, mean, std, scale, shift, dtype, layout, pad_output, fill_values, pad_values)


def crop_mirror_normalize_flat(items: torch.Tensor, first: Sequence[int], widths: Sequence[int],
                               anchors: torch.Tensor, crop: tuple[int, int], mirror: torch.Tensor | None,
                               mean: torch.Tensor, std: torch.Tensor, scale: float = 1.0, shift: float = 0.0,
                               dtype: torch.dtype = torch.float32, layout: str = "CHW",
                               pad_output: bool = False,
                               fill_values: Sequence[float] | None = None,
                               pad_values: Sequence[float] | None = None) -> torch.Tensor:
    """`crop_mirror_normalize_batch` for HWC images of different sizes held flat
    (`functional.ragged`): image i's pixel (y, x) is row first[i] + y * widths[i] + x of items
    (rows, C); every window (anchors (N, 2) (y, x), size `crop`) lies inside its image."""
    n, (h, w) = int(anchors.shape[0]), (int(crop[0]), int(crop[1]))
    dev = items.device
    anchors = anchors.to(dev, torch.int64)
    rows = anchors[:, :1] + torch.arange(h, device=dev)  # (N, h)
    cols = anchors[:, 1:] + torch.arange(w, device=dev)  # (N, w)
    if mirror is not None:
        cols = torch.where(mirror.to(dev, torch.bool)[:, None], cols.flip(1), cols)
    geo = torch.tensor([list(first), list(widths)], dtype=torch.int64).to(dev, non_blocking=True)
    idx = geo[0][:, None, None] + rows[:, :, None] * geo[1][:, None, None] + cols[:, None, :]
    x = items.index_select(0, idx.reshape(-1)).reshape(n, h, w, -1)
    return _finish(x, None, mean, std, scale, shift, dtype, layout, pad_output, fill_values, pad_values)


def _finish(x: torch.Tensor, ok: torch.Tensor | None, mean: torch.Tensor, std: torch.Tensor,
            scale: float, shift: float, dtype: torch.dtype, layout: str, pad_output: bool,
            fill_values: Sequence[float] | None, pad_values: Sequence[float] | None = None) -> torch.Tensor:
    """Normalizes gathered pixels x (N, h, w, C), fills where `ok` is False, pads, permutes."""
    n, h, w, c = x.shape
    dev = x.device
    y = (x.to(torch.float32) - mean.to(dev)) * torch.reciprocal(std.to(dev, torch.float32))
    if scale != 1.0:
        y = y * scale
    if shift != 0.0:
        y = y + shift
    y = convert(y, dtype)
    c_out = padded_channels(c) if pad_output else c
    fills = list(fill_values) if fill_values else [0.0]
    if ok is not None:
        vals = per_channel(fills[:c] if len(fills) == c_out and c_out != c else fills, c, "fill_values", dev)
        y = torch.where(ok, y, c_cast(vals.tolist(), dtype, dev))
    if c_out != c:
        extra = list(pad_values) if pad_values is not None else \
            [fills[k] if len(fills) == c_out else 0.0 for k in range(c, c_out)]
        pad = c_cast(extra, dtype, dev).expand(n, h, w, c_out - c)
        y = torch.cat([y, pad], dim=3)
    if layout == "CHW":
        y = y.permute(0, 3, 1, 2)
    return y.contiguous()


def _normalize_into(pix: torch.Tensor, mean: torch.Tensor, std: torch.Tensor, scale: float,
                    shift: float, layout: str, out: torch.Tensor | None = None) -> torch.Tensor:
    """The common case in one pass plus in-place steps: the uint8 -> float32 copy also does the
    layout change, then (x - mean) * (1 / std) in place. Same operations in the same order as
    `_finish`, so the same bits, at about a quarter of the memory traffic."""
    h, w, c = pix.shape
    dev = pix.device
    shape = (c, h, w) if layout == "CHW" else (h, w, c)
    if out is None or tuple(out.shape) != shape or out.dtype != torch.float32 or out.device != dev:
        out = torch.empty(shape, dtype=torch.float32, device=dev)
    if layout == "CHW":
        out.copy_(pix.permute(2, 0, 1))
        m, s = mean.to(dev).view(-1, 1, 1), std.to(dev, torch.float32).view(-1, 1, 1)
    else:
        out.copy_(pix)
        m, s = mean.to(dev), std.to(dev, torch.float32)
    out.sub_(m).mul_(torch.reciprocal(s))
    if scale != 1.0:
        out.mul_(scale)
    if shift != 0.0:
        out.add_(shift)
    return out


def crop_mirror_normalize(image: torch.Tensor, window: tuple[int, int, int, int], mirror: bool,
                          mean: torch.Tensor, std: torch.Tensor, scale: float = 1.0, shift: float = 0.0,
                          dtype: torch.dtype = torch.float32, layout: str = "CHW",
                          pad_output: bool = False,
                          fill_values: Sequence[float] | None = None,
                          out: torch.Tensor | None = None,
                          pad_values: Sequence[float] | None = None) -> torch.Tensor:
    """One HWC (or HW) image; window = (y, x, h, w). See `crop_mirror_normalize_batch`.
    `out`, when it has the result's shape and type, receives the result (no allocation)."""
    hwc = image.unsqueeze(-1) if image.dim() == 2 else image
    y, x, h, w = window
    in_h, in_w = int(hwc.shape[0]), int(hwc.shape[1])
    if y >= 0 and x >= 0 and y + h <= in_h and x + w <= in_w:  # plain slicing: no gather
        pix = hwc[y:y + h, x:x + w]
        pix = pix.flip(1) if mirror else pix
        if dtype == torch.float32 and not pad_output:
            return _normalize_into(pix, mean, std, scale, shift, layout, out)
        return _finish(pix.unsqueeze(0), None, mean, std, scale, shift, dtype, layout, pad_output,
                       fill_values, pad_values)[0]
    anchors = torch.tensor([[y, x]], dtype=torch.int64)
    out = crop_mirror_normalize_batch(
        hwc.unsqueeze(0), anchors, (h, w), torch.tensor([bool(mirror)]), mean, std, scale, shift,
        dtype, layout, pad_output, fill_values, pad_values)
    return out[0]
