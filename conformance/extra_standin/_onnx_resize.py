"""ONNX's reference Resize (half_pixel coordinates, edge padding, the linear and cubic kernels with
and without antialiasing) in NumPy, written from the operator's specification: test_resize compares
DALI's resize of db/imgproc's checkerboard with references made this way (db/imgproc/ref/resampling),
which the stand-in computes for its own checkerboard."""
from __future__ import annotations

from typing import Callable

import numpy as np

Coeffs = Callable[[float, float], np.ndarray]


def linear(ratio: float, scale: float) -> np.ndarray:
    return np.array([1 - ratio, ratio])


def _cubic_kernel(x: float, a: float) -> float:
    x = abs(x)
    if x <= 1:
        return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1
    return a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a if x < 2 else 0.0


def cubic(ratio: float, scale: float, a: float = -0.5) -> np.ndarray:
    return np.array([_cubic_kernel(d, a) for d in (ratio + 1, ratio, 1 - ratio, 2 - ratio)])


def linear_antialias(ratio: float, scale: float) -> np.ndarray:
    scale = min(scale, 1.0)
    start = int(np.floor(-1 / scale) + 1)
    args = (np.arange(start, 2 - start) - ratio) * scale
    c = np.clip(1 - np.abs(args), 0, 1)
    return c / c.sum()


def cubic_antialias(ratio: float, scale: float, a: float = -0.5) -> np.ndarray:
    scale = min(scale, 1.0)
    start = int(np.floor(-2 / scale) + 1)
    c = np.array([_cubic_kernel(scale * (i - ratio), a) for i in range(start, 2 - start)])
    return c / c.sum()


def _resize_1d(data: np.ndarray, out_n: int, coeffs: Coeffs) -> np.ndarray:
    n = len(data)
    scale = out_n / n
    out = np.empty(out_n)
    for i in range(out_n):
        x = (i + 0.5) / scale - 0.5
        ratio = x - np.floor(x)
        if ratio == 0:  # the specification's convention at whole positions: the left neighbour's weight
            ratio = 1.0
        c = coeffs(ratio, scale)
        pad = int(np.ceil(len(c) / 2))
        padded = np.pad(data, pad, mode="edge")
        xp = x + pad  # the len(c) nearest padded indices, ties to the lower one
        idx = sorted(sorted(range(len(padded)), key=lambda j: (abs(xp - j), j))[:len(c)])
        out[i] = np.dot(c, padded[idx])
    return out


def resize(image: np.ndarray, size: tuple[int, int], coeffs: Coeffs) -> np.ndarray:
    """A 2-D float64 array resized axis by axis (rows first, then columns)."""
    rows = np.stack([_resize_1d(image[:, j], size[0], coeffs) for j in range(image.shape[1])], axis=1)
    return np.stack([_resize_1d(rows[i], size[1], coeffs) for i in range(size[0])], axis=0)
