"""random_resized_crop / decoders.image_random_crop windows against DALI 2.4's, as distributions.

DALI's windows (tests/reference/dali_tables.npz) were read back from coordinate images, so they are
what DALI really cut. Ours are drawn three ways (the Python function the CPU ops use, the C batch
function the CUDA paths use, and the op itself, read back from a coordinate image like DALI's) and
compared with two-sample Kolmogorov-Smirnov statistics on the aspect ratio, the area fraction and
the relative position. With 1500 draws a side, D above 0.1 has probability below 1e-5 if the
distributions agree (measured: D <= 0.062); a window drawn with h/w for w/h gives D ~ 1.
"""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.rng import SampleRNG
from torch_dali.functional import crop_window as CW
from torch_dali.ops.fast import windows as FW
from torch_dali._native import helpers

from reference import cases as C
from reference import numpy_resize as NR
from reference.tables import SOURCES, expected, stored

KS_BOUND = 0.1


def ks(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov statistic (max distance between the empirical CDFs)."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    return float(np.abs(np.searchsorted(a, grid, "right") / a.size - np.searchsorted(b, grid, "right") / b.size).max())


def stats(win: np.ndarray, h: int, w: int) -> dict[str, np.ndarray]:
    y, x, wh, ww = (win[:, k].astype(np.float64) for k in range(4))
    free_y, free_x = h - wh, w - ww
    return {"log_aspect": np.log(ww / wh), "area": wh * ww / (h * w),
            "rel_y": y[free_y > 0] / free_y[free_y > 0], "rel_x": x[free_x > 0] / free_x[free_x > 0]}


def python_windows(name: str, seed: int = 5) -> np.ndarray:
    (h, w), area, ratio = C.WINDOW_CASES[name]
    return np.array([CW.random_crop_window(SampleRNG(seed, 0, i), h, w, area, ratio)
                     for i in range(C.WINDOW_DRAWS)])


def c_windows(name: str, seed: int = 5) -> np.ndarray:
    (h, w), area, ratio = C.WINDOW_CASES[name]
    assert helpers.CROP_WINDOWS.load() is not None, f"the C window helper did not build: {helpers.CROP_WINDOWS.reason}"
    return FW.random_crop_window_array(seed, 0, [(h, w)] * C.WINDOW_DRAWS, area, ratio)


def op_windows(name: str, n: int = 300, seed: int = 3) -> np.ndarray:
    """Windows the random_resized_crop op cut, read back from the coordinate probe (as DALI's)."""
    (h, w), area, ratio = C.WINDOW_CASES[name]
    probe = torch.from_numpy(C.window_probe(h, w))

    @pipeline_def(batch_size=n, num_threads=1, device_id=None, seed=seed)
    def pipe():
        x = fn.external_source(source=lambda: [probe] * n, layout="HWC")
        return fn.random_resized_crop(x, size=(16, 16), random_area=list(area), random_aspect_ratio=list(ratio),
                                      antialias=False, dtype=types.FLOAT)

    p = pipe()
    p.build()
    out, = p.run()
    return np.array([C.windows_from_probe(np.asarray(out.at(i))) for i in range(n)])


def assert_same_distribution(ours: np.ndarray, dali: np.ndarray, h: int, w: int, bound: float = KS_BOUND) -> None:
    so, sd = stats(ours, h, w), stats(dali, h, w)
    for k in so:
        if so[k].size > 50 and sd[k].size > 50:
            d = ks(so[k], sd[k])
            assert d <= bound, f"{k}: KS D = {d:.3f} > {bound}"


@pytest.mark.parametrize("draw", [python_windows, c_windows], ids=["python", "c"])
@pytest.mark.parametrize("name", sorted(C.WINDOW_CASES))
def test_window_distribution_matches_dali(name, draw):
    (h, w), _, _ = C.WINDOW_CASES[name]
    ours = draw(name)
    assert ((ours[:, :2] >= 0) & (ours[:, :2] + ours[:, 2:] <= [h, w])).all()
    assert_same_distribution(ours, stored()[f"windows/{name}"], h, w)


@pytest.mark.parametrize("name", ["wide_2_3", "tall_0.2_0.5", "edges_20x30"])
def test_op_windows_match_dali(name):
    (h, w), _, _ = C.WINDOW_CASES[name]
    assert_same_distribution(op_windows(name), stored()[f"windows/{name}"], h, w, bound=0.12)


def edge_hits(win: np.ndarray, h: int, w: int) -> np.ndarray:
    """How often windows touch the top, left, bottom and right edges."""
    return np.array([(win[:, 0] == 0).sum(), (win[:, 1] == 0).sum(),
                     (win[:, 0] + win[:, 2] == h).sum(), (win[:, 1] + win[:, 3] == w).sum()])


@pytest.mark.parametrize("draw", [python_windows, c_windows, op_windows], ids=["python", "c", "op"])
def test_windows_reach_every_edge_as_often_as_dali(draw):
    """Positions run over [0, size - window] inclusive: each edge is touched about as often as in
    DALI (a position drawn from [0, size - window) would never touch the bottom or right edge)."""
    (h, w), _, _ = C.WINDOW_CASES["edges_20x30"]
    ours = draw("edges_20x30")
    dali = stored()["windows/edges_20x30"]
    want = edge_hits(dali, h, w) / len(dali)
    got = edge_hits(ours, h, w) / len(ours)
    assert (want > 0.08).all()  # the reference itself reaches every edge
    assert (np.abs(got - want) <= 0.06).all(), (got, want)


def test_fallback_window_matches_dali():
    """Nothing fits a 400x40 image with area in [0.9, 1]: DALI falls back to the full width with the
    aspect ratio clamped into range, at a random height."""
    (h, w), area, ratio = C.WINDOW_CASES["fallback_400x40"]
    dali = stored()["windows/fallback_400x40"]
    ours = np.concatenate([python_windows("fallback_400x40")[:200], c_windows("fallback_400x40")[:200]])
    assert set(map(tuple, dali[:, 1:].tolist())) == set(map(tuple, ours[:, 1:].tolist())) == {(0, 53, 40)}
    assert ks(ours[:, 0] / (h - 53), dali[:, 0] / (h - 53)) <= 0.12


def test_decoder_windows_match_dali():
    """decoders.image_random_crop: the window cut from a coordinate PNG (rows in red, columns in
    green and blue) has DALI's distribution and reaches the image's edges."""
    from PIL import Image
    (h, w), area, ratio = C.DECODER_WINDOW_CASE
    yy, xx = np.mgrid[0:h, 0:w]
    buf = io.BytesIO()
    Image.fromarray(np.stack([yy, xx % 256, xx // 256], -1).astype(np.uint8)).save(buf, format="PNG")
    png = torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8)
    n = 500

    @pipeline_def(batch_size=n, num_threads=1, device_id=None, seed=8)
    def pipe():
        x = fn.external_source(source=lambda: [png] * n)
        return fn.decoders.image_random_crop(x, random_area=list(area), random_aspect_ratio=list(ratio))

    p = pipe()
    p.build()
    out, = p.run()
    ours = []
    for i in range(n):
        o = np.asarray(out.at(i)).astype(int)
        assert (o[:, :, 0] == o[0, 0, 0] + np.arange(o.shape[0])[:, None]).all()  # a real window, uncut
        ours.append((o[0, 0, 0], o[0, 0, 1] + 256 * o[0, 0, 2], o.shape[0], o.shape[1]))
    ours_a = np.array(ours)
    dali = stored()["windows/decoder"]
    assert_same_distribution(ours_a, dali, h, w, bound=0.12)
    assert (edge_hits(ours_a, h, w) > 0).all() and (edge_hits(dali, h, w) > 0).all()


# -- pixels: the output is the drawn window, resized ---------------------------------------------------------

def _rrc_pair(img: np.ndarray, n: int, size: tuple[int, int], seed: int = 21):
    """(our random_resized_crop of img, the windows it used, read back from the probe with the
    same seed, image size and op position)."""
    h, w = img.shape[:2]
    probe = torch.from_numpy(C.window_probe(h, w))

    def build(x_img, **kw):
        @pipeline_def(batch_size=n, num_threads=1, device_id=None, seed=seed)
        def pipe():
            x = fn.external_source(source=lambda: [x_img] * n, layout="HWC")
            return fn.random_resized_crop(x, size=size, random_area=[0.1, 0.7], random_aspect_ratio=[0.5, 2.0], **kw)
        p = pipe()
        p.build()
        out, = p.run()
        return [np.asarray(out.at(i)) for i in range(n)]

    pixels = build(torch.from_numpy(img))
    probes = build(probe, antialias=False, dtype=types.FLOAT)
    return pixels, [C.windows_from_probe(o) for o in probes]


def test_rrc_pixels_are_the_window_resized():
    """Every output is the drawn window resized by an independent NumPy resampler (the window cut
    out first, or, as DALI does, with the filter reading past it): within 1 on at most 1% of values."""
    img = C.noise(60, 80, 3, seed=11)
    outs, wins = _rrc_pair(img, 24, (32, 24))
    for out, (y, x, h, w) in zip(outs, wins):
        cut = NR.resize_linear(np.ascontiguousarray(img[y:y + h, x:x + w]), (32, 24))
        roi = NR.resize_linear(img, (32, 24), window=(y, x, h, w))
        d = min((np.abs(out.astype(int) - ref.astype(int)) for ref in (cut, roi)), key=lambda e: int(e.sum()))
        assert d.max() <= 1 and (d > 0).mean() <= 0.01


def test_rrc_pixels_read_past_the_window_as_dali():
    img = C.noise(60, 80, 3, seed=11)
    outs, wins = _rrc_pair(img, 24, (32, 24))
    for out, win in zip(outs, wins):
        d = np.abs(out.astype(int) - NR.resize_linear(img, (32, 24), window=win).astype(int))
        assert d.max() <= 1 and (d > 0).mean() <= 0.01


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", ["linear_aa_down", "linear_aa_up", "linear_roi_0", "linear_roi_1",
                                  "triangular_aa_down", "linear_noaa_down_h_up_w"])
def test_numpy_reference_resampler_matches_dali(name, source):
    """The NumPy resampler above is itself held to DALI."""
    case = C.RESIZE_CASES[name]
    want = expected(source, f"resize/{name}", lambda d: d.resize(case))
    got = NR.resize_linear(C.RESIZE_IMG, case["size"], case.get("roi"), case["antialias"])
    d = np.abs(got.astype(int) - want.astype(int))
    assert d.max() <= 1 and (d > 0).mean() <= 0.01


def test_array_fallback_equals_the_per_sample_windows(monkeypatch):
    """Without the C helper, the batched draw (ops.fast.windows) falls back to the spec's, each
    window drawn in Python: the same windows as random_crop_window (and so as the C batch),
    fallbacks included."""
    (h, w), area, ratio = C.WINDOW_CASES["edges_20x30"]
    sizes = [(h, w), (400, 40), (7, 900), (300, 200)] * 50
    with_c = FW.random_crop_window_array(9, 4, sizes, area, ratio)
    monkeypatch.setattr(helpers.CROP_WINDOWS, "lib", None)
    monkeypatch.setattr(helpers.CROP_WINDOWS, "tried", True)
    fallback = FW.random_crop_window_array(9, 4, sizes, area, ratio)
    want = np.array([CW.random_crop_window(SampleRNG(9, 4, i), hh, ww, area, ratio) for i, (hh, ww) in enumerate(sizes)])
    assert fallback.dtype == np.int64 and fallback.shape == (len(sizes), 4)
    np.testing.assert_array_equal(fallback, want)
    np.testing.assert_array_equal(with_c, want)
    assert CW.random_crop_window_array(9, 4, sizes[:3], area, ratio).tolist() == want[:3].tolist()
