"""brightness_contrast, hsv, color_twist: DALI's formulas, defaults, rounding, per-sample args, errors.

Values marked "DALI 2.4" were produced once with NVIDIA DALI 2.4's CPU backend. Measured against it on
40 random parameter sets (64x64 uint8, 16x16 float): brightness_contrast is exact (uint8, float, custom
and default center); hsv/color_twist uint8 differ by at most 1 on ~1e-5 of values (float32 ties), float
outputs by <= 1.2e-6."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import ArgumentError, ArgumentTypeError, PipelineError, fn, ops, pipeline_def, types
from torch_dali.functional import color as K

from feeds import image_feed

feed, _FEED = image_feed("_test_images_color")

RAMP = torch.arange(256, dtype=torch.uint8).reshape(16, 16, 1).expand(16, 16, 3).contiguous()
IMG = torch.tensor([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [128, 128, 128]],
                    [[200, 100, 50], [10, 20, 30], [255, 255, 0], [90, 180, 240]]], dtype=torch.uint8)


def run(images, graph, seed: int = 5):
    _FEED[:] = images

    @pipeline_def(batch_size=len(images), num_threads=1, device_id=None, seed=seed)
    def pipe():
        return graph(feed())

    p = pipe()
    p.build()
    return p.run()


def one(img, op, **kw):
    (out,) = run([img], lambda x: (op(x, **kw),))
    return torch.from_numpy(np.asarray(out.at(0)))


# -- brightness_contrast ------------------------------------------------------------------------------

I9 = [0, 1, 50, 100, 127, 128, 129, 200, 255]
I12 = [0, 1, 3, 5, 7, 50, 100, 127, 128, 129, 200, 255]
# DALI 2.4: fn.brightness_contrast on the 0..255 ramp, channel 0 at these indices.
BC_TABLE = [
    (dict(contrast=1.5), I9, [0, 0, 11, 86, 127, 128, 130, 236, 255]),   # center 128; 126.5 -> 127
    (dict(contrast=0.3), I9, [90, 90, 105, 120, 128, 128, 128, 150, 166]),  # 89.6 -> 90: center 128
    (dict(brightness=1.3, brightness_shift=0.1), I9, [26, 27, 91, 156, 191, 192, 193, 255, 255]),
    (dict(contrast=0.5, contrast_center=0.0), I12, [0, 1, 2, 3, 4, 25, 50, 64, 64, 65, 100, 128]),  # half away
    (dict(contrast=0.5, brightness=0.7, brightness_shift=-0.05, contrast_center=100.0), I12,
     [22, 23, 23, 24, 25, 40, 57, 67, 67, 67, 92, 112]),
    (dict(contrast=2.0, dtype=types.FLOAT), I9, [-128, -126, -28, 72, 126, 128, 130, 272, 382]),  # no clamp
    (dict(contrast=2.0, brightness_shift=0.1, dtype=types.FLOAT), I9,  # shift scaled by max(out) = 1
     [-127.9, -125.9, -27.9, 72.1, 126.1, 128.1, 130.1, 272.1, 382.1]),
    (dict(contrast=-1.0), [0, 1, 2, 3], [255, 255, 254, 253]),  # negative contrast is allowed
]


@pytest.mark.parametrize("kw,idx,want", BC_TABLE)
def test_brightness_contrast_dali_values(kw, idx, want):
    out = one(RAMP, fn.brightness_contrast, **kw)
    assert out.dtype == (torch.float32 if "dtype" in kw else torch.uint8)
    got = out[..., 0].flatten()[idx]
    assert torch.allclose(got.double(), torch.tensor(want, dtype=torch.float64), atol=1e-4)
    assert torch.equal(out[..., 0], out[..., 2])


def test_brightness_contrast_types():
    # DALI 2.4: int16 center is 16384, shift scales by 32767; float input -> uint8 adds shift * 255
    i16 = torch.tensor([[[-12000], [-11900], [-11800]]], dtype=torch.int16)
    assert K.brightness_contrast(i16, contrast=0.5)[0, :, 0].tolist() == [2192, 2242, 2292]
    assert K.brightness_contrast(i16, brightness_shift=0.01)[0, :, 0].tolist() == [-11672, -11572, -11472]
    f = RAMP.float() / 255
    out = one(f, fn.brightness_contrast, brightness_shift=0.1, dtype=types.UINT8)
    assert out.dtype == torch.uint8 and out.flatten()[[0, 128, 765]].tolist() == [26, 26, 27]
    # float: center 0.5, shift in units of 1, no clamping (DALI 2.4: 0 -> -102/255)
    out = one(f, fn.brightness_contrast, contrast=2.0, brightness_shift=0.1)
    assert out.dtype == torch.float32 and abs(float(out[0, 0, 0]) * 255 + 102) < 1e-3
    assert K.half_range(torch.uint8) == 128 and K.half_range(torch.int32) == 2 ** 30


# -- hsv / color_twist: DALI 2.4 fixtures -------------------------------------------------------------

HSV_TABLE = [
    (dict(hue=30.0), [[[210, 52, 0], [0, 236, 153], [67, 0, 251], [128, 128, 128]],
                      [[169, 127, 0], [14, 17, 36], [188, 255, 4], [122, 154, 255]]]),
    (dict(hue=-90.0, saturation=0.5), [[[98, 34, 236], [192, 154, 17], [0, 66, 3], [128, 128, 128]],
                                       [[145, 100, 192], [15, 21, 11], [255, 188, 253], [138, 183, 98]]]),
    (dict(saturation=1.8, value=0.8), [[[255, 0, 0], [0, 255, 0], [0, 0, 255], [102, 102, 102]],
                                       [[209, 65, 0], [3, 17, 32], [223, 223, 0], [27, 157, 243]]]),
    (dict(hue=200.0, saturation=1.3, value=1.1), [[[0, 145, 255], [255, 27, 236], [9, 107, 0], [141, 141, 142]],
                                                  [[55, 146, 255], [28, 20, 0], [255, 173, 255], [248, 172, 8]]]),
]
CT_TABLE = [
    (dict(brightness=1.2, contrast=0.6), [[[245, 61, 61], [61, 245, 61], [61, 61, 245], [154, 154, 154]],
                                          [[205, 133, 97], [69, 76, 83], [245, 245, 61], [126, 191, 234]]]),
    (dict(hue=45.0, saturation=1.5, contrast=1.4), [[[255, 67, 0], [0, 255, 255], [134, 0, 255], [128, 128, 128]],
                                                    [[173, 157, 0], [0, 0, 13], [120, 255, 0], [135, 133, 255]]]),
    (dict(brightness=0.7, contrast=2.0, hue=-120.0, saturation=0.2),
     [[[2, 7, 105], [161, 107, 77], [0, 0, 0], [90, 89, 90]],
      [[84, 76, 128], [0, 0, 0], [253, 204, 255], [133, 143, 94]]]),
]


@pytest.mark.parametrize("op,kw,want", [(fn.hsv, k, w) for k, w in HSV_TABLE]
                         + [(fn.color_twist, k, w) for k, w in CT_TABLE])
def test_matrix_ops_dali_values(op, kw, want):
    out = one(IMG, op, **kw)
    assert out.dtype == torch.uint8
    diff = (out.int() - torch.tensor(want)).abs()
    assert int(diff.max()) <= 1 and int((diff > 0).sum()) <= 1  # measured: exact here


def test_float_inputs_dali_values():
    f = IMG.float() / 255
    # DALI 2.4: hsv(hue=30, saturation=1.5, value=0.9, dtype=FLOAT), first row
    want = [[0.9751527905, 0.1412500292, -0.9244250059], [-0.3807833195, 0.9875853062, 0.5477337241],
            [0.3046560884, -0.2281135321, 1.2755303383], [0.4512755871, 0.4521270394, 0.4511819780]]
    out = one(f, fn.hsv, hue=30.0, saturation=1.5, value=0.9, dtype=types.FLOAT)
    assert out.dtype == torch.float32 and torch.allclose(out[0], torch.tensor(want), atol=2e-6)
    # DALI 2.4: color_twist keeps float, contrast about 0.5
    want = [[0.8760843873, 0.3369433880, 0.1725005209], [0.2709504664, 0.8925865889, 0.4143642783],
            [0.3527978659, 0.2705625594, 0.9130985141], [0.6010925174, 0.6012229323, 0.6011580228]]
    out = one(f, fn.color_twist, brightness=1.2, contrast=0.5, hue=10.0)
    assert out.dtype == torch.float32 and torch.allclose(out[0], torch.tensor(want), atol=2e-6)
    # DALI 2.4: hsv's output type defaults to UINT8 even for float input
    assert one(f, fn.hsv, hue=30.0).dtype == torch.uint8


# -- identity, per-sample args, class API -----------------------------------------------------------------

@pytest.mark.parametrize("img", [IMG, IMG.float() / 255])
def test_identity_parameters_return_the_input(img):
    outs = run([img], lambda x: (fn.brightness_contrast(x), fn.color_twist(x),
                                 fn.hsv(x, dtype=types.FLOAT if img.is_floating_point() else types.UINT8),
                                 fn.hsv(x, hue=360.0, dtype=types.FLOAT if img.is_floating_point() else types.UINT8)))
    for k, o in enumerate(outs):
        got = torch.from_numpy(np.asarray(o.at(0)))
        assert got.dtype == img.dtype
        if img.is_floating_point():
            assert torch.allclose(got, img, atol=1e-5), k
        else:
            assert torch.equal(got, img), k


def test_per_sample_args_from_random_uniform():
    img = torch.randint(0, 256, (6, 5, 3), generator=torch.Generator().manual_seed(1), dtype=torch.uint8)

    def graph(x):
        h = fn.random.uniform(range=(-60.0, 60.0))
        s = fn.random.uniform(range=(0.5, 1.5))
        b = fn.random.uniform(range=(0.7, 1.3))
        c = fn.random.uniform(range=(0.5, 1.5))
        return (fn.hsv(x, hue=h, saturation=s), fn.color_twist(x, hue=h, saturation=s, brightness=b, contrast=c),
                fn.brightness_contrast(x, brightness=b, contrast=c, contrast_center=s), h, s, b, c)

    hsv, ct, bc, h, s, b, c = run([img] * 4, graph)
    hs = set()
    for i in range(4):
        hi, si, bi, ci = (float(np.asarray(t.at(i))) for t in (h, s, b, c))
        hs.add(hi)
        assert torch.equal(torch.from_numpy(np.asarray(hsv.at(i))), K.hsv(img, hi, si))
        assert torch.equal(torch.from_numpy(np.asarray(ct.at(i))), K.color_twist(img, bi, ci, hi, si))
        assert torch.equal(torch.from_numpy(np.asarray(bc.at(i))), K.brightness_contrast(img, bi, 0.0, ci, si))
    assert len(hs) == 4


def test_legacy_class_names():
    outs = run([IMG], lambda x: (ops.Hsv(hue=30.0)(x), ops.ColorTwist(contrast=0.6, brightness=1.2)(x),
                                 ops.BrightnessContrast(contrast=1.5)(x)))
    assert torch.equal(torch.from_numpy(np.asarray(outs[0].at(0))), torch.tensor(HSV_TABLE[0][1], dtype=torch.uint8))
    assert torch.equal(torch.from_numpy(np.asarray(outs[1].at(0))), torch.tensor(CT_TABLE[0][1], dtype=torch.uint8))


# -- errors -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op,kw,err,msg", [
    (fn.hsv, dict(hue="a lot"), ArgumentTypeError, "hue"),
    (fn.hsv, dict(hues=3.0), ArgumentError, "unknown argument"),
    (fn.color_twist, dict(dtype=types.INT64), (ArgumentError, PipelineError), "dtype"),
    (fn.brightness_contrast, dict(dtype=types.FLOAT16), (ArgumentError, PipelineError), "dtype"),
])
def test_argument_errors(op, kw, err, msg):
    with pytest.raises(err, match=msg):
        one(IMG, op, **kw)


def test_dtype_cannot_be_per_sample():
    with pytest.raises(ArgumentTypeError, match="dtype"):
        run([IMG], lambda x: (fn.hsv(x, dtype=fn.random.uniform(range=(0.0, 1.0))),))


@pytest.mark.parametrize("img,op,msg", [
    (IMG[..., :2].contiguous(), fn.hsv, "3 channels"),
    (IMG[..., 0].contiguous(), fn.color_twist, "3 channels"),
    (IMG.to(torch.int8), fn.brightness_contrast, "input type"),
])
def test_input_errors(img, op, msg):
    with pytest.raises((ArgumentError, ArgumentTypeError, PipelineError), match=msg):
        one(img, op)
