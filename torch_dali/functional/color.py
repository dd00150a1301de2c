"""Color kernels on HWC images (CPU or CUDA tensors): brightness/contrast and the YIQ color matrix.

Semantics follow NVIDIA DALI 2.4 (checked against its CPU backend):

* brightness_contrast: ``out = brightness * (center + contrast * (in - center)) + shift * max(out type)``
  computed in float32; ``center`` defaults to half the input type's range (128 for uint8, 16384 for
  int16, 2**30 for int32, 0.5 for float); integer outputs round half away from zero and saturate.
* hsv / color_twist: a 3x3 matrix ``inv(RGB->YIQ) @ rot(hue) @ diag(1, sat, sat) @ (RGB->YIQ)``
  times ``value`` (hsv) or ``brightness * contrast`` (color_twist), plus, for color_twist, the offset
  ``brightness * (1 - contrast) * half_range(input type)``. Values are not rescaled between types.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import torch

from .crop import convert

# RGB -> YIQ (NTSC); the inverse is computed, not tabulated (DALI 2.4 matches the exact inverse).
_RGB2YIQ = torch.tensor([[0.299, 0.587, 0.114],
                         [0.596, -0.274, -0.321],
                         [0.211, -0.523, 0.311]], dtype=torch.float64)
_YIQ2RGB = torch.linalg.inv(_RGB2YIQ)


def half_range(dtype: torch.dtype) -> float:
    """The default contrast center: 0.5 for floats, (max + 1) / 2 for integers (128 for uint8)."""
    if dtype.is_floating_point:
        return 0.5
    return (torch.iinfo(dtype).max + 1) / 2


def max_value(dtype: torch.dtype) -> float:
    """What `brightness_shift` = 1 adds: 1.0 for floats, the type's maximum for integers."""
    if dtype.is_floating_point:
        return 1.0
    return float(torch.iinfo(dtype).max)


def _to(y: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return convert(y, dtype) if y.dtype != dtype else y


def brightness_contrast(x: torch.Tensor, brightness: float = 1.0, brightness_shift: float = 0.0,
                        contrast: float = 1.0, contrast_center: float | None = None,
                        dtype: torch.dtype | None = None) -> torch.Tensor:
    """DALI's brightness_contrast on any layout; `dtype` defaults to the input's."""
    dtype = x.dtype if dtype is None else dtype
    mul, add = brightness_contrast_coefficients(x.dtype, brightness, brightness_shift, contrast, contrast_center,
                                                dtype)
    y = x.to(torch.float32) * mul + add
    return _to(y, dtype)


def brightness_contrast_coefficients(in_dtype: torch.dtype, brightness: float = 1.0, brightness_shift: float = 0.0,
                                     contrast: float = 1.0, contrast_center: float | None = None,
                                     dtype: torch.dtype | None = None) -> tuple[float, float]:
    """brightness_contrast's out = in * mul + add, in float32: (mul, add), each a float32 value."""
    dtype = in_dtype if dtype is None else dtype
    center = half_range(in_dtype) if contrast_center is None else float(contrast_center)
    f = np.float32  # float32 scalars: each operation rounds as torch's float32 does (per sample, cheaply)
    with np.errstate(over="ignore", invalid="ignore"):
        b, c = f(brightness), f(contrast)
        mul = float(b * c)
        add = float(b * f(center) * (f(1) - c) + f(brightness_shift) * f(max_value(dtype)))
    return mul, add


def hsv_matrix(hue: float = 0.0, saturation: float = 1.0, value: float = 1.0) -> torch.Tensor:
    """The 3x3 RGB -> RGB matrix (float64) of a hue rotation (degrees), saturation and value scale:
    `hsv_matrices64`'s products on Python floats (the same float64 roundings, in the same order,
    without a dozen tensor operations per sample)."""
    t = math.radians(hue)
    cos, sin, sat = math.cos(t), math.sin(t), float(saturation)
    rot = [[1.0, 0.0, 0.0], [0.0, cos, sin], [0.0, -sin, cos]]
    scale = [[1.0, 0.0, 0.0], [0.0, sat, 0.0], [0.0, 0.0, sat]]
    m = _mm(_mm(_mm(_YIQ2RGB.tolist(), rot), scale), _RGB2YIQ.tolist())
    return torch.tensor([[v * float(value) for v in row] for row in m], dtype=torch.float64)


def hsv_matrices64(hue: Sequence[float], saturation: Sequence[float], value: Sequence[float]) -> torch.Tensor:
    """`hsv_matrix` of N samples at once, (N, 3, 3) float64: inv(RGB->YIQ) @ rot(hue) @
    diag(1, sat, sat) @ (RGB->YIQ) * value, each product summed over k = 0, 1, 2 in order, so a
    sample's matrix does not depend on the others (the per-sample and batched paths agree)."""
    f64 = torch.float64
    rad = [math.radians(h) for h in hue]
    cos = torch.tensor([math.cos(t) for t in rad], dtype=f64)
    sin = torch.tensor([math.sin(t) for t in rad], dtype=f64)
    sat = torch.tensor([float(v) for v in saturation], dtype=f64)
    rot = [[1.0, 0.0, 0.0], [0.0, cos, sin], [0.0, -sin, cos]]
    scale = [[1.0, 0.0, 0.0], [0.0, sat, 0.0], [0.0, 0.0, sat]]
    yiq2rgb, rgb2yiq = _YIQ2RGB.tolist(), _RGB2YIQ.tolist()
    m = _mm(_mm(_mm(yiq2rgb, rot), scale), rgb2yiq)
    n = len(rad)
    full = torch.stack([torch.stack([torch.as_tensor(v, dtype=f64).expand(n) for v in row], -1) for row in m], -2)
    return full * torch.tensor([float(v) for v in value], dtype=f64).reshape(n, 1, 1)


def _mm(a: list[list[Any]], b: list[list[Any]]) -> list[list[Any]]:
    """3x3 product of matrices whose entries are numbers or per-sample (N,) float64 tensors."""
    return [[a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j] for j in range(3)] for i in range(3)]


