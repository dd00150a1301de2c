"""Color kernels on HWC images (CPU or CUDA tensors): brightness/contrast and the YIQ color matrix.

Semantics follow NVIDIA DALI 2.4 (checked against its CPU backend):

* brightness_contrast: ``out = brightness * (center + contrast * (in - center)) + shift * max(out type)``
  computed in float32; ``center`` defaults to half the input type's range (128 for uint8, 16384 for
  int16, 2**30 for int32, 0.5 for float); integer outputs round half away from zero and saturate.
* hsv / color_twist: a 3x3 matrix ``diag(brightness) @ diag(contrast) @ inv(RGB->YIQ) @ rot(hue) @
  diag(1, sat, sat) @ diag(value) @ (RGB->YIQ)``, plus, for color_twist, the offset
  ``(half_range - half_range * contrast) * brightness`` (half_range: 0.5 for floats, 128 otherwise).
  DALI 2.4 builds both in float32, products left to right, each entry summed over k = 0, 1, 2 in
  order, and the inverse by float32 Gauss-Jordan elimination with fused multiply-adds (its
  `inverse` in core/geom/mat.h); the matrices here carry those bits exactly (`_dali_matrices`).
  Values are not rescaled between types.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Sequence

import numpy as np
import torch

from .crop import convert

# RGB -> YIQ (NTSC), float32 as DALI stores it; its inverse as DALI 2.4 computes it (`_gauss_inverse`).
_RGB2YIQ = torch.tensor([[0.299, 0.587, 0.114],
                         [0.596, -0.274, -0.321],
                         [0.211, -0.523, 0.311]], dtype=torch.float32).to(torch.float64)


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


def _fma32(a: float, b: float, c: float) -> float:
    """float32 a * b + c rounded once (std::fma): the exact product and sum, then one rounding."""
    return float(np.float32(Fraction(a) * Fraction(b) + Fraction(c)))


def _gauss_inverse(a: list[list[float]]) -> np.ndarray:
    """The float32 inverse DALI 2.4 uses for YIQ -> RGB: Gauss-Jordan elimination with partial
    pivoting, row scaling by a float32 reciprocal and fused multiply-adds (core/geom/mat.h)."""
    f = np.float32
    a = [[float(f(v)) for v in row] for row in a]
    b = [[1.0 if i == j else 0.0 for j in range(3)] for i in range(3)]
    for v in range(3):
        piv = max(range(v, 3), key=lambda i: (abs(a[i][v]), -i))
        a[v], a[piv], b[v], b[piv] = a[piv], a[v], b[piv], b[v]
        x = float(f(1.0) / f(a[v][v]))
        a[v] = [1.0 if j == v else (float(f(a[v][j]) * f(x)) if j > v else a[v][j]) for j in range(3)]
        b[v] = [float(f(w) * f(x)) for w in b[v]]
        for i in range(3):
            if i != v:
                c = -a[i][v]
                a[i] = [0.0 if j == v else (_fma32(c, a[v][j], a[i][j]) if j > v else a[i][j]) for j in range(3)]
                b[i] = [_fma32(c, b[v][j], b[i][j]) for j in range(3)]
    return np.array(b, dtype=np.float32)


_YIQ2RGB32 = _gauss_inverse(_RGB2YIQ.tolist())
_YIQ2RGB = torch.from_numpy(_YIQ2RGB32).to(torch.float64)


def _matmul32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, 3, 3) float32 products as DALI's mat3 computes them: entry (i, j) is
    ((a[i,0] * b[0,j] + a[i,1] * b[1,j]) + a[i,2] * b[2,j]), every operation rounded to float32."""
    with np.errstate(all="ignore"):  # inf * 0 is NaN, as in DALI's float32 products
        out = a[:, :, 0:1] * b[:, 0:1, :]
        for k in (1, 2):
            out = out + a[:, :, k:k + 1] * b[:, k:k + 1, :]
    return out


