"""Nearest-neighbour warps of integer images into float32 (`dtype=types.FLOAT`) fill with the
fill value as it is, as DALI 2.4 does (outputs measured under DALI 2.4 with these inputs; found by
conformance/differential, rotate:400004): 105.556 stays 105.556, -3.7 stays -3.7, where the fill
went through the input's type before (106, 0). Linear sampling blends the fill in the input's
type in DALI too (the corners of a 45-degree turn are 106), which is kept."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import types

try:  # run from the repository root or from tests/
    from tests._one_op import run_one
except ImportError:
    from _one_op import run_one  # type: ignore[no-redef]

ROW = np.array([10, 20, 30], np.uint8).reshape(1, 3, 1)
NN, LIN = types.INTERP_NN, types.INTERP_LINEAR


F = -3.7
CASES = [  # (input, layout, op, args, DALI 2.4's output)
    (ROW, "HWC", "warp_affine", dict(matrix=[1, 0, 1, 0, 1, 0], fill_value=105.556, interp_type=NN, dtype=types.FLOAT),
     [20, 30, 105.556]),
    (ROW, "HWC", "warp_affine", dict(matrix=[1, 0, 1, 0, 1, 0], fill_value=F, interp_type=NN, dtype=types.FLOAT),
     [20, 30, F]),
    (ROW.astype(np.int16), "HWC", "rotate", dict(angle=45.0, fill_value=F, interp_type=NN, dtype=types.FLOAT),
     [F, F, 30, F, 20, F, 10, F, F]),
    (ROW.reshape(1, 1, 3, 1), "DHWC", "rotate", dict(angle=45.0, axis=[0, 0, 1], fill_value=F, interp_type=NN,
                                                       dtype=types.FLOAT), [10, F, F, F, 20, F, F, F, 30]),
    (np.arange(10, 70, 10, dtype=np.uint8).reshape(2, 1, 3, 1), "FHWC", "rotate",
     dict(angle=90.0, size=[3, 3], fill_value=F, interp_type=NN, dtype=types.FLOAT),
     [F, 30, F, F, 20, F, F, 10, F, F, 60, F, F, 50, F, F, 40, F]),
    (ROW, "HWC", "rotate", dict(angle=45.0, fill_value=105.556, interp_type=LIN, dtype=types.FLOAT),
     [106, 82.8822, 61.4802, 78.7401, 20, 82.8823, 49.7645, 78.7401, 106]),
]


@pytest.mark.parametrize("x,layout,op,kw,want", CASES, ids=[f"{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_matches_dali(x, layout, op, kw, want):
    got = run_one(x, layout, op, **kw)
    np.testing.assert_allclose(got.ravel(), np.array(want, np.float32), rtol=0, atol=1e-4)
