"""resize, crop, flip, random_resized_crop: per-sample arguments, dtypes, determinism, errors.

Numbers checked against DALI live in the test_ref_*.py files (tables from tests/reference)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from torch_dali import ArgumentError, ArgumentTypeError, GraphError, PipelineError, fn, pipeline_def, types
from torch_dali.functional import crop as C
from torch_dali.functional.resize import output_size, resize

from feeds import image_feed

feed, _FEED = image_feed("_test_images_geometry")


def run(images: list[torch.Tensor], graph, num_threads: int = 1, seed: int = 7, batch_size: int | None = None):
    _FEED[:] = images

    @pipeline_def(batch_size=batch_size or len(images), num_threads=num_threads, device_id=None, seed=seed)
    def pipe():
        return graph(feed())

    p = pipe()
    p.build()
    return p.run()


def pattern(h: int, w: int) -> torch.Tensor:
    y, x = np.mgrid[0:h, 0:w]
    return torch.from_numpy(((x * 37 + y * 91 + x * y * 13) % 256).astype(np.uint8)[:, :, None])


# -- resize: output sizes ----------------------------------------------------------------------------

def test_resize_op_output_sizes_and_per_sample_shorter():
    imgs = [torch.zeros(h, w, 3, dtype=torch.uint8) for h, w in [(48, 64), (64, 40), (30, 30)]]

    def graph(x):
        s = fn.random.uniform(range=(20, 60))
        return fn.resize(x, resize_shorter=s), s

    out, sizes = run(imgs, graph)
    for i, img in enumerate(imgs):
        s = float(sizes.at(i))
        h, w = out.at(i).shape[:2]
        assert (h, w) == output_size(img.shape[0], img.shape[1], resize_shorter=s)
        assert min(h, w) == math.floor(s + 0.5)
    assert out.layout() == "HWC"


def test_resize_legacy_class_with_call_time_size():
    from torch_dali import ops
    rs = ops.Resize(image_type=types.RGB, interp_type=types.INTERP_LINEAR)
    out, = run([torch.zeros(40, 60, 3, dtype=torch.uint8)],
               lambda x: (rs(x, resize_shorter=fn.random.uniform(range=(10.0, 10.4))),))
    assert out.at(0).shape == (10, 15, 3)


# -- resize: pixels ----------------------------------------------------------------------------------

def test_float_input_matches_uint8_input():
    img = torch.randint(0, 256, (33, 41, 3), generator=torch.Generator().manual_seed(1), dtype=torch.uint8)
    for interp in ("linear", "cubic", "nn", "gaussian"):
        a = resize(img, (17, 29), interp, True)
        b = resize(img.float(), (17, 29), interp, True, dtype=torch.uint8)
        assert torch.equal(a, b), interp


def test_roi_is_the_window_with_taps_beyond_it():
    """resize(roi=window) reads past the window where the image has pixels (as DALI's region of
    interest); a window at the image corner repeats the edge like a plain crop + resize."""
    img = torch.randint(0, 256, (30, 40, 3), generator=torch.Generator().manual_seed(2), dtype=torch.uint8)
    corner = resize(img, (24, 20), "linear", roi=(0, 0, 12, 10))
    assert torch.equal(corner[:-3, :-3], resize(img[:12, :10], (24, 20), "linear")[:-3, :-3])
    inner = resize(img, (24, 20), "linear", roi=(5, 6, 12, 10))
    cropped = resize(img[5:17, 6:16], (24, 20), "linear")
    assert torch.equal(inner[4:-4, 4:-4], cropped[4:-4, 4:-4])
    assert not torch.equal(inner[0], cropped[0])  # the first row's taps read row 4 of the image


def test_resize_dtype_filters_and_flip():
    img = pattern(12, 16)
    f = resize(img, (5, 7), "linear", True, dtype=torch.float32)
    assert f.dtype == torch.float32 and (f - resize(img, (5, 7)).float()).abs().max() <= 1.0
    for interp in ("cubic", "lanczos3", "triangular", "gaussian", "nn"):
        assert resize(img, (20, 9), interp).shape == (20, 9, 1)
    mixed = resize(img, (20, 9), "linear", min_filter="nn", mag_filter="cubic")
    assert mixed.shape == (20, 9, 1)
    out, = run([img], lambda x: (fn.resize(x, resize_x=-16, resize_y=12),))
    assert np.array_equal(out.at(0), img.flip(1).numpy())


@pytest.mark.parametrize("kwargs,msg", [
    (dict(), "exactly one"),
    (dict(resize_shorter=5, resize_x=3), "exactly one"),
    (dict(size=(5, 5), resize_longer=3), "exactly one"),
    (dict(resize_shorter=5, mode="stretch"), "mode"),
    (dict(resize_x=5, mode="bigger"), "mode"),
    (dict(resize_shorter=-5), "resize_shorter"),
    (dict(resize_x=5, interp_type="bogus"), "interp_type"),
])
def test_resize_argument_errors(kwargs, msg):
    with pytest.raises((ArgumentError, ArgumentTypeError, GraphError), match=msg):
        run([pattern(4, 4)], lambda x: (fn.resize(x, **kwargs),))


# -- crop --------------------------------------------------------------------------------------------

def coords(h: int, w: int) -> torch.Tensor:
    y, x = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    return torch.stack([y, x], -1).to(torch.uint8)


def test_crop_per_sample_position_and_dtype():
    def graph(x):
        px = fn.random.uniform(range=(0.0, 1.0))
        return fn.crop(x, crop=(3, 4), crop_pos_x=px, dtype=types.FLOAT), px

    out, px = run([coords(10, 13)] * 4, graph)
    for i in range(4):
        a = out.at(i)
        assert a.dtype == np.float32
        assert a[0, 0, 1] == C.round_half_away(C.f32(float(px.at(i))) * 9)


@pytest.mark.parametrize("kwargs,err,msg", [
    (dict(crop=(12, 5)), PipelineError, "out_of_bounds_policy"),
    (dict(crop=(4, 4), crop_pos_x=1.5), ArgumentError, "crop_pos_x"),
    (dict(crop_h=4), ArgumentError, "crop_w"),
    (dict(crop=(4,)), ArgumentError, "crop"),
    (dict(crop=(4, 4), out_of_bounds_policy="symmetric"), TypeError, "out_of_bounds_policy"),
])
def test_crop_errors(kwargs, err, msg):
    with pytest.raises(err, match=msg):
        run([coords(10, 13)], lambda x: (fn.crop(x, **kwargs),))


@pytest.mark.parametrize("op", [fn.crop, fn.crop_mirror_normalize])
def test_crop_h_or_w_of_zero_keeps_that_dimension_whole(op):
    """As DALI: both given, a 0 keeps that dimension (DALI's own CMN test passes crop_w=0 for
    a 1-pixel-wide image); one of them missing is still refused."""
    img = coords(10, 13)
    hwc = {"output_layout": "HWC"} if op is fn.crop_mirror_normalize else {}
    out, = run([img], lambda x: (op(x, crop_h=4, crop_w=0, **hwc),))
    a = np.asarray(out.at(0))
    assert a.shape == (4, 13, 2)
    assert np.array_equal(a, np.asarray(img)[3:7].astype(a.dtype))  # anchor 0.5 * (10 - 4)
    out, = run([img], lambda x: (op(x, crop_h=0, crop_w=0, **hwc),))
    assert np.asarray(out.at(0)).shape == (10, 13, 2)
    with pytest.raises(ArgumentError, match="together"):
        run([img], lambda x: (op(x, crop_h=4, crop_w=None),))


# -- flip --------------------------------------------------------------------------------------------

def test_flip_per_sample():
    img = coords(4, 5)

    def graph(x):
        h = fn.random.coin_flip()
        return fn.flip(x, horizontal=h), fn.flip(x, horizontal=0, vertical=1), h

    out, v, h = run([img] * 6, graph)
    for i in range(6):
        want = img.flip(1) if int(h.at(i)) else img
        assert np.array_equal(out.at(i), want.numpy())
        assert np.array_equal(v.at(i), img.flip(0).numpy())


# -- random_resized_crop -----------------------------------------------------------------------------

def test_random_resized_crop_shape_and_determinism():
    img = pattern(40, 60).expand(40, 60, 3).contiguous()
    g = lambda x: (fn.random_resized_crop(x, size=(24, 16)), fn.random_resized_crop(x, size=20))  # noqa: E731
    a = run([img] * 4, g, num_threads=1)
    b = run([img] * 4, g, num_threads=2)
    assert a[0].at(0).shape == (24, 16, 3) and a[1].at(0).shape == (20, 20, 3)  # size is (H, W)
    for i in range(4):
        assert np.array_equal(a[0].at(i), b[0].at(i))
    assert any(not np.array_equal(a[0].at(0), a[0].at(i)) for i in range(1, 4))


def test_random_resized_crop_argument_errors():
    with pytest.raises(ArgumentError, match="random_area"):
        run([pattern(8, 8)], lambda x: (fn.random_resized_crop(x, size=4, random_area=(0.9, 0.1)),))
    with pytest.raises(ArgumentError, match="size"):
        run([pattern(8, 8)], lambda x: (fn.random_resized_crop(x, size=(0, 4)),))
    with pytest.raises(ArgumentError, match="size"):
        run([pattern(8, 8)], lambda x: (fn.random_resized_crop(x),))


def test_batch_crop_windows_equal_the_per_sample_draws():
    """The one-call (C) windows of a batch are the Python per-sample windows, fallbacks included."""
    import random

    from torch_dali.rng import SampleRNG
    from torch_dali.functional import crop_window as CW
    from torch_dali.ops.fast import windows as FW
    from torch_dali._native import helpers
    rnd = random.Random(3)
    for _ in range(40):
        seed, it = rnd.randrange(2**31), rnd.randrange(10**6)
        sizes = [(rnd.randint(1, 900), rnd.randint(1, 900)) for _ in range(64)]
        area = (rnd.choice([0.01, 0.08, 0.9]), 1.0)
        ratio = sorted((rnd.choice([0.5, 0.75, 1.0]), rnd.choice([1.0, 4 / 3, 3.0])))
        attempts = rnd.choice([0, 1, 10])
        want = [CW.random_crop_window(SampleRNG(seed, it, i), h, w, area, ratio, attempts)
                for i, (h, w) in enumerate(sizes)]
        got = FW.random_crop_window_array(seed, it, sizes, area, ratio, attempts).tolist()
        assert [tuple(w) for w in got] == want
    assert helpers.CROP_WINDOWS.load() is not None, helpers.CROP_WINDOWS.reason  # the C path was the one compared


# DALI 2.4: a 1x7 line 1..7 cut 11 wide at the centre (fill 9), for each out_of_bounds_policy name
# crop and slice take (slice at anchor -2, 11 wide: the same window); crop_mirror_normalize takes
# only error / pad (const, constant, any case) / trim_to_shape
OOB_LINE = {"pad": [9, 9, 1, 2, 3, 4, 5, 6, 7, 9, 9], "const": [9, 9, 1, 2, 3, 4, 5, 6, 7, 9, 9],
            "CONSTANT": [9, 9, 1, 2, 3, 4, 5, 6, 7, 9, 9], "trim_to_shape": [1, 2, 3, 4, 5, 6, 7],
            "edge": [1, 1, 1, 2, 3, 4, 5, 6, 7, 7, 7], "clamp": [1, 1, 1, 2, 3, 4, 5, 6, 7, 7, 7],
            "reflect": [2, 1, 1, 2, 3, 4, 5, 6, 7, 7, 6], "1001": [2, 1, 1, 2, 3, 4, 5, 6, 7, 7, 6],
            "reflect1001": [2, 1, 1, 2, 3, 4, 5, 6, 7, 7, 6], "Reflect_101": [3, 2, 1, 2, 3, 4, 5, 6, 7, 6, 5],
            "101": [3, 2, 1, 2, 3, 4, 5, 6, 7, 6, 5], "wrap": [6, 7, 1, 2, 3, 4, 5, 6, 7, 1, 2]}


def _line_pipe(op, policy):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        t = types.Constant(np.arange(1, 8, dtype=np.uint8).reshape(1, 7, 1), layout="HWC")
        if op == "crop":
            return fn.crop(t, crop_w=11, crop_h=1, out_of_bounds_policy=policy, fill_values=9)
        if op == "slice":
            return fn.slice(t, [-2], [11], axes=[1], out_of_bounds_policy=policy, fill_values=9)
        return fn.crop_mirror_normalize(t, crop_w=11, crop_h=1, out_of_bounds_policy=policy, fill_values=9,
                                        dtype=types.UINT8, mean=0.0, std=1.0, output_layout="HWC")
    p = pipe()
    p.build()
    return np.asarray(p.run()[0][0]).ravel().tolist()


@pytest.mark.parametrize("policy", list(OOB_LINE))
def test_out_of_bounds_policy_names_as_dali(policy):
    assert _line_pipe("crop", policy) == OOB_LINE[policy]
    assert _line_pipe("slice", policy) == OOB_LINE[policy]
    if policy in ("pad", "const", "CONSTANT", "trim_to_shape"):
        assert _line_pipe("cmn", policy) == OOB_LINE[policy]
    else:  # DALI 2.4's crop_mirror_normalize refuses the border policies
        with pytest.raises((ArgumentError, PipelineError), match="out_of_bounds_policy"):
            _line_pipe("cmn", policy)


@pytest.mark.parametrize("policy", ["symmetric", "border", "Error", "TRIM_TO_SHAPE"])
def test_out_of_bounds_policy_names_dali_refuses(policy):
    for op in ("crop", "slice"):
        with pytest.raises((TypeError, ArgumentError, PipelineError), match="out_of_bounds_policy"):
            _line_pipe(op, policy)


@pytest.mark.parametrize("policy,want", [("reflect_101", [9, 5, 1, 5, 9, 13, 17, 21, 25, 29, 25, 21]),
                                         ("wrap", [25, 29, 1, 5, 9, 13, 17, 21, 25, 29, 1, 5])])
def test_crop_border_policy_along_depth(policy, want):
    """DALI 2.4: an 8-deep DHWC volume cut 12 deep at the centre (first pixel of each slice)."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        vol = types.Constant(np.arange(1, 33, dtype=np.uint8).reshape(8, 2, 2, 1), layout="DHWC")
        return fn.crop(vol, crop_d=12, crop_h=2, crop_w=2, out_of_bounds_policy=policy)

    p = pipe()
    p.build()
    assert np.asarray(p.run()[0][0])[:, 0, 0, 0].tolist() == want


