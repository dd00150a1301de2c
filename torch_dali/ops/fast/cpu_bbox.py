"""random_bbox_crop's window search in C (`_native/csrc/cpu/bbox_crop.c`), a stand-in for
`functional.bbox_crop.find_crops` (registered with the dispatch): one call for the batch, where the
spec makes a few dozen NumPy calls per candidate window on a sample's handful of boxes (~20x DALI's
CPU time). Same draws, same windows (tests/test_bbox_crop_native.py holds it to the spec, bit for bit).
Also the kept boxes' remap into their windows (`BC.kept_boxes`, tests/test_bbox_crop_batch_bits.py)."""
from __future__ import annotations

import numpy as np

from ..._native import helpers
from ...functional import bbox_crop as BC
from .._dispatch import register_fast_function


def find_crops(seed: int, iteration: int, ids: np.ndarray, lo: np.ndarray, hi: np.ndarray, offsets: np.ndarray,
               p: BC.CropParams, crop_shape: np.ndarray | None = None,
               input_shape: np.ndarray | None = None) -> BC.BatchCrops | None:
    """`BC.find_crops`, or None for a call the helper does not take."""
    got = helpers.bbox_crop(seed, iteration, ids, lo, hi, offsets, p.thresholds, p.overlap,
                            [v for pair in p.aspect for v in pair], p.scaling, p.allow_no_crop, p.num_attempts,
                            p.total_num_attempts, p.all_boxes, p.prune, crop_shape, input_shape, BC.MAX_ATTEMPTS)
    if got is None:
        return None
    n, nd = len(ids), p.ndim
    if isinstance(got, int):  # the spec stops at the failed sample; what it filled before is not read
        return BC.BatchCrops(np.zeros((n, nd), np.float32), np.zeros((n, nd), np.float32), np.zeros((n, nd)),
                             np.zeros((n, nd)), np.zeros(lo.shape[0], bool), np.zeros(n, bool), np.zeros(n), got)
    return BC.BatchCrops(*got)


def kept_boxes(b: np.ndarray, ndim: int, extents: bool, offsets: np.ndarray, rel_lo: np.ndarray,
               rel_hi: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """`BC.kept_boxes` in one C pass (the spec's dozen NumPy calls cost ~40 us a batch), or None
    for what the helper leaves to the spec (signed zeros, NaN, a window of no extent)."""
    return helpers.bbox_remap(b, ndim, extents, offsets, np.ascontiguousarray(rel_lo, np.float64),
                              np.ascontiguousarray(rel_hi, np.float64), keep)


register_fast_function(BC.find_crops, find_crops)
register_fast_function(BC.kept_boxes, kept_boxes)
