"""The C helper's color matrices (ops/fast/cpu_color.py) give the spec's bits: hsv and color_twist
of uint8 RGB images to every output type it takes, over hues, saturations, brightness and contrast
that push values past the type's range and onto halves, and color_space_conversion from RGB and
BGR to YCbCr; the ops give the same batches with and without it."""
from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali._native import helpers
from torch_dali.functional import color as K
from torch_dali.functional import color_adjust as KA
from torch_dali.ops.fast import cpu_color

try:
    from tests._stand_ins import need, same_with_and_without
except ImportError:
    from _stand_ins import need, same_with_and_without  # type: ignore[no-redef]


def _need_helper() -> None:
    need(helpers.CPU_IMAGE)


def _bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == torch.float32:
        return torch.equal(a.view(torch.int32), b.view(torch.int32))
    return torch.equal(a, b)


def _image(rng: random.Random, case: int) -> torch.Tensor:
    shape = rng.choice([(40, 52, 3), (3, 30, 20, 3), (4096, 3), (2, 17, 61, 3)])
    g = torch.Generator().manual_seed(case)
    kind = rng.choice(["random", "edges", "grey"])
    if kind == "edges":  # the extremes, where saturation happens
        return (torch.randint(0, 2, shape, generator=g) * 255).to(torch.uint8)
    if kind == "grey":
        return torch.randint(0, 256, shape[:-1] + (1,), generator=g, dtype=torch.uint8).expand(shape).contiguous()
    return torch.randint(0, 256, shape, generator=g, dtype=torch.uint8)


_OUT = [None, torch.uint8, torch.int16, torch.float32]


def test_hsv_matches_the_spec_bit_for_bit() -> None:
    _need_helper()
    rng = random.Random(7)
    for case in range(200):
        x = _image(rng, case)
        args = (rng.choice([0.0, rng.uniform(-180, 180), 90.0, 360.0 * rng.randint(-3, 3)]),
                rng.choice([1.0, rng.uniform(0, 3), 0.0, -1.0]), rng.choice([1.0, rng.uniform(0, 2.5), 0.5]),
                rng.choice(_OUT))
        got = cpu_color.hsv(x, *args)
        assert got is not None and _bits(got, K.hsv(x, *args)), (case, tuple(x.shape), args)


def test_color_twist_matches_the_spec_bit_for_bit() -> None:
    _need_helper()
    rng = random.Random(8)
    for case in range(200):
        x = _image(rng, case)
        args = (rng.choice([1.0, rng.uniform(0, 2.5)]), rng.choice([1.0, rng.uniform(-1, 3), 0.0]),
                rng.choice([0.0, rng.uniform(-180, 180)]), rng.choice([1.0, rng.uniform(0, 3)]), rng.choice(_OUT))
        got = cpu_color.color_twist(x, *args)
        assert got is not None and _bits(got, K.color_twist(x, *args)), (case, tuple(x.shape), args)


@pytest.mark.parametrize("src", ["RGB", "BGR"])
def test_conversion_to_ycbcr_matches_the_spec_bit_for_bit(src: str) -> None:
    _need_helper()
    rng = random.Random(9)
    cube = torch.stack(torch.meshgrid(*[torch.arange(256, dtype=torch.uint8)[::5]] * 3, indexing="ij"), -1)
    for case, x in enumerate([cube.reshape(-1, 3)] + [_image(rng, c) for c in range(30)]):
        got = cpu_color.color_space_conversion(x, src, "YCbCr")
        assert got is not None and torch.equal(got, KA.color_space_conversion(x, src, "YCbCr")), case


@pytest.mark.parametrize("src,dst", [("RGB", "GRAY"), ("BGR", "GRAY"), ("RGB", "BGR"), ("BGR", "RGB")])
def test_conversion_to_gray_and_between_rgb_and_bgr_matches_the_spec(src: str, dst: str) -> None:
    """The NumPy stand-ins (fixed-point gray, reversed channels) on every RGB triple (a 256^3 cube
    in steps of 5, with 255) and random images, strided ones included: the spec's values."""
    rng = random.Random(10)
    steps = torch.cat([torch.arange(0, 256, 5), torch.tensor([255])]).to(torch.uint8)
    cube = torch.stack(torch.meshgrid(steps, steps, steps, indexing="ij"), -1).reshape(-1, 3)
    for case, x in enumerate([cube] + [_image(rng, c) for c in range(30)] + [torch.cat([cube, cube], 1)[:, 1:4]]):
        got = cpu_color.color_space_conversion(x, src, dst)
        want = KA.color_space_conversion(x, src, dst)
        assert got is not None and got.shape == want.shape and torch.equal(got, want), case


def test_what_the_helper_does_not_take_runs_the_spec() -> None:
    x = torch.randint(0, 256, (64, 64, 3), dtype=torch.uint8)
    assert cpu_color.hsv(x[:4, :4]) is None  # small
    assert cpu_color.hsv(x.to(torch.float32)) is None
    assert cpu_color.hsv(x[..., :2].contiguous()) is None  # not RGB
    assert cpu_color.color_twist(x, dtype=torch.int32) is None  # int32: the spec clamps in float64
    assert cpu_color.hsv(x, saturation=float("inf")) is None
    assert cpu_color.color_space_conversion(x, "YCbCr", "RGB") is None
    assert cpu_color.color_space_conversion(x, "GRAY", "RGB") is None
    assert cpu_color.color_space_conversion(x, "RGB", "RGB") is None  # the spec's copy
    got = cpu_color.hsv(x.transpose(0, 1), 30.0)  # not contiguous: taken, contiguous first
    assert got is not None and torch.equal(got, K.hsv(x.transpose(0, 1), 30.0))


