"""noise.gaussian, noise.salt_and_pepper, noise.shot: in distribution against DALI 2.4's CPU backend
(the statistics of tests/reference/color_ops_cases.noise_stats: mean/std of the added noise and
saturated fractions; salted fraction, salt share and per-pixel consistency; mean and variance of
shot noise; each within 6 standard errors of DALI's), and our own determinism guarantees."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.errors import PipelineError
from torch_dali.functional import noise as K

from reference import color_ops_cases as C
from reference.color_ops_check import SOURCES, dali, ours

NAMES = [n for n in C.CASES if C.CASES[n]["op"].startswith("noise.")]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", NAMES)
def test_distribution_matches_dali(name, source):
    case = C.CASES[name]
    want, want_layout = dali(source, name)
    got, layout = ours(name)
    assert layout == want_layout
    xs = C.inputs()[case["input"]]
    for i, (y, w) in enumerate(zip(got, want)):
        assert y.dtype == xs[i].dtype and y.shape == xs[i].shape
        stats, tol = C.noise_stats(case, xs[i], y)
        assert np.all(np.abs(stats - w) <= tol), (i, stats, w, tol)


def _run(op, xs, layout="HWC", seed=7, threads=1, **kw):
    @pipeline_def(batch_size=len(xs), num_threads=threads, device_id=None, seed=seed)
    def pipe():
        return op(fn.external_source(source=lambda: list(xs), batch=True, layout=layout), **kw)

    p = pipe()
    p.build()
    return [np.asarray(t) for t in (lambda o: [o.at(i) for i in range(len(o))])(p.run()[0])]


OPS = [(fn.noise.gaussian, dict(stddev=20.0)), (fn.noise.salt_and_pepper, dict(prob=0.3)),
       (fn.noise.shot, dict(factor=3.0))]


@pytest.mark.parametrize("op,kw", OPS)
def test_same_seed_same_noise_whatever_the_batch(op, kw):
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 256, (2, 20, 21, 3)).astype(np.uint8)
    c = rng.integers(0, 256, (9, 8, 3)).astype(np.uint8)
    dense = _run(op, [a, b], threads=1, **kw)
    ragged = _run(op, [a, c], threads=3, **kw)  # per-sample path, other threads
    np.testing.assert_array_equal(dense[0], ragged[0])  # sample 0's key is the same in both
    assert not np.array_equal(dense[0], _run(op, [a, b], seed=8, **kw)[0])  # another seed, other noise
    assert not np.array_equal(dense[0], a)


def test_samples_get_different_noise():
    x = np.full((30, 30, 3), 100, np.uint8)
    out = _run(fn.noise.gaussian, [x, x], stddev=10.0)
    assert not np.array_equal(out[0], out[1])


def test_salt_and_pepper_layout_rules():
    with pytest.raises(PipelineError, match="'C' should be the first or the last dimension"):
        _run(fn.noise.salt_and_pepper, [np.zeros((4, 5), np.uint8)], layout="HW")
    out = _run(fn.noise.salt_and_pepper, [np.zeros((4, 5), np.uint8)], layout="HW", per_channel=True, prob=1.0,
               salt_vs_pepper=1.0)
    assert (out[0] == 255).all()


def test_unsupported_types_are_refused():
    with pytest.raises(PipelineError, match="not supported"):
        _run(fn.noise.gaussian, [np.zeros((4, 5, 3), np.float64)])


def test_shot_factor_zero_keeps_the_input():
    x = np.arange(60, dtype=np.uint8).reshape(4, 5, 3)
    np.testing.assert_array_equal(_run(fn.noise.shot, [x], factor=0.0)[0], x)


def test_poisson_sampler_moments():
    """Both sampler branches (inversion below 12, PTRS above) have Poisson's mean and variance."""
    for lam in (0.3, 4.0, 11.9, 12.0, 60.0, 2000.0):
        n = 200_000
        keys = torch.full((n,), 12345, dtype=torch.int64)
        k = K.poisson(torch.full((n,), lam, dtype=torch.float64), keys, torch.arange(n))
        assert (k == k.round()).all() and (k >= 0).all()
        se = (lam / n) ** 0.5
        assert abs(float(k.mean()) - lam) < 6 * se, lam
        assert abs(float(k.var()) - lam) < 6 * lam * (2 / n) ** 0.5 + 6 * se, lam


def test_uniform_words_are_uniform():
    u = K.uniform(torch.tensor([[99]]), torch.arange(100_000).reshape(1, -1), 0)
    assert 0 < float(u.min()) and float(u.max()) < 1
    hist = torch.histc(u, bins=10, min=0, max=1)
    assert (hist - 10_000).abs().max() < 6 * 95  # 6 sigma of a binomial(1e5, 0.1) count