def _dali_matrices(brightness: Sequence[float], contrast: Sequence[float], hue: Sequence[float],
                   saturation: Sequence[float], value: Sequence[float]) -> torch.Tensor:
    """(N, 3, 3) float64 tensors holding DALI 2.4's float32 color matrices bit for bit:
    diag(b) @ diag(c) @ Yiq2Rgb @ rot(hue) @ diag(1, s, s) @ diag(v) @ Rgb2Yiq, left to right; the
    hue angle (float hue * pi / 180) rounded to float32, as its cosine and sine (DALI keeps the
    angle in a float). Non-finite arguments give NaN entries, as DALI's do."""
    f = np.float32
    n = len(hue)
    eye = np.broadcast_to(np.eye(3, dtype=f), (n, 3, 3))

    def diag(vals: Sequence[float], first: bool = True) -> np.ndarray:
        d = np.array([float(f(v)) for v in vals], dtype=f).reshape(n, 1)
        m = eye.copy()
        idx = [0, 1, 2] if first else [1, 2]
        m[:, idx, idx] = d
        return m

    rad = [float(f(float(f(h)) * math.pi / 180)) for h in hue]  # `const float h_rad`: float32
    rot = eye.copy()
    cos = np.array([math.cos(t) for t in rad], dtype=np.float64).astype(f)
    sin = np.array([math.sin(t) for t in rad], dtype=np.float64).astype(f)
    rot[:, 1, 1] = rot[:, 2, 2] = cos
    rot[:, 1, 2], rot[:, 2, 1] = sin, -sin
    m = diag(brightness)
    for nxt in (diag(contrast), np.broadcast_to(_YIQ2RGB32, (n, 3, 3)), rot, diag(saturation, first=False),
                diag(value), np.broadcast_to(_RGB2YIQ.numpy().astype(f), (n, 3, 3))):
        m = _matmul32(m, nxt)
    return torch.from_numpy(np.ascontiguousarray(m)).to(torch.float64)


@functools.lru_cache(maxsize=4096)
def _one_matrix(brightness: float, contrast: float, hue: float, saturation: float, value: float) -> tuple:
    """One `_dali_matrices` matrix as nested tuples, cached: per-sample calls mostly repeat their
    arguments, and composing one costs ~0.1 ms of small NumPy operations."""
    return tuple(map(tuple, _dali_matrices([brightness], [contrast], [hue], [saturation], [value])[0].tolist()))


def hsv_matrix(hue: float = 0.0, saturation: float = 1.0, value: float = 1.0) -> torch.Tensor:
    """The 3x3 RGB -> RGB matrix of a hue rotation (degrees), saturation and value scale: DALI's
    float32 matrix (`_dali_matrices`), held in float64."""
    return torch.tensor(_one_matrix(1.0, 1.0, float(hue), float(saturation), float(value)), dtype=torch.float64)


def hsv_matrices64(hue: Sequence[float], saturation: Sequence[float], value: Sequence[float]) -> torch.Tensor:
    """`hsv_matrix` of N samples at once, (N, 3, 3) float64 holding float32 values; a sample's
    matrix does not depend on the others (the per-sample and batched paths agree)."""
    n = len(hue)
    return _dali_matrices([1.0] * n, [1.0] * n, hue, saturation, value)


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


def _twist_offset(brightness: float, contrast: float, in_dtype: torch.dtype) -> float:
    """(half - half * contrast) * brightness, in float32 as DALI computes it."""
    f = np.float32
    half = f(0.5 if in_dtype.is_floating_point else 128.0)
    with np.errstate(all="ignore"):
        return float(f(f(half - f(half * f(contrast))) * f(brightness)))


def color_twist_matrix(brightness: float, contrast: float, hue: float, saturation: float,
                       in_dtype: torch.dtype) -> tuple[torch.Tensor, float]:
    """color_twist's 3x3 matrix (float64 holding DALI's float32 values) and offset (a float32 value)
    for an input type, as `color_twist_matrices` works them out for one sample."""
    m = torch.tensor(_one_matrix(float(brightness), float(contrast), float(hue), float(saturation), 1.0),
                     dtype=torch.float64)
    return m, _twist_offset(brightness, contrast, in_dtype)


def color_twist_matrices(brightness: Sequence[float], contrast: Sequence[float], hue: Sequence[float],
                         saturation: Sequence[float], in_dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """`color_twist_matrix` of N samples: (N, 3, 3) float64 matrices, (N,) float32 offsets."""
    m = _dali_matrices(brightness, contrast, hue, saturation, [1.0] * len(hue))
    offset = [_twist_offset(b, c, in_dtype) for b, c in zip(brightness, contrast)]
    return m, torch.tensor(offset, dtype=torch.float32)
