"""The C helper cpu_image.c (CPU resize, random_resized_crop and crop_mirror_normalize,
`ops/fast/cpu_image.py`) gives the spec's bits: `functional.resize` with the linear / triangular
filter, regions of interest included, and `functional.normalize.crop_mirror_normalize`; whole
pipelines give the same batches with and without it."""
from __future__ import annotations

import random

import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali._native import build, helpers
from torch_dali.functional.normalize import crop_mirror_normalize
from torch_dali.functional.resize import resize
from torch_dali.ops import _dispatch
from torch_dali.ops.fast import cpu_image


def _need_helper() -> None:
    why = build.skip_reason(helpers.CPU_IMAGE)
    if why:
        pytest.skip(why)


def _case(rng: random.Random) -> tuple[torch.Tensor, tuple[int, int], tuple[float, ...] | None, bool, torch.dtype, str]:
    h, w, c = rng.randint(1, 60), rng.randint(1, 60), rng.choice([1, 2, 3, 4, 5])
    pad = rng.choice([0, 0, 3])  # strided rows: a crop of a wider image
    img = torch.randint(0, 256, (h, w + pad, c), dtype=torch.uint8, generator=torch.Generator().manual_seed(rng.randrange(1 << 30)))[:, :w]
    roi = None
    if rng.random() < 0.7:
        rh, rw = rng.randint(1, h), rng.randint(1, w)
        roi = (rng.randint(0, h - rh), rng.randint(0, w - rw), rh, rw)
    out = (rng.randint(1, 70), rng.randint(1, 70))
    if rng.random() < 0.1 and roi is not None:
        out = (roi[2], roi[3])  # same size: a pure crop on the filter's grid
    return img, out, roi, rng.random() < 0.8, rng.choice([torch.uint8, torch.float32]), rng.choice(["linear", "triangular"])


def test_helper_matches_the_spec_bit_for_bit() -> None:
    _need_helper()
    rng = random.Random(17)
    done = 0
    for _ in range(600):
        img, size, roi, aa, dtype, interp = _case(rng)
        want = resize(img, size, interp, aa, dtype=dtype, roi=roi)
        got = torch.full((size[0], size[1], img.shape[2]), 7, dtype=dtype)
        region = roi if roi is not None else (0, 0, img.shape[0], img.shape[1])
        if not helpers.resize_linear(img, region, got, aa):
            # only when neither axis filters (the whole image at its own size)
            assert tuple(region) == (0, 0, img.shape[0], img.shape[1]) and size == tuple(img.shape[:2])
            continue
        done += 1
        assert torch.equal(got, want), (tuple(img.shape), size, roi, aa, dtype, interp)
    assert done > 500


def test_helper_declines_what_it_does_not_take() -> None:
    _need_helper()
    img = torch.zeros(8, 8, 3, dtype=torch.uint8)
    assert not helpers.resize_linear(img.float(), (0, 0, 8, 8), torch.empty(4, 4, 3), True)  # float input
    assert not helpers.resize_linear(img, (0, 0, 8, 8), torch.empty(4, 4, 3, dtype=torch.float64), True)
    assert not helpers.resize_linear(img.permute(1, 0, 2), (0, 0, 8, 8), torch.empty(4, 4, 3, dtype=torch.uint8), True)
    assert not helpers.resize_linear(img, (0, 0, 0, 8), torch.empty(4, 4, 3, dtype=torch.uint8), True)  # empty roi
    out = torch.empty(4, 4, 3, dtype=torch.uint8)
    for roi in [(0, 0, 1e-50, 8), (0, 0, float("inf"), 8), (float("nan"), 0, 8, 8), (0, 3e38, 8, 3e38),
                (0, 0, 8, 1e30), (0, 0, -8, 8)]:  # zero in float32, not finite, millions of taps, backwards
        assert not helpers.resize_linear(img, roi, out, True), roi
        assert not helpers.resize_linear(img, roi, out, False), roi


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
        return a, b, c
    p = pipe()
    p.build()
    return p


@pytest.mark.parametrize("kind", ["rrc", "resize", "cmn"])
def test_pipelines_give_the_spec_batches(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _need_helper()
    calls = []
    for name in ("resize_linear", "crop_mirror_normalize"):  # count the helper's runs
        monkeypatch.setattr(helpers, name, lambda *a, run=getattr(helpers, name): calls.append(1) or run(*a))
    p = _pipe(kind)
    fast = [[t.clone() for t in tl] for _ in range(2) for tl in p.run()]
    p.shutdown()
    monkeypatch.setattr(helpers.CPU_IMAGE, "lib", None)  # as if it had not built: the spec runs
    monkeypatch.setattr(helpers.CPU_IMAGE, "tried", True)
    p = _pipe(kind)
    spec = [[t.clone() for t in tl] for _ in range(2) for tl in p.run()]
    p.shutdown()
    assert len(fast) == len(spec) and calls
    for a, b in zip(fast, spec):
        assert all(torch.equal(x, y) for x, y in zip(a, b))


def test_the_dispatch_picks_the_helper_only_for_the_linear_filter() -> None:
    _need_helper()

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def pipe():
        img, _ = fn._test_images()
        return (fn.random_resized_crop(img, size=8), fn.random_resized_crop(img, size=8, interp_type=types.INTERP_CUBIC),
                fn.resize(img, resize_x=8, resize_y=8, dtype=types.INT16))
    p = pipe()
    p.build()
    ops = [p.executor.plan.op(d.node) for d in p.graph.outputs]
    runners = [_dispatch.sample_runner(op) for op in ops]
    assert runners[0] != ops[0].run_sample  # linear: the helper
    assert runners[1] == ops[1].run_sample and runners[2] == ops[2].run_sample  # cubic, int16: the spec
    assert cpu_image.RandomResizedCropSample().supports(ops[0])
    p.shutdown()
