"""Pure-torch cropping and flipping of HWC images (any device), with DALI's window rules.

DALI facts this follows: crop sizes are truncated to integers; the anchor is
round(crop_pos * (in - crop)) with halves away from zero (`rounding="truncate"` truncates);
crop_pos must lie in [0, 1]; out-of-bounds windows raise ("error"), are filled ("pad") or are
cut to the image ("trim_to_shape").
"""
from __future__ import annotations

import math
import struct
from typing import Sequence

import torch

from . import ragged as R
from .half import to_half

Window = tuple[int, int, int, int]  # (y, x, h, w)
POLICIES = ("error", "pad", "trim_to_shape")


def f32(v: float) -> float:
    """`v` rounded to float32, as DALI stores float arguments (keeps rounding decisions identical)."""
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def round_half_away(v: float) -> int:
    """C's round(): halves go away from zero (Python's round() goes to even)."""
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def convert(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Type conversion as DALI does it: to integers rounds half away from zero and saturates; to
    float16 rounds halfway cases away from zero too (`half.to_half`)."""
    if x.dtype == dtype:
        return x
    if dtype == torch.float16:
        return to_half(x)  # halfway cases away from zero, as DALI's CPU conversion
    if dtype.is_floating_point or dtype == torch.bool or x.dtype == torch.bool:
        return x.to(dtype)
    info = torch.iinfo(dtype)
    if x.dtype.is_floating_point:
        if info.bits >= 32 or x.dtype == torch.float64:
            return float_to_int(x, dtype)
        # float32 / float16 to the narrow types in the input's precision, as the C helper computes
        # them (`_native/csrc/cpu/cpu_image.c`); NaN gives 0 there and here
        return (torch.sign(x) * torch.floor(x.abs() + 0.5)).clamp_(info.min, info.max).to(dtype)
    src = torch.iinfo(x.dtype)
    if src.min >= info.min and src.max <= info.max:
        return x.to(dtype)
    return x.to(torch.int64).clamp_(info.min, info.max).to(dtype)


#: NaN converted to these types, as DALI 2.4's CPU conversion gives it (x86's "invalid" result of
#: the 32- and 64-bit conversions); the narrower types and uint32 give 0
_NAN_AS = {torch.int32: -2 ** 31, torch.int64: -2 ** 63, torch.uint64: 2 ** 63}


def float_to_int(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A float tensor to the integer type `dtype` as DALI's saturating conversion (`fn.cast`): rounded
    half away from zero exactly (float64 inputs too: 0.49999999999999994 -> 0), then clamped to the
    type's limits (infinities included); NaN gives `_NAN_AS`'s value or 0. In float64, which holds
    every float32 and every bound exactly (2**63, uint64's 2**64)."""
    w = x.to(torch.float64)
    t = torch.trunc(w)
    r = torch.where((w - t).abs() >= 0.5, t + torch.sign(w), t)  # w - t is exact
    nan = torch.isnan(r)
    if dtype == torch.uint64:
        # as int64 bit patterns: [2**63, 2**64) wraps to negatives (exact in float64), 2**64 and
        # above is all ones, NaN is 2**63 (int64's minimum)
        bits = torch.where(r >= 2.0 ** 64, -1.0, torch.where(r >= 2.0 ** 63, r - 2.0 ** 64, r.clamp(min=0.0)))
        bits = torch.where(nan, -(2.0 ** 63), bits).to(torch.int64)
        return bits.reshape(-1).view(torch.uint64).reshape(x.shape)
    info = torch.iinfo(dtype)
    top = r >= float(info.max)  # int64's max is no float64: saturate by this test, not a clamp
    out = torch.where(top | nan, 0.0, r.clamp(min=float(info.min))).to(torch.int64)
    out = torch.where(top, info.max, torch.where(nan, _NAN_AS.get(dtype, 0), out))
    return out.to(dtype)


def clamp_cast(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Type conversion as DALI's slice kernels do it (crop, slice): saturating, but floats go to
    integers truncated toward zero (2.5 -> 2, -0.5 -> 0), and to float16 clamped to its finite range
    (70000 -> 65504), where `convert` rounds and overflows to inf."""
    if x.dtype == dtype:
        return x
    if dtype == torch.float16:
        return to_half(x.to(torch.float64).clamp(-65504.0, 65504.0))
    if dtype.is_floating_point or dtype == torch.bool or x.dtype == torch.bool or not x.is_floating_point():
        return convert(x, dtype)
    info = torch.iinfo(dtype)
    if info.bits >= 32 and x.dtype != torch.float64:  # int32's max is no float32: clamp in float64
        x = x.to(torch.float64)
    return x.clamp(info.min, info.max).trunc_().to(dtype)


class CropOutOfBounds(ValueError):
    """The crop window leaves the image and the policy is "error"."""


def crop_anchor(n_in: int, n_crop: int, pos: float, rounding: str) -> int:
    a = f32(pos) * float(n_in - n_crop)
    return round_half_away(a) if rounding == "round" else int(math.trunc(a))


def crop_window(in_h: int, in_w: int, crop_h: float | None, crop_w: float | None,
                pos_y: float = 0.5, pos_x: float = 0.5, rounding: str = "round") -> Window:
    """The (y, x, h, w) window DALI's Crop takes; a None/0 size keeps the whole dimension."""
    for name, p in (("crop_pos_y", pos_y), ("crop_pos_x", pos_x)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"`{name}` must be in [0, 1], got {p}")
    h = int(math.trunc(crop_h)) if crop_h else in_h
    w = int(math.trunc(crop_w)) if crop_w else in_w
    if (crop_h and h <= 0) or (crop_w and w <= 0):  # an empty image's own extent is no crop size
        raise ValueError(f"the crop size must be positive, got {(h, w)}")
    return crop_anchor(in_h, h, pos_y, rounding), crop_anchor(in_w, w, pos_x, rounding), h, w


def apply_policy(window: Window, in_h: int, in_w: int, policy: str) -> Window:
    """Checks or trims a window against the image; "pad" and the border policies (edge, reflect,
    wrap, ...: pixels taken from inside) keep it as is."""
    y, x, h, w = window
    inside = y >= 0 and x >= 0 and y + h <= in_h and x + w <= in_w
    if inside or policy not in ("error", "trim_to_shape"):
        return window
    if policy == "trim_to_shape":
        y0, x0 = max(0, y), max(0, x)
        y1, x1 = min(in_h, y + h), min(in_w, x + w)
        return y0, x0, max(0, y1 - y0), max(0, x1 - x0)
    raise CropOutOfBounds(
        f"the crop window (y={y}, x={x}, h={h}, w={w}) reaches out of bounds of the {in_h}x{in_w} image, "
        "which out_of_bounds_policy='error' refuses; use 'pad' or 'trim_to_shape'")


def fill_vector(fill_values: Sequence[float] | None, channels: int, dtype: torch.dtype,
                device: torch.device) -> torch.Tensor:
    """Per-channel fill values: one value for all channels, or exactly one per channel."""
    vals = list(fill_values) if fill_values else [0.0]
    if len(vals) == 1:
        vals = vals * channels
    if len(vals) != channels:
        raise ValueError(f"`fill_values` must have 1 or {channels} values, got {len(vals)}")
    return torch.tensor(vals, dtype=torch.float64).to(dtype).to(device)


def crop(image: torch.Tensor, window: Window, fill_values: Sequence[float] | None = None,
         dtype: torch.dtype | None = None) -> torch.Tensor:
    """Cuts `window` = (y, x, h, w) out of an HWC (or HW) image; parts outside are filled. With
    `dtype`, the pixels convert by `clamp_cast` and the fill goes straight to that type (a float
    fill keeps its fraction in a float output of a uint8 image, as in DALI)."""
    y, x, h, w = window
    in_h, in_w = int(image.shape[0]), int(image.shape[1])
    dtype = dtype or image.dtype
    if y >= 0 and x >= 0 and y + h <= in_h and x + w <= in_w:
        return clamp_cast(image[y:y + h, x:x + w], dtype).contiguous()
    extra = tuple(image.shape[2:])
    channels = extra[0] if extra else 1
    fill = fill_vector(fill_values, channels, dtype, image.device)
    out = fill.expand(h, w, channels).reshape((h, w) + extra).clone()
    sy0, sx0 = max(0, y), max(0, x)
    sy1, sx1 = min(in_h, y + h), min(in_w, x + w)
    if sy1 > sy0 and sx1 > sx0:
        out[sy0 - y:sy1 - y, sx0 - x:sx1 - x] = clamp_cast(image[sy0:sy1, sx0:sx1], dtype)
    return out


def flip(image: torch.Tensor, horizontal: bool = True, vertical: bool = False) -> torch.Tensor:
    """Mirrors an HWC (or HW) image left-right and/or upside down."""
    dims = [d for d, on in ((0, vertical), (1, horizontal)) if on]
    return image.flip(dims) if dims else image



def flip_flat(images: Sequence[torch.Tensor], horizontal: Sequence[bool], vertical: Sequence[bool]) -> list[torch.Tensor]:
    """`flip` of HWC images of different sizes (one type and channel count) with per-sample
    flags, as one gather over the batch held flat (`functional.ragged`)."""
    flat = R.Flat(images, inner=1)
    hw = [(int(s[0]), int(s[1])) for s in flat.shapes]
    ids, y, x = R.positions(hw, flat.device)
    # source row: first + (vertical ? h - 1 - y : y) * w + (horizontal ? w - 1 - x : x)
    first, w, ys, y0, xs, x0 = R.columns([(b, ww, -1 if fv else 1, hh - 1 if fv else 0, -1 if fh else 1, ww - 1 if fh else 0)
                                          for b, (hh, ww), fh, fv in zip(R.starts(flat.rows), hw, horizontal, vertical)],
                                         ids)
    return flat.split(flat.items().index_select(0, first + (y * ys + y0) * w + (x * xs + x0)))


def flip_batch(x: torch.Tensor, horizontal: Sequence[bool], vertical: Sequence[bool]) -> torch.Tensor:
    """`flip` of each sample of a dense (N, H, W[, C]) batch, with per-sample flags, in a few
    launches rather than one per sample (what Flip runs on a dense CUDA batch)."""
    out = x
    for flags, dim in ((horizontal, 2), (vertical, 1)):
        if not any(flags):
            continue
        if all(flags):
            out = out.flip(dim)
            continue
        mask = torch.tensor(list(flags)).to(x.device, non_blocking=True).view(-1, *([1] * (x.dim() - 1)))
        out = torch.where(mask, out.flip(dim), out)
    return out
