"""The C helper's filter (ops/fast/cpu_filters.py) gives `functional.filters.filter_sample`'s
bits for every input and output type, border, fill, anchor, kernel shape (1x1 to wider than the
image in `valid` mode's limits) and layout (HW, HWC, CHW, FHWC); fn.experimental.filter gives
the same batches with and without it."""
from __future__ import annotations

import random

import numpy as np
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali._native import helpers
from torch_dali.functional import filters as K
from torch_dali.ops.fast import cpu_filters

try:
    from tests._stand_ins import need, same_with_and_without
except ImportError:
    from _stand_ins import need, same_with_and_without  # type: ignore[no-redef]


def _need_helper() -> None:
    need(helpers.CPU_IMAGE)


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(torch.int32).masked_fill(t.isnan(), 0x7FC00000)


_TYPES = (torch.uint8, torch.int8, torch.int16, torch.uint16, torch.int32, torch.float32)


def _sample(rng: random.Random, g: torch.Generator, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    if dtype == torch.float32:
        x = torch.randn(shape, generator=g) * rng.choice([1.0, 1e3, 1e30])
        if rng.random() < 0.3:  # NaN, infinities, negative zero
            x.view(-1)[torch.randint(0, x.numel(), (3,), generator=g)] = torch.tensor([float("nan"), float("inf"), -0.0])
        return x
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=g, dtype=torch.int64).to(dtype)


def test_filter_matches_the_spec_bit_for_bit() -> None:
    _need_helper()
    rng = random.Random(9)
    g = torch.Generator().manual_seed(9)
    for case in range(400):
        h, w, c = rng.randint(1, 30), rng.randint(1, 50), rng.choice([1, 3, 4])
        shape, axes = rng.choice([((h, w), [0, 1]), ((h, w, c), [0, 1]), ((c, h, w), [1, 2]),
                                  ((2, h, w, c), [1, 2])])
        dtype = rng.choice(_TYPES)
        x = _sample(rng, g, shape, dtype)
        valid = rng.random() < 0.2
        kh = rng.randint(1, h if valid else 9)
        kw = rng.randint(1, w if valid else 9)
        kernel = torch.randn((kh, kw), generator=g) * rng.choice([1.0, 1e-3, 100.0])
        anchor = [rng.randrange(kh), rng.randrange(kw)]
        border = rng.choice(K.BORDERS)
        fill = rng.choice([0.0, rng.uniform(-300, 300), torch.tensor(rng.uniform(-1e5, 1e5))])
        out = rng.choice([None, torch.float32])
        args = (x, axes, kernel, anchor, border, fill, valid, out)
        want = K.filter_sample(*args)
        got = cpu_filters.filter_sample(*args)
        assert got is not None and got.shape == want.shape and got.dtype == want.dtype, (case, shape, dtype)
        same = torch.equal(_bits(got), _bits(want)) if got.dtype == torch.float32 else torch.equal(got, want)
        assert same, (case, shape, dtype, (kh, kw), anchor, border, valid, out)
    assert cpu_filters.filter_sample(torch.zeros(4, 4, 4), [0, 1, 2], torch.ones(3, 3, 3), [1, 1, 1]) is None  # 3-D
    assert cpu_filters.filter_sample(torch.zeros(6, 3, 6), [0, 2], torch.ones(3, 3), [1, 1]) is None  # not adjacent
    assert cpu_filters.filter_sample(torch.zeros(6, 6, dtype=torch.float16), [0, 1], torch.ones(3, 3), [1, 1]) is None


def test_filter_helper_refuses_bad_index_maps() -> None:
    _need_helper()
    x, k = torch.zeros(5, 5), torch.ones(3, 3)
    ok = torch.arange(5)
    assert helpers.filter2d(x, 0, torch.tensor([0, 1, 2, 5]), ok, 0.0, k, torch.float32) is None  # past the end
    assert helpers.filter2d(x, 0, ok, torch.tensor([-2, 0, 1]), 0.0, k, torch.float32) is None
    assert helpers.filter2d(x, 0, ok[:2], ok, 0.0, k, torch.float32) is None  # kernel taller than the padded rows


def test_filter_op_gives_the_same_batches_with_and_without_the_helper(monkeypatch) -> None:
    _need_helper()
    rng = np.random.default_rng(4)
    imgs = [rng.integers(0, 255, (int(rng.integers(10, 40)), int(rng.integers(10, 40)), 3), dtype=np.uint8)
            for _ in range(3)]
    kernels = [rng.standard_normal((int(rng.integers(1, 6)), int(rng.integers(1, 6)))).astype(np.float32)
               for _ in range(3)]

    def run():
        @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1)
        def pipe():
            x = fn.external_source(source=lambda: imgs, layout="HWC")
            k = fn.external_source(source=lambda: kernels)
            return (fn.filter(x, k), fn.filter(x, k, border="wrap"),
                    fn.filter(fn.transpose(x, perm=[2, 0, 1], output_layout="CHW"), k, dtype=types.FLOAT))
        p = pipe()
        p.build()
        return p

    same_with_and_without(monkeypatch, run, ["filter2d"], 9)


