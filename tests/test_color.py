"""brightness_contrast, hsv, color_twist: defaults, types, per-sample args, class API, errors.

Outputs compared with DALI 2.4 itself (stored tables, or live): test_ref_ops.py."""
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

def test_default_centres():
    assert K.half_range(torch.uint8) == 128 and K.half_range(torch.int16) == 16384
    assert K.half_range(torch.int32) == 2 ** 30 and K.half_range(torch.float32) == 0.5


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
                                 ops.BrightnessContrast(contrast=1.5)(x),
                                 fn.hsv(x, hue=30.0), fn.color_twist(x, contrast=0.6, brightness=1.2),
                                 fn.brightness_contrast(x, contrast=1.5)))
    for k in range(3):
        assert torch.equal(torch.from_numpy(np.asarray(outs[k].at(0))), torch.from_numpy(np.asarray(outs[k + 3].at(0))))
    assert not torch.equal(torch.from_numpy(np.asarray(outs[0].at(0))), IMG)


# -- errors -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op,kw,err,msg", [
    (fn.hsv, dict(hue="a lot"), ArgumentError, "hue"),  # a ValueError, as DALI 2.4 (float("a lot"))
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


def test_color_twist_image_type_changes_nothing_as_in_dali():
    """DALI 2.4 takes color_twist's input as RGB whatever `image_type` says (its CPU backend gave the
    same pixels for RGB, BGR, YCbCr, GRAY and ANY_DATA); so does torch_dali."""
    kw = dict(hue=40.0, saturation=1.3, brightness=1.1, contrast=0.9)
    base = one(IMG, fn.color_twist, **kw)
    assert not torch.equal(base, IMG)
    for t in (types.BGR, types.YCbCr, types.GRAY, types.ANY_DATA):
        assert torch.equal(one(IMG, fn.color_twist, image_type=t, **kw), base), t


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int16, torch.int32])
def test_color_twist_contrast_centre_is_128_for_every_integer_type(dtype):
    """DALI 2.4 (CPU, measured): color_twist(contrast=0) of any integer input gives 128 * brightness
    (brightness_contrast's centre is the type's half range instead: 16384 for int16); 0.5 for floats."""
    img = torch.full((2, 2, 3), 10, dtype=dtype)
    out = one(img, fn.color_twist, contrast=0.0, brightness=0.5, dtype=types.FLOAT)
    assert torch.equal(out, torch.full((2, 2, 3), 64.0))
    out = one(img.float() / 255, fn.color_twist, contrast=0.0, brightness=0.5)
    assert torch.allclose(out, torch.full((2, 2, 3), 0.25))
    if dtype == torch.int16:
        assert one(img, fn.brightness_contrast, contrast=0.0, dtype=types.FLOAT)[0, 0, 0] == 16384.0
