"""rotate, warp_affine and experimental.warp_perspective against DALI 2.4's CPU backend (tests/reference/geometry_cases.py; tables
in geometry_tables.npz, "live" runs DALI now when it imports), plus their argument checks.

Output shapes, types and layouts are DALI's exactly. Values, measured on these cases:
- linear: integers within 1 of DALI's on at most 5% of values (float32 rounding in a different
  order), floats within 5e-6 of the input's range;
- nn: exact except where the source coordinate lies within 1e-4 of a pixel edge: DALI's CPU warp
  steps along a row by repeated float32 additions, we compute each point directly, so at such a tie
  either neighbour may be picked (checked pixel by pixel for the 2D cases, bounded at 6% of pixels
  elsewhere).
- warp_perspective (nn, linear, cubic; every border mode; every layout): uint8 DALI's bits exactly
  with the default pixel_origin="corner"; integers within 1 on at most 3% of values otherwise
  (measured: "center" 1 value in 1500, uint16 51 in 2139, int16 (weights in 1/32 steps, as DALI)
  2 in 216, inverse_map=False 1 in 2139); floats within 1e-4 relative (cubic sums in float32).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.errors import TorchDaliError

from reference import geometry_cases as G
from reference.geometry_tables import SOURCES, check_case

WARP_CASES = [k for k in G.CASES if k.split("/")[0] in ("rotate", "warp_affine", "warp_perspective")]


def _tie_mask(name: str, out_shape: tuple[int, ...]) -> np.ndarray | None:
    """Pixels whose source coordinate is within 1e-4 of a pixel edge, for the 2D cases whose
    mapping is simple to write down (float64, from DALI's documented formulas)."""
    case = G.CASES[name]
    img = case.inputs[0][0]
    if case.layouts[0] != "HWC" or case.arg_inputs or len(case.inputs) > 1:
        return None
    h, w = out_shape[:2]
    if case.op == "warp_affine" and case.kwargs.get("inverse_map", True):
        m = np.asarray(case.kwargs["matrix"], np.float64).reshape(2, 3)
    elif case.op == "rotate":
        a = math.radians(case.kwargs["angle"])
        t_in = np.array([[1, 0, img.shape[1] / 2], [0, 1, img.shape[0] / 2], [0, 0, 1]])
        r = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
        t_out = np.array([[1, 0, -w / 2], [0, 1, -h / 2], [0, 0, 1]])
        m = (t_in @ r @ t_out)[:2]
    else:
        return None
    y, x = np.mgrid[0:h, 0:w] + 0.5
    sx, sy = m[0, 0] * x + m[0, 1] * y + m[0, 2], m[1, 0] * x + m[1, 1] * y + m[1, 2]
    return G.is_tie(sx) | G.is_tie(sy)


def compare_warp(name: str, got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    if name.startswith("warp_perspective"):
        kw = G.CASES[name].kwargs
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
        elif got.dtype == np.uint8 and kw.get("pixel_origin", "corner") == "corner" and kw.get("inverse_map", True):
            np.testing.assert_array_equal(got, want)
        else:
            d = np.abs(got.astype(np.int64) - want.astype(np.int64))
            assert d.max() <= 1 and (d > 0).mean() <= 0.03, (d.max(), (d > 0).mean())
        return
    interp = G.CASES[name].kwargs.get("interp_type", "linear")
    if interp == "nn":
        bad = (got != want).reshape(*got.shape[:-1], -1).any(-1)
        ties = _tie_mask(name, got.shape)
        if ties is not None:
            assert not (bad & ~ties).any(), f"{(bad & ~ties).sum()} nn pixels differ away from a pixel edge"
        else:
            assert bad.mean() <= 0.06, bad.mean()
        return
    if got.dtype.kind == "f":  # a float32 step in the coordinate times the steepest input step
        span = float(np.ptp(G.CASES[name].inputs[0][0]))
        np.testing.assert_allclose(got, want, atol=5e-6 * span, rtol=1e-6)
    else:
        d = np.abs(got.astype(np.int64) - want.astype(np.int64))
        assert d.max() <= 1 and (d > 0).mean() <= 0.05, (d.max(), (d > 0).mean())


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", WARP_CASES)
def test_warp_matches_dali(name, source):
    check_case(name, source, lambda g, w: compare_warp(name, g, w))


def _perspective(**kw) -> np.ndarray:
    img = np.arange(6 * 7, dtype=np.float32).reshape(6, 7, 1) + 1

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        x = fn.external_source(source=lambda: [img], batch=True, layout="HWC")
        return fn.experimental.warp_perspective(x, **kw)

    pipe = p()
    pipe.build()
    return np.asarray(pipe.run()[0].at(0))


def test_warp_perspective_size_and_singular_matrix_as_dali():
    """DALI 2.4 (measured): one `size` value is both extents; an extent rounding to 0 gives 1; a
    singular matrix with inverse_map=False and a constant border gives the fill value everywhere."""
    eye = np.eye(3).flatten().tolist()
    assert _perspective(matrix=eye, size=5).shape == _perspective(matrix=eye, size=[5]).shape == (5, 5, 1)
    assert np.array_equal(_perspective(matrix=eye, size=[5]), _perspective(matrix=eye, size=[5, 5]))
    assert _perspective(matrix=eye, size=[0, 0]).tolist() == [[[1.0]]]
    assert _perspective(matrix=eye, size=[0, 4]).tolist() == [[[1.0], [2.0], [3.0], [4.0]]]
    flat = [1, 0, 0, 0, 0, 0, 0, 0, 1]
    out = _perspective(matrix=flat, inverse_map=False, fill_value=-1)
    assert out.shape == (6, 7, 1) and (out == -1).all()
    with pytest.raises(TorchDaliError, match="singular"):
        _perspective(matrix=flat, inverse_map=False, border_mode="reflect")
