"""The C helper's float32 -> integer and float16 conversions (ops/fast/cpu_convert.py) give
`functional.crop.convert`'s and `functional.half.to_half`'s values: for every integer type at
halves, the types' edges, infinities, NaN and huge values; for float16 every float32 exponent and
sign with ties, their neighbours, subnormals, NaN payloads; the convolution ops and `cast` give the
same batches with and without them."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali._native import helpers
from torch_dali.functional.crop import convert
from torch_dali.functional.half import to_half
from torch_dali.ops.fast import cpu_convert

try:
    from tests._stand_ins import need, same_with_and_without
except ImportError:
    from _stand_ins import need, same_with_and_without  # type: ignore[no-redef]

_EDGES = [float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, 126.5, 127.5,
          -128.5, -127.5, 254.5, 255.5, 255.49998, 32766.5, 32767.5, -32768.5, 65534.5, 65535.5, 8388607.5,
          8388608.0, 16777217.0, 2147483520.0, 2147483648.0, -2147483904.0, 3e38, -3e38, 1e-45]


def _need_helper() -> None:
    need(helpers.CPU_IMAGE)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.uint16, torch.int32])
def test_convert_matches_the_spec(dtype) -> None:
    _need_helper()
    g = torch.Generator().manual_seed(1)
    x = torch.cat([torch.tensor(_EDGES * 40), torch.randn(20000, generator=g) * 300,
                   torch.randn(20000, generator=g) * 1e6, (torch.rand(20000, generator=g) * 600 - 300).round() + 0.5])
    x = x[torch.randperm(len(x), generator=g)].reshape(40, -1)
    got = cpu_convert.convert(x, dtype)
    assert got is not None and got.dtype == dtype and torch.equal(got, convert(x, dtype))
    assert cpu_convert.convert(x[:2, :3], dtype) is None  # small: the spec
    assert cpu_convert.convert(x.to(torch.float64), dtype) is None


def test_convolutions_give_the_same_batches_with_and_without_the_helper(monkeypatch) -> None:
    _need_helper()
    rng = np.random.default_rng(6)
    imgs = [rng.integers(0, 255, (int(rng.integers(60, 90)), int(rng.integers(60, 90)), 3), dtype=np.uint8)
            for _ in range(3)]
    kernel = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)  # sharpening: results past 0..255

    def run():
        @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1)
        def pipe():
            x = fn.external_source(source=lambda: imgs, layout="HWC")
            return (fn.gaussian_blur(x, window_size=5), fn.laplacian(x, window_size=3),
                    fn.experimental.filter(x, kernel))
        p = pipe()
        p.build()
        return p

    same_with_and_without(monkeypatch, run, ["convert_f32"], 6)


def test_to_half_matches_the_spec_on_every_exponent() -> None:
    _need_helper()
    g = torch.Generator().manual_seed(3)
    top = torch.arange(0, 1 << 20, dtype=torch.int64) << 12  # every sign, exponent and top mantissa bits
    low = [torch.randint(0, 1 << 12, top.shape, generator=g), 0, 0x800, 0x7FF, 0x801, 0xFFF]  # ties at 0x1000 >> 1
    bits = torch.cat([top | lo for lo in low])
    x = torch.where(bits >= 1 << 31, bits - (1 << 32), bits).to(torch.int32).view(torch.float32).reshape(64, -1)
    got = cpu_convert.to_half(x)
    assert got is not None and got.dtype == torch.float16
    assert torch.equal(got.view(torch.int16), to_half(x).view(torch.int16))  # NaN payloads too
    via_convert = cpu_convert.convert(x, torch.float16)
    assert via_convert is not None and torch.equal(via_convert.view(torch.int16), got.view(torch.int16))
    assert cpu_convert.to_half(x[:2, :3]) is None and cpu_convert.to_half(x.double()) is None


def test_cast_to_float16_gives_the_same_batches_with_and_without_the_helper(monkeypatch) -> None:
    _need_helper()
    from torch_dali import types
    rng = np.random.default_rng(8)
    data = [(rng.standard_normal((70, 90)) * 1000).astype(np.float32) for _ in range(3)]
    data[0][0, :4] = [1 + 2 ** -11, 2049, 2 ** -25, 65520]  # ties (away from zero) and overflow

    def run():
        @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1)
        def pipe():
            return fn.cast(fn.external_source(source=lambda: data), dtype=types.FLOAT16)
        p = pipe()
        p.build()
        return p

    same_with_and_without(monkeypatch, run, ["to_half"], 3, lambda a, b: torch.equal(a.view(torch.int16),
                                                                                    b.view(torch.int16)))
