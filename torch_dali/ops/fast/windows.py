"""Random-resized-crop windows for a whole batch: the C helper (`_native/csrc/cpu/crop_windows.c`,
one call, no Python object per sample: ~200x cheaper) when it is built, else the spec's draws
(`functional.crop_window`), window for window the same."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..._native import helpers
from ...functional import crop_window


def random_crop_window_array(seed: int, iteration: int, sizes: Sequence[tuple[int, int]] | np.ndarray,
                             area: Sequence[float] = (0.08, 1.0),
                             aspect_ratio: Sequence[float] = (3.0 / 4.0, 4.0 / 3.0),
                             num_attempts: int = 10) -> np.ndarray:
    """(n, 4) int64 windows (y, x, h, w) of samples 0..n-1 of one iteration: what the batched GPU
    kernels and the GPU decoder's crops take."""
    out = helpers.crop_windows(seed, iteration, sizes, (float(area[0]), float(area[1])),
                               (float(aspect_ratio[0]), float(aspect_ratio[1])), num_attempts)
    if out is not None:
        return out
    return crop_window.random_crop_window_array(seed, iteration, sizes, area, aspect_ratio, num_attempts)


def mirrored_windows(wins: np.ndarray, in_hw: np.ndarray, flipped: Sequence[bool]) -> np.ndarray:
    """Windows (n, 4) = (y, x, h, w) of images mirrored left-right where `flipped`, as windows of
    the images themselves: the window of a mirrored image is its mirror image's window at
    x' = W - x - w, read mirrored."""
    out = np.array(wins, dtype=np.int64, copy=True)
    f = np.asarray(flipped, dtype=bool)
    out[f, 1] = np.asarray(in_hw, dtype=np.int64)[f, 1] - out[f, 1] - out[f, 3]
    return out