def test_ops_give_the_same_batches_with_and_without_the_helper(monkeypatch) -> None:
    _need_helper()
    rng = np.random.default_rng(3)
    imgs = [rng.integers(0, 256, (int(rng.integers(40, 90)), int(rng.integers(40, 90)), 3), dtype=np.uint8)
            for _ in range(6)]

    def make():
        @pipeline_def(batch_size=6, num_threads=2, device_id=None, seed=5)
        def pipe():
            x = fn.external_source(source=lambda: imgs, layout="HWC")
            return (fn.hsv(x, hue=fn.random.uniform(range=(-40, 40)), saturation=fn.random.uniform(range=(0, 2))),
                    fn.color_twist(x, brightness=1.2, contrast=fn.random.uniform(range=(0.5, 1.5)), hue=20.0,
                                   dtype=types.FLOAT),
                    fn.color_space_conversion(x, image_type=types.BGR, output_type=types.YCbCr))
        p = pipe()
        p.build()
        return p

    same_with_and_without(monkeypatch, make, ["color_matrix_u8"], min_calls=18, same=_bits)


def test_one_samples_matrices_are_the_batched_ones_bit_for_bit() -> None:
    """hsv_matrix and color_twist_matrix (Python floats, per sample) against hsv_matrices64 and
    color_twist_matrices (tensors, the batched GPU path): the same float64 values."""
    rng = random.Random(11)
    hues = [rng.uniform(-400, 400) for _ in range(300)] + [0.0, -0.0, 90.0, 180.0, -180.0, 1e6]
    sats = [rng.choice([1.0, 0.0, -0.5, rng.uniform(0, 4)]) for _ in hues]
    vals = [rng.choice([1.0, rng.uniform(0, 3)]) for _ in hues]
    batched = K.hsv_matrices64(hues, sats, vals)
    for i, (h, s, v) in enumerate(zip(hues, sats, vals)):
        assert torch.equal(K.hsv_matrix(h, s, v).view(torch.int64), batched[i].view(torch.int64)), (h, s, v)
    cons = [rng.uniform(-1, 3) for _ in hues]
    for dt in (torch.uint8, torch.float32):
        m, off = K.color_twist_matrices(vals, cons, hues, sats, dt)
        for i in range(len(hues)):
            mi, oi = K.color_twist_matrix(vals[i], cons[i], hues[i], sats[i], dt)
            assert torch.equal(mi.view(torch.int64), m[i].view(torch.int64)) and oi == float(off[i])


def test_color_matrix_batch_matches_the_spec_bit_for_bit() -> None:
    """The hue and saturation ops' batch function (per-sample float32 matrices) through the helper,
    sample by sample, against the spec's one batched float32 pass."""
    _need_helper()
    rng = random.Random(12)
    for case in range(120):
        n = rng.choice([1, 1, 2, 3])
        x = torch.stack([_image(rng, case)] * n) if rng.random() < 0.3 else \
            torch.randint(0, 256, (n, 30, 50, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(case))
        m = KA.hsv_matrices([rng.uniform(-200, 200) for _ in range(n)],
                            [rng.choice([1.0, rng.uniform(-1, 3), 0.0]) for _ in range(n)], [1.0] * n)
        dtype = rng.choice(_OUT)
        got = cpu_color.color_matrix_batch(x, m, dtype)
        assert got is not None and _bits(got, KA.color_matrix_batch(x, m, dtype)), (case, tuple(x.shape))
    m = KA.hsv_matrices([10.0], [1.0], [1.0])
    assert cpu_color.color_matrix_batch(torch.zeros(1, 8, 8, 3, dtype=torch.uint8), m) is None  # small
    assert cpu_color.color_matrix_batch(torch.zeros(1, 64, 64, 3, dtype=torch.uint8), m, torch.int32) is None


def test_hue_and_saturation_ops_give_the_same_batches_with_and_without_the_helper(monkeypatch) -> None:
    _need_helper()
    rng = np.random.default_rng(5)
    imgs = [rng.integers(0, 256, (int(rng.integers(40, 90)), int(rng.integers(40, 90)), 3), dtype=np.uint8)
            for _ in range(5)]

    def make():
        @pipeline_def(batch_size=5, num_threads=2, device_id=None, seed=7)
        def pipe():
            x = fn.external_source(source=lambda: imgs, layout="HWC")
            same = fn.external_source(source=lambda: [imgs[1]] * 5, layout="HWC")  # a dense batch
            return (fn.hue(x, hue=fn.random.uniform(range=(-60, 60))),
                    fn.saturation(x, saturation=fn.random.uniform(range=(-0.5, 2.5)), dtype=types.FLOAT),
                    fn.hue(same, hue=33.0, dtype=types.INT16), fn.saturation(same, saturation=1.4))
        p = pipe()
        p.build()
        return p

    same_with_and_without(monkeypatch, make, ["color_matrix_u8"], 20, _bits)
