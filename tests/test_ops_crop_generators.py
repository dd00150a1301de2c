"""roi_random_crop and random_crop_generator against DALI 2.4's CPU backend, as distributions
(DALI_DRAWS draws a case; tables in tests/reference/geometry_tables.npz, "live" runs DALI now):

- roi_random_crop: each coordinate is uniform over an integer range fixed by the ROI, the crop and
  the bounds; ours and DALI's must take exactly the same set of values (every value in the range
  is seen with 1500 draws over ranges of at most 41 values) and pass a KS test (D <= 0.1; with
  1500 draws a side that bound is exceeded with probability below 1e-5 when they agree);
- random_crop_generator: KS on the window's log aspect ratio, area fraction and relative position
  (as tests/test_ref_windows.py does for random_resized_crop);
- the argument errors DALI raises at run time are raised (their facts in our own words).
"""
from __future__ import annotations

import numpy as np
import pytest

from reference import geometry_cases as G
from reference.geometry_tables import SOURCES, check_refused, dali, ours

KS_BOUND = 0.1


def ks(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    return float(np.abs(np.searchsorted(a, grid, "right") / a.size - np.searchsorted(b, grid, "right") / b.size).max())


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", ["dist/roi_holds", "dist/roi_unbounded", "dist/roi_input"])
def test_roi_random_crop_distribution(name, source):
    want = np.stack(dali(source, name)[0])
    got = np.stack(ours(name)[0])
    assert got.dtype == want.dtype == np.int64 and got.shape == want.shape
    for d in range(want.shape[1]):
        assert set(got[:, d].tolist()) == set(want[:, d].tolist()), d
        if np.ptp(want[:, d]) > 0:
            assert ks(got[:, d], want[:, d]) <= KS_BOUND


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", ["dist/crop_generator", "dist/crop_generator_wide"])
def test_random_crop_generator_distribution(name, source):
    want, got = dali(source, name), ours(name)
    h, w = 200, 300
    stats = []
    for outs in (got, want):
        anchor, shape = np.stack(outs[0]).astype(np.float64), np.stack(outs[1]).astype(np.float64)
        assert outs[0][0].dtype == np.int32 and outs[1][0].dtype == np.int32
        assert (anchor >= 0).all() and (anchor + shape <= [h, w]).all() and (shape > 0).all()
        free = np.array([h, w]) - shape
        stats.append({"log_aspect": np.log(shape[:, 1] / shape[:, 0]), "area": shape.prod(1) / (h * w),
                      "rel_y": anchor[free[:, 0] > 0, 0] / free[free[:, 0] > 0, 0],
                      "rel_x": anchor[free[:, 1] > 0, 1] / free[free[:, 1] > 0, 1]})
    for k in stats[0]:
        if stats[0][k].size > 50 and stats[1][k].size > 50:
            assert ks(stats[0][k], stats[1][k]) <= KS_BOUND, k


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", [k for k in G.CASES if k.startswith(("roi_random_crop/", "random_crop_generator/"))])
def test_errors_as_dali(name, source):
    want = dali(source, name)
    assert isinstance(want, str)
    check_refused(name, want)
    if name in ROI_ERRORS:  # the facts of each refusal, in our words
        from torch_dali.errors import TorchDaliError
        with pytest.raises(TorchDaliError, match=ROI_ERRORS[name]):
            ours(name)


ROI_ERRORS = {
    "roi_random_crop/err_in_shape_and_input": r"`in_shape` was given and so was an input",
    "roi_random_crop/err_end_and_shape": r"exactly one of `roi_end` and `roi_shape` \(both were given\)",
    "roi_random_crop/err_negative_in_shape": r"input shape \[-4, 4\] has a negative extent",
    "roi_random_crop/err_negative_crop": r"`crop_shape` \[1, -1\] has a negative extent",
    "roi_random_crop/err_roi_out": r"ROI \(start \[-1, -1\], end \[0, 0\]\) reaches outside the input of shape \[4, 4\]",
    "roi_random_crop/err_crop_too_big": r"`crop_shape` \[5, 2\] is larger than the input of shape \[4, 4\]",
}


def test_same_seed_same_windows_and_crop_generator_matches_random_resized_crop():
    """Same seed -> same windows; random_crop_generator draws what random_resized_crop cuts."""
    import torch
    from torch_dali import fn, pipeline_def
    from torch_dali.rng import SampleRNG
    from torch_dali.functional.crop_window import random_crop_window

    def run():
        @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=77)
        def p():
            s = fn.external_source(source=lambda: [torch.tensor([50, 80, 3])] * 8, batch=True)
            return fn.random_crop_generator(s, seed=5), fn.roi_random_crop(crop_shape=[4, 4], roi_start=[0, 0],
                                                                           roi_shape=[20, 30], seed=6)
        pipe = p()
        pipe.build()
        return [[np.asarray(t.at(i)) for i in range(8)] for t in pipe.run()]
    a, b = run(), run()
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)
    for i in range(8):
        y0, x0, hh, ww = random_crop_window(SampleRNG(5, 0, i), 50, 80)
        assert a[0][i].tolist() == [y0, x0] and a[1][i].tolist() == [hh, ww]


def test_roi_random_crop_input_of_more_dimensions_than_crop_shape():
    """DALI 2.4 takes an input with more dimensions than crop_shape (an HWC image, a 2-D crop; DALI's
    checkpointing test_roi_random_crop does this) and crops its leading dimensions; torch_dali
    refused it. Measured on DALI 2.4 (input 80x120x3, ROI (0,0)-(30,30)): crop (10, 10) gave
    anchors in [0, 20] x [0, 20]; crop (70, 10) gave row 0 (the ROI lies inside the window) and
    columns in [0, 20]; crop (10,) one anchor in [0, 20]."""
    from torch_dali import fn, pipeline_def, types

    def anchors(crop):
        @pipeline_def(batch_size=64, num_threads=1, device_id=None, seed=3)
        def p():
            x = fn.random.uniform(shape=(80, 120, 3), dtype=types.UINT8)
            return fn.roi_random_crop(x, crop_shape=crop, roi_start=[0] * len(crop), roi_end=[30] * len(crop))
        pipe = p()
        pipe.build()
        (out,) = pipe.run()
        return np.stack([np.asarray(out.at(i)) for i in range(64)])

    a = anchors((10, 10))
    assert a.shape == (64, 2) and a.min() >= 0 and a.max() <= 20 and len(np.unique(a)) > 10
    a = anchors((70, 10))
    assert (a[:, 0] == 0).all() and a[:, 1].min() >= 0 and a[:, 1].max() <= 20
    a = anchors((10,))
    assert a.shape == (64, 1) and a.min() >= 0 and a.max() <= 20
