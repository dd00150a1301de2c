"""The C helper's per-value tables (ops/fast/cpu_tables.py): brightness_contrast of uint8 images
through a table the spec works out, and histogram equalization, give the spec's bits for every
output type, layout and odd plane (one value, two values, one pixel); the ops give the same
batches with and without them."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali._native import helpers
from torch_dali.functional import color as K
from torch_dali.functional import histogram as HG
from torch_dali.ops.fast import cpu_tables

try:
    from tests._stand_ins import need, same_with_and_without
except ImportError:
    from _stand_ins import need, same_with_and_without  # type: ignore[no-redef]


def _need_helper() -> None:
    need(helpers.CPU_IMAGE)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.is_floating_point:  # bits, NaN where NaN
        return torch.equal(a.view(torch.uint8 if a.element_size() == 1 else {2: torch.int16, 4: torch.int32,
                                                                             8: torch.int64}[a.element_size()]),
                           b.view(torch.uint8 if b.element_size() == 1 else {2: torch.int16, 4: torch.int32,
                                                                             8: torch.int64}[b.element_size()]))
    return torch.equal(a, b)


def test_brightness_contrast_matches_the_spec_bit_for_bit() -> None:
    _need_helper()
    rng = random.Random(5)
    for case in range(300):
        shape = rng.choice([(64, 48, 3), (33, 70), (2, 40, 30, 4), (4096,)])
        x = torch.randint(0, 256, shape, dtype=torch.uint8, generator=torch.Generator().manual_seed(case))
        if rng.random() < 0.2 and x.dim() > 1:
            x = x.transpose(0, 1)  # not contiguous
        args = (rng.choice([1.0, rng.uniform(0, 3), 0.0]), rng.choice([0.0, rng.uniform(-1, 1)]),
                rng.choice([1.0, rng.uniform(-2, 4)]), rng.choice([None, rng.uniform(-50, 300)]),
                rng.choice([None, torch.uint8, torch.int16, torch.int32, torch.float32, torch.float16]))
        want = K.brightness_contrast(x, *args)
        got = cpu_tables.brightness_contrast(x, *args)
        assert got is not None and _same(got, want), (case, shape, args)
    assert cpu_tables.brightness_contrast(torch.zeros(10, 10, 3, dtype=torch.uint8)) is None  # small: the spec
    assert cpu_tables.brightness_contrast(torch.zeros(64, 64, 3, dtype=torch.int16)) is None


def _planes(rng: random.Random, shape: tuple[int, ...]) -> torch.Tensor:
    kind = rng.choice(["random", "narrow", "one", "two", "dark"])
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    if kind == "random":
        return torch.randint(0, 256, shape, dtype=torch.uint8, generator=g)
    if kind == "narrow":
        lo = rng.randrange(200)
        return torch.randint(lo, lo + rng.randint(1, 50), shape, dtype=torch.uint8, generator=g)
    if kind == "one":
        return torch.full(shape, rng.randrange(256), dtype=torch.uint8)
    if kind == "two":
        return (torch.randint(0, 2, shape, generator=g) * rng.randint(1, 255)).to(torch.uint8)
    return (torch.rand(shape, generator=g) ** 4 * 255).to(torch.uint8)


@pytest.mark.parametrize("shape,h_axis", [((1, 37, 41, 3), 1), ((1, 37, 41), 1), ((1, 3, 37, 41), 2),
                                          ((2, 5, 20, 30, 3), 2), ((1, 1, 1, 3), 1), ((1, 600, 500, 1), 1),
                                          ((1, 37, 41, 5), 1)])
def test_equalize_matches_the_spec_bit_for_bit(shape, h_axis) -> None:
    _need_helper()
    rng = random.Random(len(shape) * 100 + shape[-1])
    for case in range(12):
        x = _planes(rng, shape)
        want = HG.equalize(x, h_axis, h_axis + 1)
        got = cpu_tables.equalize(x, h_axis, h_axis + 1)
        assert got is not None and torch.equal(got, want), (case, shape)
    x = torch.zeros((1, 3, 20, 30), dtype=torch.uint8)
    assert cpu_tables.equalize(x, 2, 1) is None  # W before H: the spec
    assert cpu_tables.equalize(torch.zeros((1, 20, 2, 30), dtype=torch.uint8), 1, 3) is None


def _pipe():
    rng = np.random.default_rng(2)
    imgs = [rng.integers(0, 255, (int(rng.integers(40, 90)), int(rng.integers(40, 90)), 3), dtype=np.uint8)
            for _ in range(4)]

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=3)
    def pipe():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        a = fn.brightness_contrast(x, brightness=fn.random.uniform(range=(0.5, 1.5)), contrast=1.3)
        b = fn.brightness_contrast(x, brightness_shift=0.1, dtype=types.FLOAT)
        c = fn.equalize(x)
        d = fn.equalize(fn.transpose(x, perm=[2, 0, 1], output_layout="CHW"))
        return a, b, c, d
    p = pipe()
    p.build()
    return p


def test_ops_give_the_same_batches_with_and_without_the_helper(monkeypatch) -> None:
    _need_helper()
    same_with_and_without(monkeypatch, _pipe, ["table_u8", "equalize_u8"], 8, _same)


def test_brightness_contrast_coefficients_round_as_torch_float32():
    """The spec's coefficients on numpy float32 scalars (cheap per sample) equal the same
    arithmetic on torch float32 tensors, extremes included (overflow to inf, -0.0, 1e-30)."""
    import math

    def torch_coefficients(in_dtype, b, sh, c, center, dtype):
        dtype = in_dtype if dtype is None else dtype
        center = K.half_range(in_dtype) if center is None else float(center)
        f = torch.float32
        bt, ct = torch.tensor(b, dtype=f), torch.tensor(c, dtype=f)
        return float(bt * ct), float(bt * torch.tensor(center, dtype=f) * (1 - ct)
                                     + torch.tensor(sh, dtype=f) * torch.tensor(K.max_value(dtype), dtype=f))

    rng = random.Random(0)

    def value():
        return rng.choice([rng.uniform(-5, 5), rng.uniform(-1e6, 1e6), 0.0, -0.0, 1.0, 1e-30, 3.4e38, 1e39, -1e39,
                           rng.uniform(0.999, 1.001), 1 + 2 ** -30])
    for _ in range(20000):
        args = (rng.choice([torch.uint8, torch.int16, torch.float32, torch.int32]), value(), value(), value(),
                rng.choice([None, value()]), rng.choice([None, torch.uint8, torch.float32, torch.int16]))
        want, got = torch_coefficients(*args), K.brightness_contrast_coefficients(*args)
        assert all(p == q or (math.isnan(p) and math.isnan(q)) for p, q in zip(want, got)), args


def test_brightness_contrast_batch_matches_the_spec_bit_for_bit() -> None:
    """The brightness and contrast ops' batch function (per-sample float32 parameters) through the
    helper, sample by sample, against the spec's one batched float32 pass."""
    from torch_dali.functional import color_adjust as KA
    _need_helper()
    rng = random.Random(6)
    f32 = torch.float32
    for case in range(150):
        n = rng.choice([1, 1, 2, 3])
        shape = (n,) + rng.choice([(40, 52, 3), (3, 20, 40, 3), (70, 33)])
        x = torch.randint(0, 256, shape, dtype=torch.uint8, generator=torch.Generator().manual_seed(case))
        b = torch.tensor([rng.choice([1.0, rng.uniform(0, 3), 0.0, -0.5]) for _ in range(n)], dtype=f32)
        sh = torch.tensor([rng.choice([0.0, rng.uniform(-1, 1)]) for _ in range(n)], dtype=f32)
        c = torch.tensor([rng.choice([1.0, rng.uniform(-2, 4), 0.0]) for _ in range(n)], dtype=f32)
        center = rng.choice([None, torch.tensor([rng.uniform(-50, 300) for _ in range(n)], dtype=f32)])
        dtype = rng.choice([None, torch.uint8, torch.int16, torch.int32, torch.float32])
        got = cpu_tables.brightness_contrast_batch(x, b, sh, c, center, dtype)
        assert got is not None and _same(got, KA.brightness_contrast_batch(x, b, sh, c, center, dtype)), case
    one = torch.ones(1, dtype=f32)
    assert cpu_tables.brightness_contrast_batch(torch.zeros(1, 8, 8, 3, dtype=torch.uint8), one, one, one, None) is None
    assert cpu_tables.brightness_contrast_batch(torch.zeros(1, 64, 64, 3), one, one, one, None) is None


def test_brightness_and_contrast_ops_give_the_same_batches_with_and_without_the_helper(monkeypatch) -> None:
    _need_helper()
    rng = np.random.default_rng(4)
    imgs = [rng.integers(0, 256, (int(rng.integers(40, 90)), int(rng.integers(40, 90)), 3), dtype=np.uint8)
            for _ in range(5)]

    def make():
        @pipeline_def(batch_size=5, num_threads=2, device_id=None, seed=6)
        def pipe():
            x = fn.external_source(source=lambda: imgs, layout="HWC")
            same = fn.external_source(source=lambda: [imgs[0]] * 5, layout="HWC")  # a dense batch
            return (fn.brightness(x, brightness=fn.random.uniform(range=(0.5, 1.5)), brightness_shift=0.05),
                    fn.contrast(x, contrast=fn.random.uniform(range=(0.2, 2.0)), dtype=types.FLOAT),
                    fn.contrast(same, contrast=1.7, contrast_center=fn.random.uniform(range=(50, 200))),
                    fn.brightness(same, brightness=fn.random.uniform(range=(0, 2)), dtype=types.INT16))
        p = pipe()
        p.build()
        return p

    same_with_and_without(monkeypatch, make, ["table_u8", "affine_u8"], 20, _same)
