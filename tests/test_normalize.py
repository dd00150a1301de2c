"""crop_mirror_normalize: exact against NumPy float32, per-sample arguments, batched path, errors.

Outputs compared with DALI 2.4 itself (rounding, saturation, padding, pad_output): test_ref_ops.py."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import ArgumentError, PipelineError, fn, ops, pipeline_def, types
from torch_dali.functional.normalize import crop_mirror_normalize, crop_mirror_normalize_batch, per_channel

from feeds import image_feed

feed, _FEED = image_feed("_test_images_normalize")


def run(images, graph, num_threads: int = 1, seed: int = 3):
    _FEED[:] = images

    @pipeline_def(batch_size=len(images), num_threads=num_threads, device_id=None, seed=seed)
    def pipe():
        return graph(feed())

    p = pipe()
    p.build()
    return p.run()


def image(h: int = 20, w: int = 24, c: int = 3, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, 256, (h, w, c), generator=torch.Generator().manual_seed(seed), dtype=torch.uint8)


def numpy_cmn(img: np.ndarray, y: int, x: int, h: int, w: int, mirror: bool, mean, std,
              scale: float = 1.0, shift: float = 0.0, layout: str = "CHW") -> np.ndarray:
    a = img[y:y + h, x:x + w].astype(np.float32)
    if mirror:
        a = a[:, ::-1]
    inv = np.float32(1) / np.asarray(std, np.float32)  # DALI multiplies by the reciprocal
    out = (a - np.asarray(mean, np.float32)) * inv * np.float32(scale) + np.float32(shift)
    return np.ascontiguousarray(out.transpose(2, 0, 1) if layout == "CHW" else out)


@pytest.mark.parametrize("mean,std,scale,shift", [
    ([0.485 * 255, 0.456 * 255, 0.406 * 255], [0.229 * 255, 0.224 * 255, 0.225 * 255], 1.0, 0.0),
    ([128.0], [64.0], 1.0, 0.0),
    ([10.0, 20.0, 30.0], [3.0, 7.0, 11.0], 0.7, -1.25),
    ([0.0], [255.0], 1.0, 0.0),
])
@pytest.mark.parametrize("layout", ["CHW", "HWC"])
def test_exact_against_numpy(mean, std, scale, shift, layout):
    img = image()

    def graph(x):
        m = fn.random.coin_flip()
        px = fn.random.uniform(range=(0.0, 1.0))
        out = fn.crop_mirror_normalize(x, crop=(12, 16), crop_pos_x=px, crop_pos_y=0.25, mirror=m,
                                       mean=mean, std=std, scale=scale, shift=shift, output_layout=layout)
        return out, m, px

    out, mirror, px = run([img] * 6, graph)
    assert out.layout() == layout
    flips = set()
    for i in range(6):
        x0 = int(np.floor(np.float32(float(px.at(i))) * 8 + 0.5))
        want = numpy_cmn(img.numpy(), 2, x0, 12, 16, bool(mirror.at(i)), mean, std, scale, shift, layout)
        got = out.at(i)
        assert got.dtype == np.float32 and np.array_equal(got, want)
        flips.add(int(mirror.at(i)))
    assert flips == {0, 1}


def test_defaults_whole_image_float_chw_and_legacy_names():
    img = image(5, 7)
    cmn = ops.CropMirrorNormalize(std=255.0, mean=0.0)
    out, legacy = run([img], lambda x: (fn.crop_mirror_normalize(x), cmn(x)))
    assert out.layout() == "CHW" and out.at(0).shape == (3, 5, 7) and out.at(0).dtype == np.float32
    assert np.array_equal(out.at(0), img.permute(2, 0, 1).float().numpy())
    assert np.array_equal(legacy.at(0), (img.permute(2, 0, 1).float() * np.float32(1 / 255.0)).numpy())
    out, = run([img], lambda x: (fn.crop_mirror_normalize(x, output_dtype=types.FLOAT16),))
    assert out.at(0).dtype == np.float16


def test_batched_function_equals_per_sample():
    imgs = torch.stack([image(10, 12, seed=s) for s in range(4)])
    anchors = torch.tensor([[0, 0], [2, 3], [-1, 4], [4, -2]])
    mirror = torch.tensor([False, True, True, False])
    mean = per_channel([1.0, 2.0, 3.0], 3, "mean", torch.device("cpu"))
    std = per_channel([2.0], 3, "std", torch.device("cpu"))
    for layout, dtype in (("CHW", torch.float32), ("HWC", torch.float16), ("CHW", torch.uint8)):
        batch = crop_mirror_normalize_batch(imgs, anchors, (6, 8), mirror, mean, std, 1.5, 0.25, dtype,
                                            layout, True, [5.0])
        for i in range(4):
            one = crop_mirror_normalize(imgs[i], (int(anchors[i, 0]), int(anchors[i, 1]), 6, 8),
                                        bool(mirror[i]), mean, std, 1.5, 0.25, dtype, layout, True, [5.0])
            assert batch.dtype == dtype and torch.equal(batch[i], one)


def test_same_output_with_one_and_two_threads():
    imgs = [image(16, 20, seed=s) for s in range(5)]

    def graph(x):
        return (fn.crop_mirror_normalize(x, crop=(8, 8), mirror=fn.random.coin_flip(),
                                         crop_pos_x=fn.random.uniform(range=(0.0, 1.0)), mean=[100.0]),)

    a, = run(imgs, graph, num_threads=1)
    b, = run(imgs, graph, num_threads=2)
    assert all(np.array_equal(a.at(i), b.at(i)) for i in range(5))


@pytest.mark.parametrize("kwargs,err,msg", [
    (dict(mean=[1.0, 2.0]), PipelineError, "mean"),
    (dict(std=[1.0, 2.0, 3.0, 4.0]), PipelineError, "std"),
    (dict(output_layout="CHX"), ArgumentError, "output_layout"),  # CWH is fine: a permutation of HWC (DALI)
    (dict(crop=(30, 4)), PipelineError, "out_of_bounds_policy"),
    (dict(crop=(4, 4), crop_pos_y=-0.1), ArgumentError, "crop_pos_y"),
    (dict(dtype="not-a-type"), ArgumentError, "dtype"),  # a ValueError, as DALI 2.4 (its int("not-a-type"))
    (dict(crop_w=4), ArgumentError, "crop_h"),
])
def test_argument_errors(kwargs, err, msg):
    with pytest.raises(err, match=msg):
        run([image(8, 8)], lambda x: (fn.crop_mirror_normalize(x, **kwargs),))
