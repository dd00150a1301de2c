"""reductions.* against DALI 2.4's CPU backend (cases in tests/reference/tensor_cases_more.py,
tables in tensor_tables.npz; "live" runs DALI now when it imports): shapes, types and layouts exact,
integers exact, floats within 1e-5 relative (float32 accumulation order), refusals where DALI
refuses. Then where we differ from DALI on purpose: DALI squares uint16 in a signed 32-bit int (its
mean_square/rms of values above 46340 overflow) and reads a one-element mean out of bounds for
every result element but the first; both are computed as the formulas say here."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, ops, pipeline_def, types

from reference import tensor_cases_more as M
from reference.tensor_check import SOURCES, compare, dali, ours


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", list(M.REDUCTIONS))
def test_matches_dali(name, source):
    compare(ours(name), dali(source, name), atol=1e-5, rtol=1e-5)


def _run(body, xs, layout=None):
    @pipeline_def(batch_size=len(xs), num_threads=1, device_id=None, seed=1)
    def pipe():
        return body(fn.external_source(source=lambda: list(xs), batch=True, layout=layout))

    p = pipe()
    p.build()
    out = p.run()
    return [[np.asarray(o.at(i)) for i in range(len(o))] for o in (out if isinstance(out, tuple) else (out,))]


def test_large_uint16_squares_are_exact():
    x = np.array([[65535, 60000, 1], [46341, 0, 2]], np.uint16)
    (ms,), (rms,) = _run(lambda d: fn.reductions.mean_square(d, axes=1), [x]), \
        _run(lambda d: fn.reductions.rms(d, axes=1), [x])
    want = (x.astype(np.float64) ** 2).mean(axis=1)
    np.testing.assert_allclose(ms[0], want, rtol=1e-6)
    np.testing.assert_allclose(rms[0], np.sqrt(want), rtol=1e-6)


def test_scalar_mean_applies_to_every_result():
    x = np.array([[1, 2, 3], [4, 5, 9]], np.float32)
    (out,) = _run(lambda d: fn.reductions.variance(d, 5.0, axes=1), [x])
    np.testing.assert_allclose(out[0], ((x - 5.0) ** 2).mean(axis=1), rtol=1e-6)


def test_mean_of_the_wrong_size_is_refused():
    x = np.ones((2, 3), np.float32)
    with pytest.raises((ValueError, RuntimeError), match="mean of sample 0 has 2 elements"):
        _run(lambda d: fn.reductions.std_dev(d, types.Constant(np.float32([1, 2])), axes=0), [x])


@pytest.mark.parametrize("kind", ["sum", "min", "max", "mean", "mean_square", "rms"])
def test_against_numpy_on_random_batches(kind):
    rng = np.random.default_rng(7)
    xs = [rng.integers(-50, 50, (3, 4, 5)).astype(np.int32) for _ in range(2)] + \
         [rng.integers(-50, 50, (2, 4, 6)).astype(np.int32)]
    ref = {"sum": np.sum, "min": np.min, "max": np.max, "mean": np.mean,
           "mean_square": lambda a, axis, keepdims: np.mean(a.astype(np.float64) ** 2, axis=axis, keepdims=keepdims),
           "rms": lambda a, axis, keepdims: np.sqrt(np.mean(a.astype(np.float64) ** 2, axis=axis, keepdims=keepdims))}
    for axes in [(0,), (1, 2), (0, 2), None]:
        for keep in (False, True):
            (out,) = _run(lambda d: getattr(fn.reductions, kind)(d, axes=axes, keep_dims=keep), xs, "ABC")
            for o, x in zip(out, xs):
                np.testing.assert_allclose(o, ref[kind](x, axis=axes, keepdims=keep), rtol=1e-6)


def test_class_names_are_dalis():
    for name in ("Min", "Max", "Sum", "Mean", "MeanSquare", "RMS", "StdDev", "Variance"):
        assert hasattr(ops.reductions, name), name


def test_min_max_over_several_axes_one_at_a_time_give_the_single_calls_bits():
    """functional.reductions._extreme (min / max over several axes, one axis at a time: 3x faster
    on an HWC image's H and W) against torch's single amin / amax call it replaces: the same bits,
    with +0 and -0 mixed in, NaNs with payloads, infinities, every float type, keep_dims or not."""
    import random

    from torch_dali.functional import reductions as K
    rng = random.Random(3)
    g = torch.Generator().manual_seed(3)
    specials = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-40, -1e-40]
    for case in range(400):
        shape = rng.choice([(7, 9, 3), (2, 5, 6, 4), (40, 30, 3), (3, 1, 8)])
        x = torch.randint(-3, 4, shape, generator=g).to(torch.float32) if rng.random() < 0.5 \
            else torch.randn(shape, generator=g)
        for _ in range(rng.choice([0, 0, 1, 5, 40])):
            x.view(-1)[rng.randrange(x.numel())] = rng.choice(specials)
        if rng.random() < 0.1:  # a NaN with another payload
            x.view(-1).view(torch.int32)[rng.randrange(x.numel())] = 0x7FC00123
        if rng.random() < 0.2:
            x = -x.abs()  # zeros become -0: the maxima are zeros
        x = x.to(rng.choice([torch.float32, torch.float64, torch.float16, torch.bfloat16]))
        dims = tuple(sorted(rng.sample(range(len(shape)), rng.randint(2, len(shape)))))
        kind, keep = rng.choice(["min", "max"]), rng.random() < 0.5
        want = (x.amin if kind == "min" else x.amax)(dim=dims, keepdim=keep)
        got = K._extreme(x, kind, dims, keep)
        bits = {2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
        assert got.shape == want.shape and torch.equal(got.view(bits), want.view(bits)), (case, shape, dims, kind)
