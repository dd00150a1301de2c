"""The C helper's grid mask (ops/fast/cpu_masks.py) gives `functional.distort.grid_mask`'s bits for
uint8 and float32 images (NaN, -0.0 and negative values kept as the spec's product keeps them) over
tiles, ratios, angles and shifts, one to four channels; grid_mask gives the same batches with and
without it."""
from __future__ import annotations

import math
import random

import numpy as np
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali._native import helpers
from torch_dali.functional import distort as D
from torch_dali.ops.fast import cpu_masks

try:
    from tests._stand_ins import need, same_with_and_without
except ImportError:
    from _stand_ins import need, same_with_and_without  # type: ignore[no-redef]


def _bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == torch.float32:  # bits, NaN as one NaN
        nan = lambda t: t.reshape(-1).view(torch.int32).masked_fill(t.reshape(-1).isnan(), 0x7FC00000)  # noqa: E731
        return torch.equal(nan(a), nan(b))
    return torch.equal(a, b)


def test_grid_mask_matches_the_spec_bit_for_bit() -> None:
    need(helpers.CPU_IMAGE)
    rng = random.Random(3)
    for case in range(150):
        n, h, w, c = rng.randint(1, 3), rng.randint(1, 90), rng.randint(1, 90), rng.choice([1, 2, 3, 4])
        g = torch.Generator().manual_seed(case)
        if rng.random() < 0.5:
            x = torch.randint(0, 256, (n, h, w, c), dtype=torch.uint8, generator=g)
        else:
            x = torch.randn(n, h, w, c, generator=g) * 100
            x.view(-1)[:: rng.randint(2, 50)] = rng.choice([float("nan"), float("inf"), -0.0, -5.0])
        per = lambda f: torch.tensor([f() for _ in range(n)], dtype=torch.float64)  # noqa: E731
        args = (per(lambda: float(rng.choice([1, 2, 7, 50, 100, rng.randint(1, 300)]))),
                per(lambda: rng.choice([0.0, 0.5, 1.0, rng.uniform(0, 1), rng.uniform(-1, 2)])),
                per(lambda: rng.choice([0.0, math.pi / 2, rng.uniform(-7, 7), 1e6])),
                per(lambda: rng.choice([0.0, rng.uniform(-500, 500)])), per(lambda: rng.choice([0.0, rng.uniform(-500, 500)])))
        want = D.grid_mask(x, *args)
        got = cpu_masks.grid_mask(x, *args)
        if x.numel() < 4096:
            assert got is None or _bits(got, want)
            got = helpers.grid_mask(x.contiguous(), D.grid_mask_coefficients(*args))
        assert got is not None and _bits(got, want), (case, tuple(x.shape))
    assert cpu_masks.grid_mask(torch.zeros(1, 64, 64, 3, dtype=torch.int16), *[torch.ones(1)] * 5) is None


def test_grid_mask_gives_the_same_batches_with_and_without_the_helper(monkeypatch) -> None:
    need(helpers.CPU_IMAGE)
    rng = np.random.default_rng(2)
    imgs = [rng.integers(0, 256, (int(rng.integers(60, 120)), int(rng.integers(60, 120)), 3), dtype=np.uint8)
            for _ in range(5)]

    def make():
        @pipeline_def(batch_size=5, num_threads=2, device_id=None, seed=4)
        def pipe():
            x = fn.external_source(source=lambda: imgs, layout="HWC")
            return fn.grid_mask(x, angle=fn.random.uniform(range=(-1, 1)), ratio=0.4, tile=fn.cast(fn.random.uniform(range=(10, 40)), dtype=types.INT32))  # int32 data, as DALI 2.4 takes only
        p = pipe()
        p.build()
        return p

    same_with_and_without(monkeypatch, make, ["grid_mask"], min_calls=5)