def apply_color_matrix(x: torch.Tensor, m: torch.Tensor, offset: float = 0.0,
                       dtype: torch.dtype | None = None) -> torch.Tensor:
    """out[..., i] = sum_j m[i, j] * x[..., j] + offset, in float32, then converted to `dtype`."""
    if x.shape[-1] != 3:
        raise ValueError(f"expected 3 channels (RGB) in the last dimension, got shape {tuple(x.shape)}")
    dtype = x.dtype if dtype is None else dtype
    xf = x.to(torch.float32)
    mm = m.to(torch.float32).tolist()
    r, g, b = xf[..., 0], xf[..., 1], xf[..., 2]
    chans = [r * row[0] + g * row[1] + b * row[2] + offset for row in mm]
    return _to(torch.stack(chans, dim=-1), dtype)


def hsv(x: torch.Tensor, hue: float = 0.0, saturation: float = 1.0, value: float = 1.0,
        dtype: torch.dtype = torch.uint8) -> torch.Tensor:
    """DALI's hsv: note its output type defaults to uint8 whatever the input's type."""
    return apply_color_matrix(x, hsv_matrix(hue, saturation, value), 0.0, dtype)


def color_twist(x: torch.Tensor, brightness: float = 1.0, contrast: float = 1.0, hue: float = 0.0,
                saturation: float = 1.0, dtype: torch.dtype | None = None) -> torch.Tensor:
    """DALI's color_twist: hsv's matrix scaled by brightness * contrast, contrast about 0.5 for
    floats and 128 for every integer type (unlike brightness_contrast's half range: DALI 2.4)."""
    m, offset = color_twist_matrix(brightness, contrast, hue, saturation, x.dtype)
    return apply_color_matrix(x, m, offset, dtype)


def color_twist_matrix(brightness: float, contrast: float, hue: float, saturation: float,
                       in_dtype: torch.dtype) -> tuple[torch.Tensor, float]:
    """color_twist's 3x3 matrix (float64) and offset (a float32 value) for an input type, as
    `color_twist_matrices` works them out for one sample."""
    grey = 0.5 if in_dtype.is_floating_point else 128.0
    offset = torch.tensor(brightness * (1 - contrast) * grey, dtype=torch.float64).to(torch.float32)
    return hsv_matrix(hue, saturation, brightness * contrast), float(offset)


def color_twist_matrices(brightness: Sequence[float], contrast: Sequence[float], hue: Sequence[float],
                         saturation: Sequence[float], in_dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """`color_twist_matrix` of N samples: (N, 3, 3) float64 matrices, (N,) float32 offsets."""
    m = hsv_matrices64(hue, saturation, [b * c for b, c in zip(brightness, contrast)])
    grey = 0.5 if in_dtype.is_floating_point else 128.0
    offset = torch.tensor([b * (1 - c) * grey for b, c in zip(brightness, contrast)], dtype=torch.float64)
    return m, offset.to(torch.float32)
