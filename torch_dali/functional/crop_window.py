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