def test_gaussian_blur_matches_the_spec_bit_for_bit() -> None:
    _need_helper()
    rng = random.Random(3)
    g = torch.Generator().manual_seed(3)
    for case in range(120):
        h, w, c = rng.randint(1, 40), rng.randint(1, 70), rng.choice([1, 3, 4])
        shape, axes = rng.choice([((1, h, w, c), [1, 2]), ((2, c, h, w), [2, 3]), ((h, w), [0, 1])])
        x = torch.randn(shape, generator=g) * rng.choice([1.0, 255.0, 1e30])
        sizes = [rng.choice([1, 3, 5, 7, 2 * rng.randint(0, 12) + 1]) for _ in range(2)]
        sigmas = [rng.choice([K.diameter_to_sigma(d), rng.uniform(0.1, 5.0)]) for d in sizes]
        pads = lengths = None
        if rng.random() < 0.4:  # a padded group (functional.ragged): borders already in x
            pads = [d // 2 + rng.randint(0, 2) for d in sizes]
            lengths = [max(1, int(x.shape[a]) - 2 * p) for a, p in zip(axes, pads)]
            if any(int(x.shape[a]) < p + n + d // 2 for a, p, n, d in zip(axes, pads, lengths, sizes)):
                continue
        want = K.gaussian_blur(x, axes, sigmas, sizes, pads, lengths)
        got = cpu_filters.gaussian_blur(x, axes, sigmas, sizes, pads, lengths)
        assert got is not None and got.shape == want.shape and torch.equal(_bits(got), _bits(want)), \
            (case, shape, sizes, pads, lengths)
    assert cpu_filters.gaussian_blur(torch.zeros(4, 4, 4), [0, 1, 2], [1.0] * 3, [3] * 3) is None  # 3 axes


def test_laplacian_matches_the_spec_bit_for_bit() -> None:
    _need_helper()
    rng = random.Random(4)
    g = torch.Generator().manual_seed(4)
    for case in range(80):
        h, w, c = rng.randint(1, 30), rng.randint(1, 70), rng.choice([1, 3])
        shape, axes = rng.choice([((1, h, w, c), [1, 2]), ((1, c, h, w), [2, 3])])
        x = torch.randn(shape, generator=g) * rng.choice([1.0, 255.0])
        d = [rng.choice([3, 5, 7]) for _ in range(2)]
        sizes = [[d[0], rng.choice([1, 3, d[1]])], [rng.choice([1, 3, d[0]]), d[1]]]
        scales = [rng.uniform(-2, 2) for _ in range(2)]
        pads = lengths = None
        if rng.random() < 0.4:
            pads = [max(r[i] for r in sizes) // 2 for i in range(2)]
            lengths = [int(x.shape[a]) - 2 * p for a, p in zip(axes, pads)]
            if min(lengths) < 1:
                continue
        want = K.laplacian(x, axes, sizes, scales, pads, lengths)
        got = cpu_filters.laplacian(x, axes, sizes, scales, pads, lengths)
        assert got is not None and got.shape == want.shape and torch.equal(_bits(got), _bits(want)), \
            (case, shape, sizes, pads)


def test_gaussian_blur_and_laplacian_ops_give_the_same_batches_with_and_without_the_helper(monkeypatch) -> None:
    _need_helper()
    rng = np.random.default_rng(5)
    imgs = [rng.integers(0, 255, (int(rng.integers(5, 60)), int(rng.integers(5, 60)), 3), dtype=np.uint8)
            for _ in range(4)]

    def run():
        @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
        def pipe():
            x = fn.external_source(source=lambda: imgs, layout="HWC")
            chw = fn.transpose(x, perm=[2, 0, 1], output_layout="CHW")
            return (fn.gaussian_blur(x, window_size=5), fn.gaussian_blur(x, sigma=fn.random.uniform(range=(0.5, 3))),
                    fn.gaussian_blur(chw, sigma=[1.0, 2.5], dtype=types.FLOAT),
                    fn.laplacian(x, window_size=3), fn.laplacian(x, window_size=5, normalized_kernel=True),
                    fn.laplacian(x, window_size=[3, 5], smoothing_size=[1, 3], scale=[0.5, 2.0], dtype=types.FLOAT))
        p = pipe()
        p.build()
        return p

    same_with_and_without(monkeypatch, run, ["filter2d"], 16)
