"""Sums in DALI's CPU order in C (ops/fast/cpu_reduce.py, `_native/csrc/cpu/reduce_sum.c`) give
`functional.reduce_order.dali_sum`'s bits: float32 and float64, every set of reduced axes of shapes
whose runs split in halves (more than 32 elements) or not, strided and broadcast views read in
place; the reductions give the same batches with and without it."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali._native import helpers
from torch_dali.functional import reduce_order as RO
from torch_dali.ops.fast import cpu_reduce

try:
    from tests._stand_ins import need, same_with_and_without
except ImportError:
    from _stand_ins import need, same_with_and_without  # type: ignore[no-redef]

_SHAPES = [(48, 48, 3), (7,), (33,), (65, 3), (5, 40, 2), (2, 3, 4, 5), (1, 1), (4096,), (64, 64), (3, 100, 7),
           (2, 2, 2, 2, 2, 2, 2)]


def _values(shape: tuple[int, ...], dtype: torch.dtype, g: torch.Generator) -> torch.Tensor:
    # magnitudes 1e-3..1e3: sums whose rounding depends on the order
    x = torch.randn(shape, generator=g, dtype=torch.float64) * 10.0 ** torch.randint(-3, 4, shape, generator=g)
    return x.to(dtype)


def test_the_sums_match_the_spec_bit_for_bit() -> None:
    need(helpers.REDUCE_SUM)
    g = torch.Generator().manual_seed(0)
    taken = 0
    for shape in _SHAPES:
        for r in range(1, len(shape) + 1):
            for axes in itertools.combinations(range(len(shape)), r):
                for dtype in (torch.float32, torch.float64):
                    x = _values(shape, dtype, g)
                    want, got = RO.dali_sum(x, axes), cpu_reduce.dali_sum(x, axes)
                    if got is None:  # only regions the spec does not plan (> MAX_PLANNED elements)
                        assert np.prod([shape[a] for a in axes]) > RO.MAX_PLANNED
                        continue
                    taken += 1
                    assert got.dtype == want.dtype and got.shape == want.shape and torch.equal(got, want), (shape, axes)
    assert taken > 300


@pytest.mark.parametrize("view", ["transposed", "sliced", "expanded"])
def test_views_are_read_in_place(view: str) -> None:
    need(helpers.REDUCE_SUM)
    g = torch.Generator().manual_seed(1)
    base = _values((40, 50, 3), torch.float32, g)
    x = {"transposed": base.permute(1, 0, 2), "sliced": base[3:37:2, ::3],
         "expanded": base[:, :1].expand(40, 50, 3)}[view]
    for axes in [(0,), (1,), (0, 1), (0, 2), (1, 2)]:  # (all three: 6000 elements, past MAX_PLANNED)
        assert torch.equal(cpu_reduce.dali_sum(x, axes), RO.dali_sum(x.contiguous(), axes)), axes


@pytest.mark.parametrize("op", ["sum", "mean", "std_dev"])
@pytest.mark.parametrize("ragged", [False, True])
def test_the_ops_give_the_same_batches_with_and_without_it(monkeypatch: pytest.MonkeyPatch, op: str,
                                                          ragged: bool) -> None:
    need(helpers.REDUCE_SUM)
    g = torch.Generator().manual_seed(2)
    data = [_values((10 + i, 20, 3) if ragged else (48, 48, 3), torch.float32, g).numpy() for i in range(4)]

    def build():
        @pipeline_def(batch_size=4, num_threads=2, device_id=None)
        def pipe():
            x = fn.external_source(source=lambda: data, batch=True, layout="HWC")
            if op == "std_dev":
                return fn.reductions.std_dev(x, fn.reductions.mean(x, axes=(0, 1)), axes=(0, 1))
            return getattr(fn.reductions, op)(x, axes=(0, 1))
        p = pipe()
        p.build()
        return p

    same_with_and_without(monkeypatch, build, ["dali_sum"], 1)
