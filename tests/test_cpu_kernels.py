"""The C helpers cpu_image.c and cpu_resize.c (CPU crop_mirror_normalize, resize and
random_resized_crop, `ops/fast/cpu_image.py`) give the spec's bits:
`functional.normalize.crop_mirror_normalize` here (resize: test_cpu_resize.py); whole pipelines
of the linear resize and crop_mirror_normalize give the same batches with and without them."""
from __future__ import annotations

import random

import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali._native import build, helpers
from torch_dali.functional.normalize import crop_mirror_normalize


def _need_helper() -> None:
    why = build.skip_reason(helpers.CPU_IMAGE) or build.skip_reason(helpers.CPU_RESIZE)
    if why:
        pytest.skip(why)


def test_crop_mirror_normalize_matches_the_spec_bit_for_bit() -> None:
    _need_helper()
    rng = random.Random(3)
    for _ in range(300):
        h, w, c = rng.randint(1, 40), rng.randint(1, 40), rng.choice([1, 2, 3, 4])
        img = torch.randint(0, 256, (h, w + rng.choice([0, 2]), c), dtype=torch.uint8)[:, :w]
        wh, ww = rng.randint(1, h), rng.randint(1, w)
        win = (rng.randint(0, h - wh), rng.randint(0, w - ww), wh, ww)
        mean = torch.tensor([rng.uniform(-300, 300) for _ in range(c)], dtype=torch.float32)
        std = torch.tensor([rng.uniform(0.01, 90) for _ in range(c)], dtype=torch.float32)
        mirror, layout = rng.random() < 0.5, rng.choice(["CHW", "HWC"])
        want = crop_mirror_normalize(img, win, mirror, mean, std, layout=layout)
        got = torch.empty(want.shape)
        assert helpers.crop_mirror_normalize(img, win, mirror, mean, torch.reciprocal(std), got, layout == "CHW")
        assert torch.equal(got, want), (tuple(img.shape), win, mirror, layout)
    img = torch.zeros(8, 8, 3, dtype=torch.uint8)
    one = torch.ones(3)
    assert not helpers.crop_mirror_normalize(img, (4, 0, 5, 8), False, one, one, torch.empty(3, 5, 8), True)  # leaves it
    assert not helpers.crop_mirror_normalize(img, (0, 0, 5, 8), False, one, one, torch.empty(5, 8, 3), True)  # wrong shape


def _pipe(kind: str):
    @pipeline_def(batch_size=6, num_threads=2, device_id=None, seed=5)
    def pipe():
        img, _ = fn._test_images()  # conftest's source: uint8 HWC images of varying sizes
        if kind == "rrc":
            a = fn.random_resized_crop(img, size=(60, 80))
            b = fn.random_resized_crop(img, size=[33, 47], dtype=types.FLOAT, antialias=False,
                                       interp_type=types.INTERP_TRIANGULAR)
            return a, b
        if kind == "resize":
            a = fn.resize(img, resize_shorter=fn.random.uniform(range=[20, 90]))
            b = fn.resize(img, size=(40, 0), dtype=types.FLOAT)
            c = fn.crop_mirror_normalize(fn.resize(img, resize_x=50, resize_y=30), mirror=fn.random.coin_flip())
            return a, b, c
        a = fn.crop_mirror_normalize(img, crop=(10, 12), crop_pos_x=fn.random.uniform(range=[0, 1]),
                                     mirror=fn.random.coin_flip(), mean=[12.5, 100, 3], std=[3, 0.7, 60])
        b = fn.crop_mirror_normalize(img, output_layout="HWC", mean=fn.random.uniform(range=[0, 255]),
                                     std=2.0, scale=1.7, shift=-3.25, mirror=1)
        c = fn.crop_mirror_normalize(img, crop=(30, 30), out_of_bounds_policy="pad")  # leaves some images
        if kind == "cmn16":  # FLOAT16: the C float32 values rounded by td_to_half, as the spec's to_half
            a = fn.crop_mirror_normalize(img, crop=(10, 12), dtype=types.FLOAT16, mirror=fn.random.coin_flip(),
                                         mean=[12.5, 100, 3], std=[3, 0.7, 60])
            b = fn.crop_mirror_normalize(img, output_layout="HWC", dtype=types.FLOAT16, std=1 / 3, scale=1 / 1024,
                                         mean=0.5)  # values at float16 ties and subnormals
        return a, b, c
    p = pipe()
    p.build()
    return p


@pytest.mark.parametrize("kind", ["rrc", "resize", "cmn", "cmn16"])
def test_pipelines_give_the_spec_batches(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _need_helper()
    calls = []
    for name in ("resize_roi", "resize_window", "crop_mirror_normalize", "to_half"):  # count the helpers' runs
        monkeypatch.setattr(helpers, name, lambda *a, run=getattr(helpers, name): calls.append(1) or run(*a))
    p = _pipe(kind)
    fast = [[t.clone() for t in tl] for _ in range(2) for tl in p.run()]
    p.shutdown()
    for lib in (helpers.CPU_IMAGE, helpers.CPU_RESIZE):  # as if they had not built: the spec runs
        monkeypatch.setattr(lib, "lib", None)
        monkeypatch.setattr(lib, "tried", True)
    p = _pipe(kind)
    spec = [[t.clone() for t in tl] for _ in range(2) for tl in p.run()]
    p.shutdown()
    assert len(fast) == len(spec) and calls
    for a, b in zip(fast, spec):
        assert all(torch.equal(x, y) for x, y in zip(a, b))