# DALI 2.4: resize of an empty sample gives an empty one, the planned extents but 0 where the
# input's extent is 0 (test_resize's test_empty_input slices every second sample to nothing)
EMPTY_RESIZE = [((0, 0, 3), "HWC", dict(size=[30, 40], mode="not_larger"), (0, 0, 3)),
                ((0, 5, 3), "HWC", dict(size=[30, 40]), (0, 40, 3)),
                ((5, 0, 3), "HWC", dict(size=[30, 40], mode="not_smaller"), (30, 0, 3)),
                ((0, 7, 3), "HWC", dict(resize_shorter=10, max_size=20), (0, 10, 3)),
                ((0, 0, 3), "HWC", dict(size=[30, 40], dtype=types.FLOAT), (0, 0, 3)),
                ((3, 0, 5), "CHW", dict(size=[30, 40]), (3, 0, 40)),
                ((0, 0, 0, 1), "DHWC", dict(size=[20, 30, 40], mode="not_larger"), (0, 0, 0, 1)),
                ((0, 4, 4, 1), "DHWC", dict(size=[20, 30, 40]), (0, 30, 40, 1))]


@pytest.mark.parametrize("shape,layout,kw,want", EMPTY_RESIZE)
def test_resize_of_an_empty_sample(shape, layout, kw, want):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.resize(types.Constant(np.zeros(shape, np.uint8), layout=layout), **kw)

    p = pipe()
    p.build()
    out = np.asarray(p.run()[0][0])
    assert out.shape == want and out.dtype == (np.float32 if "dtype" in kw else np.uint8)
