"""Random crop windows (RandomResizedCrop / ImageDecoderRandomCrop), drawn from a SampleRNG.

Shared by the CPU ops, the fused decoders and the CUDA kernels (through `ops.fast.windows`, which
draws a batch in one C call), so every path picks the same crop for the same seed.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..rng import SampleRNG


def random_crop_window(rng: SampleRNG, height: int, width: int,
                       area: Sequence[float] = (0.08, 1.0),
                       aspect_ratio: Sequence[float] = (3.0 / 4.0, 4.0 / 3.0),
                       num_attempts: int = 10) -> tuple[int, int, int, int]:
    """Returns (y, x, h, w): a window covering a random fraction `area` of the image with a
    random width/height ratio drawn log-uniformly from `aspect_ratio`. After `num_attempts`
    misses, falls back to the largest window whose ratio is clamped into the range, at a random
    position (DALI places the fallback window randomly; torchvision centres it)."""
    total = float(height * width)
    log_lo, log_hi = math.log(aspect_ratio[0]), math.log(aspect_ratio[1])
    for _ in range(max(1, num_attempts)):
        target = total * rng.uniform(area[0], area[1])
        ratio = math.exp(rng.uniform(log_lo, log_hi))
        w = int(round(math.sqrt(target * ratio)))
        h = int(round(math.sqrt(target / ratio)))
        if 0 < w <= width and 0 < h <= height:
            y = rng.randint(0, height - h)
            x = rng.randint(0, width - w)
            return y, x, h, w
    ratio = width / height
    if ratio < aspect_ratio[0]:
        w = width
        h = int(round(w / aspect_ratio[0]))
    elif ratio > aspect_ratio[1]:
        h = height
        w = int(round(h * aspect_ratio[1]))
    else:
        w, h = width, height
    h, w = max(1, min(h, height)), max(1, min(w, width))
    return rng.randint(0, height - h), rng.randint(0, width - w), h, w


def random_crop_window_array(seed: int, iteration: int, sizes: Sequence[tuple[int, int]] | np.ndarray,
                             area: Sequence[float] = (0.08, 1.0),
                             aspect_ratio: Sequence[float] = (3.0 / 4.0, 4.0 / 3.0),
                             num_attempts: int = 10) -> np.ndarray:
    """`random_crop_window` for samples 0..n-1 of one iteration (`SampleRNG(seed, iteration, i)`,
    sizes[i] = (height, width)), as an (n, 4) int64 array of (y, x, h, w). The spec of the batched
    draw; `ops.fast.windows` draws the same windows in one C call."""
    n = len(sizes)
    return np.array([random_crop_window(SampleRNG(seed, iteration, i), int(h), int(w), area, aspect_ratio,
                                        num_attempts) for i, (h, w) in enumerate(np.asarray(sizes).tolist())],
                    dtype=np.int64).reshape(n, 4)


def reading_regions(windows: np.ndarray, sizes: np.ndarray, out_size: Sequence[int]) -> np.ndarray:
    """(n, 4) int64 (y, x, h, w): the part of each image of `sizes` (n, 2) that resampling its
    window (y, x, h, w) to `out_size` (height, width) with a linear or triangular filter reads.
    The filter's taps reach past the window by its radius (1, or in/out when shrinking with
    antialias) plus one for rounding; the margin is twice that, and the region stays in the image."""
    wins = np.asarray(windows, dtype=np.int64).reshape(-1, 4)
    full = np.asarray(sizes, dtype=np.int64).reshape(-1, 2)
    out = np.asarray(out_size, dtype=np.float64).reshape(1, 2)
    margin = 2 * np.ceil(np.maximum(wins[:, 2:] / out, 1.0)).astype(np.int64) + 2
    lo = np.maximum(wins[:, :2] - margin, 0)
    hi = np.minimum(wins[:, :2] + wins[:, 2:] + margin, full)
    return np.concatenate([lo, hi - lo], axis=1)
