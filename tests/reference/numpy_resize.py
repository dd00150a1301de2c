"""A small NumPy resampler written from DALI's documented behaviour, not from torch_dali's code:
linear / triangular filters in float64, source indices clamped at the image border (edges repeat),
an optional source window whose filter taps may reach past it. Checked against the DALI tables
(test_ref_windows.py), then used where no table can exist (random_resized_crop's random windows)."""
from __future__ import annotations

import math

import numpy as np


def _axis_matrix(n_in: int, n_out: int, origin: float, extent: float, antialias: bool) -> np.ndarray:
    """(n_out, n_in) weights of one axis: a triangle of half-width max(1, scale) (antialias on a
    shrinking axis) or 1, centred on origin + (i + 0.5) * scale - 0.5, taps clamped to the image."""
    scale = extent / n_out
    radius = scale if (antialias and scale > 1) else 1.0
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        centre = origin + (i + 0.5) * scale - 0.5
        lo, hi = math.floor(centre - radius), math.ceil(centre + radius)
        taps = np.arange(lo, hi + 1)
        w = np.clip(1.0 - np.abs(taps - centre) / radius, 0.0, None)
        w /= w.sum()
        np.add.at(m[i], np.clip(taps, 0, n_in - 1), w)
    return m


def resize_linear(img: np.ndarray, size: tuple[int, int], window: tuple[int, int, int, int] | None = None,
                  antialias: bool = True) -> np.ndarray:
    """HWC uint8 image -> `size` (h, w) uint8, linear filter (triangular when shrinking with
    antialias), over `window` = (y, x, h, w) of the source (default: all of it)."""
    h_in, w_in = img.shape[:2]
    y, x, wh, ww = window if window is not None else (0, 0, h_in, w_in)
    my = _axis_matrix(h_in, size[0], y, wh, antialias)
    mx = _axis_matrix(w_in, size[1], x, ww, antialias)
    out = np.einsum("ih,hwc,jw->ijc", my, img.astype(np.float64), mx)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)
