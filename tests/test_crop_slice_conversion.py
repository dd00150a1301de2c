"""crop's and slice's output types as DALI 2.4 converts them (values measured under DALI 2.4 with
these inputs; found by conformance/differential): floats to integers are truncated toward zero and
saturated (2.5 -> 2, 255.6 -> 255, -3.7 -> 0 for uint8), not rounded as crop_mirror_normalize does;
to float16 they saturate at 65504 instead of overflowing to inf; and a padded crop's fill value goes
straight to the output type (116.6 stays 116.6 in a float crop of a uint8 image; 300.7 is 44 as
uint8, C's static_cast), for image and volume (depth) padding alike."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import types

try:  # run from the repository root or from tests/
    from tests._one_op import run_one
except ImportError:
    from _one_op import run_one  # type: ignore[no-redef]

V = np.array([-3.7, -0.5, 0.5, 1.5, 2.5, 255.6, 300.2, -200.5, 70000.2], np.float32).reshape(1, 9, 1)
U8 = np.array([[[121], [131]], [[193], [243]]], np.uint8)
I16 = np.array([[[[-1758], [774]], [[16722], [29521]]]], np.int16)  # DHWC (1, 2, 2, 1)


CASES = [  # (input, layout, op, args, DALI 2.4's output)
    (V, "HWC", "crop", dict(crop=(1, 9), dtype=types.UINT8), [0, 0, 0, 1, 2, 255, 255, 0, 255]),
    (V, "HWC", "slice", dict(start=(0, 0), shape=(1, 9), axis_names="HW", dtype=types.UINT8),
     [0, 0, 0, 1, 2, 255, 255, 0, 255]),
    (V, "HWC", "crop", dict(crop=(1, 9), dtype=types.FLOAT16),
     [-3.69921875, -0.5, 0.5, 1.5, 2.5, 255.625, 300.25, -200.5, 65504.0]),
    (V, "HWC", "slice", dict(start=(0, 0), shape=(1, 9), axis_names="HW", dtype=types.FLOAT16),
     [-3.69921875, -0.5, 0.5, 1.5, 2.5, 255.625, 300.25, -200.5, 65504.0]),
    (V, "HWC", "crop", dict(crop=(2, 10), crop_pos_x=0.0, crop_pos_y=0.0, out_of_bounds_policy="pad",
                            fill_values=300.7, dtype=types.UINT8), [0, 0, 0, 1, 2, 255, 255, 0, 255] + [44] * 11),
    (U8, "HWC", "crop", dict(crop=(2, 3), crop_pos_x=0.0, out_of_bounds_policy="pad", fill_values=116.6,
                             dtype=types.FLOAT), [121, 131, 116.6, 193, 243, 116.6]),
    (U8, "HWC", "crop", dict(crop=(2, 3), crop_pos_x=0.0, out_of_bounds_policy="pad", fill_values=300.7,
                             dtype=types.FLOAT), [121, 131, 300.7, 193, 243, 300.7]),
    (np.ascontiguousarray(U8.transpose(2, 0, 1)), "CHW", "crop",
     dict(crop=(2, 3), crop_pos_x=0.0, out_of_bounds_policy="pad", fill_values=116.6, dtype=types.FLOAT),
     [121, 131, 116.6, 193, 243, 116.6]),
    (I16, "DHWC", "crop", dict(crop=(2, 2, 3), crop_pos_x=0.0, out_of_bounds_policy="pad",
                               fill_values=116.6, dtype=types.FLOAT),
     [116.6] * 6 + [-1758, 774, 116.6, 16722, 29521, 116.6]),
]


@pytest.mark.parametrize("x,layout,op,kw,want", CASES, ids=[f"{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_matches_dali(x, layout, op, kw, want):
    got = run_one(x, layout, op, **kw)
    want = np.array(want, dtype=got.dtype)
    np.testing.assert_array_equal(got.ravel(), want)
