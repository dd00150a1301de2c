"""Brightness, contrast, hue, saturation and color-space conversion (CPU or CUDA tensors, channels
last), batched: per-sample parameters are vectors over a leading sample axis, so a dense batch is
one set of torch calls whatever its size.

The arithmetic is that of `functional.color` (DALI 2.4's, in float32, integers rounded half away
from zero and saturated); the per-sample and batched paths give the same bits.

color_space_conversion follows DALI 2.4's CPU backend on uint8 (measured over all 2**24 RGB
triples and all 256 gray levels: exact):
* RGB -> GRAY: OpenCV's fixed point, (9798 R + 19235 G + 3735 B + 2**14) >> 15;
* RGB -> YCbCr: ITU-R BT.601 with 16..235 luma and 16..240 chroma, float32 coefficients
  (0.299, 0.587, 0.114) * 219/255 and (Kr, Kb chroma rows) * 224/255, offsets 16 and 128;
* YCbCr -> RGB: the inverse rows (1.402, 0.34413629, 0.71413629, 1.772) * 255/224, luma
  (Y - 16) * 255/219; GRAY <-> YCbCr: luma scaled by 219/255 (and back), chroma 128.
"""
from __future__ import annotations

import torch

from .color import half_range, hsv_matrices64, max_value
from .crop import convert

F32 = torch.float32


