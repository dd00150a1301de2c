"""normalize and lookup_table against DALI 2.4's CPU backend (tests/reference/color_ops_cases.py), and
their argument rules. lookup_table is exact; normalize's float outputs are within 4 float32 ulps of
the value (DALI accumulates its statistics in another order), its integer outputs exact here."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError, PipelineError

from reference import color_ops_cases as C
from reference.color_ops_check import SOURCES, compare, dali, ours

NAMES = [n for n in C.CASES if C.CASES[n]["op"] in ("normalize", "lookup_table")]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", NAMES)
def test_against_dali(name, source):
    want, want_layout = dali(source, name)
    got, layout = ours(name)
    assert layout == want_layout
    if C.CASES[name]["op"] == "normalize":
        compare(got, want, atol=1e-6, rtol=5e-7)
    else:
        compare(got, want)


def _run(op, xs, layout="HWC", **kw):
    @pipeline_def(batch_size=len(xs), num_threads=1, device_id=None)
    def pipe():
        return op(fn.external_source(source=lambda: list(xs), batch=True, layout=layout), **kw)

    p = pipe()
    p.build()
    out = p.run()[0]
    return [np.asarray(out.at(i)) for i in range(len(out))]


def test_normalize_matches_numpy():
    """The formula with ddof and epsilon, per sample, and a zero deviation giving `shift`."""
    rng = np.random.default_rng(1)
    x = rng.random((6, 7, 3)).astype(np.float32) * 10
    got = _run(fn.normalize, [x], axes=[0, 1], ddof=1, epsilon=0.5, scale=2.0, shift=1.0)[0]
    m = x.astype(np.float64).mean(axis=(0, 1), keepdims=True)
    sd = np.sqrt(((x - m) ** 2).sum(axis=(0, 1), keepdims=True) / (42 - 1) + 0.5)
    np.testing.assert_allclose(got, 2 * (x - m) / sd + 1, rtol=1e-6, atol=1e-6)
    flat = _run(fn.normalize, [np.full((3, 3), 4.0, np.float32)], layout="HW", shift=7.0)[0]
    assert (flat == 7.0).all()


def test_normalize_errors():
    x = [np.zeros((3, 4), np.float32)]
    with pytest.raises(PipelineError, match="out of valid range"):
        _run(fn.normalize, x, layout="HW", axes=[2])
    with pytest.raises(PipelineError, match='axis "C"'):
        _run(fn.normalize, x, layout="HW", axis_names="C")
    with pytest.raises(ArgumentError, match="not both"):
        _run(fn.normalize, x, layout="HW", axes=[0], axis_names="H")
    with pytest.raises(PipelineError, match="non-reduced axes"):
        _run(fn.normalize, [np.zeros((3, 4), np.float32), np.zeros((3, 5), np.float32)], layout="HW",
             batch=True, axes=[0])


def test_lookup_table_errors():
    with pytest.raises(ArgumentError, match="same length"):
        _run(fn.lookup_table, [np.zeros((2, 2), np.uint8)], layout="HW", keys=[1, 2], values=[1.0])
    with pytest.raises(ArgumentError, match=r"\[0, 65535\]"):
        _run(fn.lookup_table, [np.zeros((2, 2), np.uint8)], layout="HW", keys=[70000], values=[1.0])
    with pytest.raises(PipelineError, match="integers"):
        _run(fn.lookup_table, [np.zeros((2, 2), np.float32)], layout="HW", keys=[1], values=[1.0])


def test_lookup_table_uint8_covers_every_value():
    x = np.arange(256, dtype=np.uint8).reshape(16, 16)
    got = _run(fn.lookup_table, [x], layout="HW", keys=list(range(256)), values=[float(v) + 0.25 for v in range(256)])[0]
    np.testing.assert_array_equal(got, x.astype(np.float32) + 0.25)


def test_apply_and_the_squared_distances_in_place_give_the_out_of_place_bits():
    """functional.normalization.apply (one new tensor, the rest in place) and normalize's squared
    distances (d.mul_(d)) against the out-of-place forms they replace, on random inputs of every
    type, per-channel and broadcasting statistics, zero deviations: the same bits."""
    import random

    import torch

    from torch_dali.functional import normalization as K
    rng = random.Random(4)
    g = torch.Generator().manual_seed(4)

    def old_apply(x, mean, stddev, scale, shift, dtype):
        std = stddev.to(x.device, K.F64)
        inv = torch.where(std != 0, scale / torch.where(std != 0, std, torch.ones_like(std)), torch.zeros_like(std))
        return K.convert((x.to(K.F32) - mean.to(x.device, K.F32)) * inv.to(K.F32) + shift, dtype)
    for case in range(300):
        x = torch.randn((2, 9, 7, 3), generator=g) * rng.choice([1.0, 100.0, 1e-3])
        x = x.to(rng.choice([torch.float32, torch.float64, torch.float16])) if rng.random() < 0.6 else \
            (x * 50).clamp(-128, 127).to(rng.choice([torch.int16, torch.int32]))
        shape = rng.choice([(), (1, 1, 1, 3), (2, 1, 1, 3), (1, 9, 7, 1), (3, 1, 1, 1, 1)])
        mean = torch.randn(shape, generator=g, dtype=torch.float64)
        std = torch.rand(shape, generator=g, dtype=torch.float64) * rng.choice([1.0, 1e3])
        if rng.random() < 0.2:
            std = std * (torch.rand(shape, generator=g) < 0.5)
        args = (rng.choice([1.0, 64.0, rng.uniform(-3, 3)]), rng.choice([0.0, 128.0, rng.uniform(-2, 2)]),
                rng.choice([torch.float32, torch.uint8, torch.int16, torch.float16]))
        got, want = K.apply(x, mean, std, *args), old_apply(x, mean, std, *args)
        assert got.dtype == want.dtype and got.shape == want.shape
        if got.dtype.is_floating_point:
            got, want = got.view(torch.int16 if got.element_size() == 2 else torch.int32), \
                want.view(torch.int16 if want.element_size() == 2 else torch.int32)
        assert torch.equal(got, want), case
        x64 = x.to(K.F64)
        d = x64 - mean
        d.mul_(d)
        assert torch.equal(d.view(torch.int64), ((x64 - mean) ** 2).view(torch.int64)), case
