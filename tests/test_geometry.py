"""resize, crop, flip, random_resized_crop: DALI's size/anchor rules, pixel references, errors.

Expected values marked "DALI 2.4" were produced once with NVIDIA DALI 2.4's CPU backend."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torchvision.transforms.v2.functional as TVF

from torch_dali import ArgumentError, ArgumentTypeError, GraphError, PipelineError, fn, pipeline_def, types
from torch_dali.executor.rng import SampleRNG
from torch_dali.functional import crop as C
from torch_dali.functional.crop_window import random_crop_window
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

SHAPES = [(480, 640), (640, 480), (333, 500), (100, 100), (37, 91), (1, 5)]
# DALI 2.4: fn.resize output (H, W) for each of SHAPES.
SIZE_TABLE = [
    (dict(resize_shorter=256), [(256, 341), (341, 256), (256, 384), (256, 256), (256, 630), (256, 1280)]),
    (dict(resize_shorter=300.7), [(301, 401), (401, 301), (301, 452), (301, 301), (301, 740), (301, 1504)]),
    (dict(resize_longer=256), [(192, 256), (256, 192), (170, 256), (256, 256), (104, 256), (51, 256)]),
    (dict(resize_longer=100.5), [(75, 101), (101, 75), (67, 101), (101, 101), (41, 101), (20, 101)]),
    (dict(resize_x=200), [(150, 200), (267, 200), (133, 200), (200, 200), (81, 200), (40, 200)]),
    (dict(resize_y=200), [(200, 267), (200, 150), (200, 300), (200, 200), (200, 492), (200, 1000)]),
    (dict(resize_x=200, resize_y=100), [(100, 200)] * 6),
    (dict(resize_x=150.5), [(113, 151), (201, 151), (100, 151), (151, 151), (61, 151), (30, 151)]),
    (dict(size=(224, 224)), [(224, 224)] * 6),
    (dict(size=(100, 0)), [(100, 133), (100, 75), (100, 150), (100, 100), (100, 246), (100, 500)]),
    (dict(size=(0, 100)), [(75, 100), (133, 100), (67, 100), (100, 100), (41, 100), (20, 100)]),
    (dict(size=7), [(7, 7)] * 6),
    (dict(resize_shorter=256, max_size=300), [(225, 300), (300, 225), (200, 300), (256, 256), (122, 300), (60, 300)]),
    (dict(resize_shorter=256, max_size=(300, 280)),
     [(210, 280), (300, 225), (186, 280), (256, 256), (114, 280), (56, 280)]),
    (dict(resize_x=200, resize_y=100, mode="not_larger"),
     [(100, 133), (100, 75), (100, 150), (100, 100), (81, 200), (40, 200)]),
    (dict(resize_x=200, resize_y=100, mode="not_smaller"),
     [(150, 200), (267, 200), (133, 200), (200, 200), (100, 246), (100, 500)]),
    (dict(resize_x=200, resize_y=100, mode="stretch"), [(100, 200)] * 6),
    (dict(resize_x=200, mode="stretch"), [(480, 200), (640, 200), (333, 200), (100, 200), (37, 200), (1, 200)]),
    (dict(size=(100, 200), mode="not_larger"), [(100, 133), (100, 75), (100, 150), (100, 100), (81, 200), (40, 200)]),
    (dict(size=(100, 200), mode="not_smaller", max_size=150),
     [(113, 150), (150, 113), (100, 150), (150, 150), (61, 150), (30, 150)]),
    (dict(resize_x=200, max_size=250), [(150, 200), (250, 200), (133, 200), (200, 200), (81, 200), (40, 200)]),
    (dict(resize_longer=1000, max_size=700), [(525, 700), (700, 525), (466, 700), (700, 700), (285, 700), (140, 700)]),
    (dict(resize_y=50, mode="not_smaller"), [(50, 67), (50, 38), (50, 75), (50, 50), (50, 123), (50, 250)]),
    (dict(resize_shorter=2.5), [(3, 3), (3, 3), (3, 4), (3, 3), (3, 6), (3, 13)]),
    (dict(resize_x=0.4, resize_y=3), [(3, 1)] * 6),
]


@pytest.mark.parametrize("kwargs,expected", SIZE_TABLE, ids=[str(k) for k, _ in SIZE_TABLE])
def test_output_size_matches_dali(kwargs, expected):
    kw = dict(kwargs)
    if "size" in kw and isinstance(kw["size"], int):
        kw["size"] = [kw["size"]]
    got = [output_size(h, w, **kw) for h, w in SHAPES]
    assert got == expected


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

@pytest.mark.parametrize("size", [(25, 30), (131, 173), (131, 37), (50, 70)])
@pytest.mark.parametrize("antialias", [True, False])
def test_linear_matches_torchvision(size, antialias):
    img = torch.randint(0, 256, (60, 80, 3), generator=torch.Generator().manual_seed(0), dtype=torch.uint8)
    ref = TVF.resize(img.permute(2, 0, 1), list(size), antialias=antialias).permute(1, 2, 0)
    got = resize(img, size, "linear", antialias)
    assert got.dtype == torch.uint8 and got.shape == (*size, 3)
    assert (got.int() - ref.int()).abs().max() <= 1


def test_float_path_matches_uint8_path():
    img = torch.randint(0, 256, (33, 41, 3), generator=torch.Generator().manual_seed(1), dtype=torch.uint8)
    a = resize(img, (17, 29), "linear", True)  # torch's uint8 kernel
    b = resize(img.float(), (17, 29), "linear", True, dtype=torch.uint8)  # the float path (as on CUDA)
    assert (a.int() - b.int()).abs().max() <= 1


# DALI 2.4 fn.resize of pattern(12, 16) (pattern(6, 8) for "up"), one channel.
DALI_RESIZE = {
    "down_aa": [[95, 135, 142, 118, 104, 167, 78], [119, 148, 135, 132, 117, 153, 125],
                [118, 149, 146, 149, 136, 150, 174], [152, 133, 132, 133, 144, 132, 118],
                [146, 99, 120, 120, 128, 100, 110]],
    "down_noaa": [[93, 199, 125, 153, 80, 185, 34], [76, 227, 148, 81, 64, 166, 86],
                  [104, 178, 143, 162, 154, 146, 138], [149, 146, 138, 128, 118, 110, 108],
                  [115, 99, 161, 133, 88, 89, 151]],
    "up": [[0, 16, 38, 61, 84, 107, 130, 152, 175, 198, 221, 96, 3],
           [46, 64, 91, 117, 144, 171, 134, 97, 123, 150, 177, 130, 94],
           [106, 128, 159, 165, 182, 214, 139, 65, 97, 114, 120, 151, 173],
           [167, 193, 222, 128, 92, 129, 145, 161, 199, 162, 68, 98, 123],
           [99, 129, 167, 131, 129, 172, 151, 130, 172, 171, 135, 99, 74],
           [32, 65, 112, 134, 167, 215, 156, 93, 115, 151, 199, 125, 67],
           [93, 130, 175, 97, 77, 130, 162, 170, 92, 88, 141, 170, 189],
           [154, 140, 120, 100, 114, 173, 168, 148, 128, 108, 88, 142, 182],
           [199, 134, 49, 112, 174, 237, 172, 107, 170, 144, 49, 102, 145]],
    "nn_down": [[141, 241, 85, 235, 79, 179, 23], [93, 245, 141, 113, 9, 161, 57],
                [149, 123, 97, 186, 160, 134, 108], [101, 127, 153, 64, 90, 116, 142],
                [53, 131, 209, 198, 20, 98, 176]],
    "cubic_down": [[97, 138, 144, 119, 96, 180, 73], [125, 148, 133, 135, 116, 155, 125],
                   [113, 152, 148, 154, 130, 150, 181], [156, 135, 132, 131, 151, 135, 114],
                   [144, 95, 118, 115, 129, 95, 106]],
}
# (case, interp, antialias, max |diff|, mean |diff|) against DALI, measured (13 / 1.94, 1 / 0.31,
# 1 / 0.09, 0 / 0, 8 / 1.37) plus slack. Away from the border every case is within 1: antialiased
# downscaling differs only in how the filter treats pixels beyond the image edge.
DALI_BOUNDS = [
    ("down_aa", "linear", True, 16, 2.5),
    ("down_noaa", "linear", False, 1, 0.5),
    ("up", "linear", True, 1, 0.2),
    ("nn_down", "nn", True, 0, 0.0),
    ("cubic_down", "cubic", True, 10, 2.0),
]


@pytest.mark.parametrize("case,interp,aa,max_diff,mean_diff", DALI_BOUNDS)
def test_resize_close_to_dali(case, interp, aa, max_diff, mean_diff):
    src = pattern(12, 16) if case != "up" else pattern(6, 8)
    want = torch.tensor(DALI_RESIZE[case], dtype=torch.int32)
    got = resize(src, tuple(want.shape), interp, aa)[:, :, 0].int()
    diff = (got - want).abs().float()
    assert diff.max() <= max_diff and diff.mean() <= mean_diff, (diff.max(), diff.mean())
    assert diff[1:-1, 1:-1].max() <= 1


def test_nn_picks_dali_columns():
    # DALI 2.4: column j of a 60 -> 25 / 60 -> 111 NN resize reads floor((j + 0.5) * 60 / out)
    row = torch.arange(60, dtype=torch.int16).reshape(1, 60, 1)
    assert resize(row, (1, 25), "nn")[0, :12, 0].tolist() == [1, 3, 6, 8, 10, 13, 15, 18, 20, 22, 25, 27]
    out = resize(row, (1, 111), "nn")[0, :, 0]
    assert out[:14].tolist() == [0, 0, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6, 6, 7] and out[-1] == 59


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


# DALI 2.4 on a 10x13 image: (crop args, output shape, (y0, x0)).
CROP_TABLE = [
    (dict(crop=(4, 4)), (4, 4), (3, 5)),
    (dict(crop=(5, 6)), (5, 6), (3, 4)),
    (dict(crop=(4, 4), crop_pos_x=0.25, crop_pos_y=0.25), (4, 4), (2, 2)),
    (dict(crop=(4, 4), crop_pos_x=1.0, crop_pos_y=1.0), (4, 4), (6, 9)),
    (dict(crop=(4, 4), crop_pos_x=0.0, crop_pos_y=0.0), (4, 4), (0, 0)),
    (dict(crop_h=3, crop_w=5, crop_pos_x=0.3, crop_pos_y=0.7), (3, 5), (5, 2)),
    (dict(crop=(4.5, 4.4)), (4, 4), (3, 5)),
    (dict(crop=(4.6, 4.5)), (4, 4), (3, 5)),
    (dict(crop=(3, 3), crop_pos_x=1 / 6, crop_pos_y=1 / 14), (3, 3), (1, 2)),
    (dict(crop=(3, 3), crop_pos_x=0.05, crop_pos_y=0.5 / 7), (3, 3), (1, 1)),
    (dict(crop=(3, 3), crop_pos_x=0.15), (3, 3), (4, 2)),
    (dict(crop=(3, 4), crop_pos_x=0.0625, crop_pos_y=0.0714285), (3, 4), (0, 1)),
    (dict(crop=(12, 15), out_of_bounds_policy="trim_to_shape"), (10, 13), (0, 0)),
    (dict(), (10, 13), (0, 0)),
]


@pytest.mark.parametrize("kwargs,shape,origin", CROP_TABLE, ids=[str(k) for k, _, _ in CROP_TABLE])
def test_crop_window_matches_dali(kwargs, shape, origin):
    out, = run([coords(10, 13)], lambda x: (fn.crop(x, **kwargs),))
    a = out.at(0)
    assert a.shape[:2] == shape and (a[0, 0, 0], a[0, 0, 1]) == origin


def test_crop_pad_layout_matches_dali():
    img = torch.zeros(4, 5, 2, dtype=torch.uint8)
    img[:, :, 0] = torch.arange(4)[:, None] + 10
    img[:, :, 1] = torch.arange(5)[None, :] + 10
    out, = run([img], lambda x: (fn.crop(x, crop=(7, 6), out_of_bounds_policy="pad",
                                         crop_pos_x=0.3, crop_pos_y=0.25, fill_values=(1, 2)),))
    a = out.at(0)
    # DALI 2.4: anchor (-1, 0): one fill row on top, two below, one fill column on the right.
    want0 = np.full((7, 6), 1)
    want0[1:5, :5] = np.arange(4)[:, None] + 10
    assert np.array_equal(a[:, :, 0], want0)
    assert (a[0, :, 1] == 2).all() and (a[1:5, 5, 1] == 2).all() and a[1, 0, 1] == 10
    out, = run([img], lambda x: (fn.crop(x, crop=(7, 8), out_of_bounds_policy="pad"),))
    assert out.at(0)[2, 2, 0] == 10 and out.at(0)[1, 1, 0] == 0  # DALI 2.4: anchor (-2, -2)


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
    (dict(crop=(4, 4), out_of_bounds_policy="wrap"), TypeError, "out_of_bounds_policy"),
])
def test_crop_errors(kwargs, err, msg):
    with pytest.raises(err, match=msg):
        run([coords(10, 13)], lambda x: (fn.crop(x, **kwargs),))


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


def test_random_crop_window_distribution_matches_dali():
    # DALI 2.4, 4000 windows on a 200x300 image with default area / aspect ranges: mean area
    # fraction 0.393, mean log(w/h) 0.030, std log(w/h) 0.164.
    h_img, w_img = 200, 300
    r = np.array([random_crop_window(SampleRNG(5, 0, i), h_img, w_img) for i in range(4000)], float)
    area = r[:, 2] * r[:, 3] / (h_img * w_img)
    log_ar = np.log(r[:, 3] / r[:, 2])
    assert abs(area.mean() - 0.393) < 0.02
    assert abs(log_ar.mean() - 0.030) < 0.015 and abs(log_ar.std() - 0.164) < 0.012
    assert ((r[:, :2] >= 0) & (r[:, :2] + r[:, 2:] <= [h_img, w_img])).all()


def test_random_crop_window_fallback_is_clamped_and_randomly_placed():
    # DALI 2.4: a 400x40 image with area in [0.9, 1] never fits; the fallback window is the full
    # width with aspect 3/4 (h = 53) at a random vertical position.
    wins = [random_crop_window(SampleRNG(1, 0, i), 400, 40, (0.9, 1.0)) for i in range(20)]
    assert all(w[1:] == (0, 53, 40) for w in wins)
    assert len({w[0] for w in wins}) > 5


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

    from torch_dali.executor.rng import SampleRNG
    from torch_dali.functional import crop_window as CW
    rnd = random.Random(3)
    for _ in range(40):
        seed, it = rnd.randrange(2**31), rnd.randrange(10**6)
        sizes = [(rnd.randint(1, 900), rnd.randint(1, 900)) for _ in range(64)]
        area = (rnd.choice([0.01, 0.08, 0.9]), 1.0)
        ratio = sorted((rnd.choice([0.5, 0.75, 1.0]), rnd.choice([1.0, 4 / 3, 3.0])))
        attempts = rnd.choice([0, 1, 10])
        want = [CW.random_crop_window(SampleRNG(seed, it, i), h, w, area, ratio, attempts)
                for i, (h, w) in enumerate(sizes)]
        assert CW.random_crop_windows(seed, it, sizes, area, ratio, attempts) == want
    assert CW._load() is not None  # the C path was the one compared (a compiler is present)
