"""random_bbox_crop's remap of the kept boxes in C (`td_bbox_remap` in `_native/csrc/cpu/bbox_crop.c`,
ops/fast/cpu_bbox.py) gives `functional.bbox_crop.kept_boxes`' arrays byte for byte: 2-D and 3-D
boxes, ends and extents, boxes partly and wholly outside their windows, inverted and empty boxes,
samples keeping none; signed zeros and windows of no extent are left to the spec."""
from __future__ import annotations

import numpy as np

from torch_dali._native import helpers
from torch_dali.functional import bbox_crop as BC
from torch_dali.ops.fast import cpu_bbox

try:
    from tests._stand_ins import need
except ImportError:
    from _stand_ins import need  # type: ignore[no-redef]


def _case(rs: np.random.RandomState, nd: int, extents: bool):
    counts = rs.randint(0, 12, rs.randint(1, 9))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    n = int(offsets[-1])
    lo = rs.uniform(0, 1, (n, nd)).astype(np.float32)
    hi = rs.uniform(0, 1, (n, nd)).astype(np.float32)  # some inverted
    if rs.randint(2):
        hi = np.round(hi * 4) / 4  # on the windows' edges
    b = np.concatenate([lo, hi - lo if extents else hi], 1).astype(np.float32)
    if extents:
        b[:, nd:] = np.abs(b[:, nd:])
    w_lo = rs.uniform(0, 0.5, (len(counts), nd))
    w_hi = w_lo + rs.uniform(0.01, 0.5, (len(counts), nd))
    keep = rs.uniform(size=n) < 0.7
    return b, offsets, w_lo, w_hi, keep


def _same(a: tuple, b: tuple) -> bool:
    return all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in zip(a, b))


def test_the_remap_matches_the_spec_byte_for_byte() -> None:
    need(helpers.BBOX_CROP)
    rs = np.random.RandomState(0)
    for trial in range(400):
        nd, extents = 2 + trial % 2, bool(trial // 2 % 2)
        b, offsets, w_lo, w_hi, keep = _case(rs, nd, extents)
        got = cpu_bbox.kept_boxes(b, nd, extents, offsets, w_lo, w_hi, keep)
        assert got is not None and _same(got, BC.kept_boxes(b, nd, extents, offsets, w_lo, w_hi, keep)), trial


def test_signed_zeros_and_flat_windows_are_left_to_the_spec() -> None:
    need(helpers.BBOX_CROP)
    b, offsets, w_lo, w_hi, keep = _case(np.random.RandomState(1), 2, False)
    keep[:] = True
    z = b.copy()
    z[0, 0] = -0.0
    assert cpu_bbox.kept_boxes(z, 2, False, offsets, w_lo, w_hi, keep) is None
    flat = w_hi.copy()
    flat[0] = w_lo[0]
    assert cpu_bbox.kept_boxes(b, 2, False, offsets, w_lo, flat, keep) is None
