"""The C helper's 2-D correlation (ops/fast/cpu_filters.py) gives `functional.filters.correlate`'s
bits for every border, anchor, kernel shape (1x1 to wider than the image in `valid` mode's
limits) and layout (HW, HWC, CHW, FHWC); fn.experimental.filter gives the same batches with and
without it."""
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


def test_correlate_matches_the_spec_bit_for_bit() -> None:
    _need_helper()
    rng = random.Random(9)
    g = torch.Generator().manual_seed(9)
    for case in range(250):
        h, w, c = rng.randint(1, 30), rng.randint(1, 30), rng.choice([1, 3, 4])
        shape, axes = rng.choice([((h, w), [0, 1]), ((h, w, c), [0, 1]), ((c, h, w), [1, 2]),
                                  ((2, h, w, c), [1, 2])])
        x = torch.randint(0, 256, shape, generator=g).to(torch.float32)
        if rng.random() < 0.3:
            x = torch.randn(shape, generator=g) * 1e3
        valid = rng.random() < 0.2
        kh = rng.randint(1, h if valid else 9)
        kw = rng.randint(1, w if valid else 9)
        kernel = torch.randn((kh, kw), generator=g)
        anchor = [rng.randrange(kh), rng.randrange(kw)]
        border = rng.choice(K.BORDERS)
        fill = rng.choice([0.0, rng.uniform(-300, 300)])
        args = (x, axes, kernel, anchor, border, fill, valid)
        want = K.correlate(*args)
        got = cpu_filters.correlate(*args)
        assert got is not None and got.shape == want.shape and torch.equal(_bits(got), _bits(want)), \
            (case, shape, (kh, kw), anchor, border, valid)
    assert cpu_filters.correlate(torch.zeros(4, 4, 4), [0, 1, 2], torch.ones(3, 3, 3), [1, 1, 1]) is None  # 3-D
    assert cpu_filters.correlate(torch.zeros(6, 3, 6), [0, 2], torch.ones(3, 3), [1, 1]) is None  # not adjacent


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
            return (fn.experimental.filter(x, k), fn.experimental.filter(x, k, border="wrap"),
                    fn.experimental.filter(fn.transpose(x, perm=[2, 0, 1], output_layout="CHW"), k, dtype=types.FLOAT))
        p = pipe()
        p.build()
        return p

    same_with_and_without(monkeypatch, run, ["correlate2d"], 9)