def _bcast(v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A (N,) vector shaped to broadcast over a batch `x` of shape (N, ...)."""
    return v.reshape(v.shape[0], *([1] * (x.dim() - 1)))


def brightness_contrast_coeffs(brightness: torch.Tensor, shift: torch.Tensor, contrast: torch.Tensor,
                               center: torch.Tensor | None, in_dtype: torch.dtype,
                               dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-sample (N,) float32 (mul, add): out = in * mul + add is brightness_contrast."""
    if center is None:
        center = torch.full_like(brightness, half_range(in_dtype))
    mul = brightness * contrast
    add = brightness * center * (1 - contrast) + shift * torch.tensor(max_value(dtype), dtype=F32)
    return mul, add


def brightness_contrast_batch(x: torch.Tensor, brightness: torch.Tensor, shift: torch.Tensor,
                              contrast: torch.Tensor, center: torch.Tensor | None,
                              dtype: torch.dtype | None = None) -> torch.Tensor:
    """`out = brightness * (center + contrast * (in - center)) + shift * max(out type)` for a batch
    (N, ...) with per-sample (N,) parameters (float32 CPU tensors); `center` None: half the input
    type's range. The same float32 operations as `functional.color.brightness_contrast`."""
    dtype = x.dtype if dtype is None else dtype
    mul, add = brightness_contrast_coeffs(brightness, shift, contrast, center, x.dtype, dtype)
    y = x.to(F32) * _bcast(mul.to(x.device), x) + _bcast(add.to(x.device), x)
    return convert(y, dtype)


def brightness_contrast_flat(items: torch.Tensor, ids: torch.Tensor, brightness: torch.Tensor, shift: torch.Tensor,
                             contrast: torch.Tensor, center: torch.Tensor | None,
                             dtype: torch.dtype | None = None) -> torch.Tensor:
    """`brightness_contrast_batch` for a flat batch (`functional.ragged`): items (P, C) of the
    samples `ids` (P,) names, per-sample (N,) parameters; the same operations on each value."""
    dtype = items.dtype if dtype is None else dtype
    mul, add = brightness_contrast_coeffs(brightness, shift, contrast, center, items.dtype, dtype)
    y = items.to(F32) * _per_item(mul, ids)[:, None] + _per_item(add, ids)[:, None]
    return convert(y, dtype)


def _per_item(v: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    return v.to(ids.device, non_blocking=True).index_select(0, ids)


def color_matrix_flat(items: torch.Tensor, ids: torch.Tensor, m: torch.Tensor, offset: torch.Tensor | None,
                      dtype: torch.dtype | None = None) -> torch.Tensor:
    """`color_matrix_batch` (plus a per-sample offset, None: 0) for a flat batch: items (P, 3) of
    the samples `ids` (P,) names, per-sample (N, 3, 3) float32 matrices."""
    dtype = items.dtype if dtype is None else dtype
    xf = items.to(F32)
    cols = m.to(F32).reshape(-1, 9).t().contiguous()  # (9, N): one row per coefficient
    r, g, b = xf[:, 0], xf[:, 1], xf[:, 2]
    off: torch.Tensor | float = 0.0 if offset is None else _per_item(offset.to(F32), ids)
    chans = [r * _per_item(cols[3 * i], ids) + g * _per_item(cols[3 * i + 1], ids) + b * _per_item(cols[3 * i + 2], ids)
             + off for i in range(3)]
    return convert(torch.stack(chans, dim=-1), dtype)


def hsv_matrices(hue: list[float], saturation: list[float], value: list[float]) -> torch.Tensor:
    """(N, 3, 3) float32 matrices of `functional.color.hsv_matrix`, one per sample."""
    return hsv_matrices64(hue, saturation, value).to(F32)


def color_matrix_batch(x: torch.Tensor, m: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
    """out[n, ..., i] = sum_j m[n, i, j] * x[n, ..., j] in float32, as `apply_color_matrix` sums."""
    dtype = x.dtype if dtype is None else dtype
    xf = x.to(F32)
    m = m.to(x.device)
    r, g, b = xf[..., 0], xf[..., 1], xf[..., 2]
    chans = [r * _bcast(m[:, i, 0], r) + g * _bcast(m[:, i, 1], r) + b * _bcast(m[:, i, 2], r) + 0.0
             for i in range(3)]
    return convert(torch.stack(chans, dim=-1), dtype)


# -- color space conversion (uint8) ----------------------------------------------------------------

Y_ROW = (0.299 * 219 / 255, 0.587 * 219 / 255, 0.114 * 219 / 255)
CB_ROW = (-0.16873589 * 224 / 255, -0.33126411 * 224 / 255, 0.5 * 224 / 255)
CR_ROW = (0.5 * 224 / 255, -0.41868759 * 224 / 255, -0.08131241 * 224 / 255)
_R_CR, _G_CB, _G_CR, _B_CB = (1.402 * 255 / 224, 0.34413629 * 255 / 224, 0.71413629 * 255 / 224,
                              1.772 * 255 / 224)
CHANNELS = {"RGB": 3, "BGR": 3, "GRAY": 1, "YCbCr": 3}


def _f(v: float) -> torch.Tensor:
    return torch.tensor(v, dtype=F32)


def _row(row: tuple[float, float, float], a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    return (_f(row[0]).to(a.device) * a + _f(row[1]).to(a.device) * b) + _f(row[2]).to(a.device) * c


def _u8(y: torch.Tensor) -> torch.Tensor:
    return convert(y, torch.uint8)


def _to_rgb(x: torch.Tensor, src: str) -> torch.Tensor:
    """Any supported input as an RGB uint8 tensor (channels last)."""
    if src == "RGB":
        return x
    if src == "BGR":
        return x.flip(-1)
    if src == "GRAY":
        return x.expand(*x.shape[:-1], 3)
    yf = x.to(F32)
    ty = (yf[..., 0] - 16) * _f(255 / 219).to(x.device)
    cb, cr = yf[..., 1] - 128, yf[..., 2] - 128
    r = ty + _f(_R_CR).to(x.device) * cr
    g = (ty - _f(_G_CB).to(x.device) * cb) - _f(_G_CR).to(x.device) * cr
    b = ty + _f(_B_CB).to(x.device) * cb
    return _u8(torch.stack([r, g, b], -1))


def color_space_conversion(x: torch.Tensor, src: str, dst: str) -> torch.Tensor:
    """Converts uint8 channels-last images (any leading axes) between RGB, BGR, GRAY and YCbCr."""
    if src == dst:
        return x.clone()
    if dst == "GRAY" and src == "YCbCr":
        return _u8((x[..., :1].to(F32) - 16) * _f(255 / 219).to(x.device))
    if src == "GRAY" and dst == "YCbCr":
        y = _u8(x.to(F32) * _f(219 / 255).to(x.device) + 16)
        return torch.cat([y, torch.full_like(y, 128), torch.full_like(y, 128)], -1)
    if dst == "GRAY":
        rgb = x if src == "RGB" else x.flip(-1)
        w = rgb.to(torch.int32)
        y = (w[..., 0] * 9798 + w[..., 1] * 19235 + w[..., 2] * 3735 + (1 << 14)) >> 15
        return y.to(torch.uint8).unsqueeze(-1)
    if dst == "YCbCr":
        rgb = x if src == "RGB" else x.flip(-1)
        f = rgb.to(F32)
        r, g, b = f[..., 0], f[..., 1], f[..., 2]
        return _u8(torch.stack([_row(Y_ROW, r, g, b) + 16, _row(CB_ROW, r, g, b) + 128,
                                _row(CR_ROW, r, g, b) + 128], -1))
    rgb = _to_rgb(x, src)
    return (rgb.flip(-1) if dst == "BGR" else rgb).contiguous()
