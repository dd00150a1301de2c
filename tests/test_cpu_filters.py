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
