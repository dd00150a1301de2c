"""random.beta and random.choice against DALI 2.4's CPU backend in distribution (DALI's generator
is not reproduced): on the RANDOM cases of tests/reference/tensor_cases_more.py, the same layouts,
shapes and types, the same refusals; beta's samples pass a two-sample Kolmogorov-Smirnov test
against DALI's (p > 1e-3; both sides' seeds are fixed, so the test is deterministic), choice's
counts a chi-square test of homogeneity with DALI's over the same value set. Then our own
guarantee: the same seed gives the same draws whatever the threads."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from torch_dali import fn, pipeline_def, types

from reference import tensor_cases_more as M
from reference.tensor_check import SOURCES, dali, ours


def _same_distribution(got: np.ndarray, want: np.ndarray, discrete: bool) -> None:
    g, w = got.ravel(), want.ravel()
    if not discrete:
        assert stats.ks_2samp(g.astype(np.float64), w.astype(np.float64)).pvalue > 1e-3
        return
    values = np.union1d(np.unique(g), np.unique(w))
    assert set(np.unique(g)) == set(np.unique(w)) or len(values) > 100, (np.unique(g), np.unique(w))
    if len(values) > 100:  # a large range: compare binned
        edges = np.quantile(w.astype(np.float64), np.linspace(0, 1, 11))
        edges[-1] += 1
        table = [np.histogram(g, edges)[0], np.histogram(w, edges)[0]]
    else:
        table = [[np.sum(g == v) for v in values], [np.sum(w == v) for v in values]]
    table = np.array(table)
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] > 1:
        assert stats.chi2_contingency(table).pvalue > 1e-3, table


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", list(M.RANDOM))
def test_distribution_matches_dali(name, source):
    want, got = dali(source, name), ours(name)
    if "error" in want:
        assert "error" in got, f"DALI refuses this case ({want['error']}); torch_dali returned a result"
        return
    assert "error" not in got, got["error"]
    assert got["layouts"] == want["layouts"]
    discrete = M.CASES[name]["op"] == "random.choice"
    for g, w in zip(got["outputs"][0], want["outputs"][0]):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        if g.size >= 1000:
            _same_distribution(g, w, discrete)
        elif M.CASES[name]["op"] == "random.beta":
            assert np.all((g >= 0) & (g <= 1))


def test_choice_picks_only_the_given_elements():
    got = ours("choice_one_row")["outputs"][0]
    rows = M.inputs()["choice_nd"]
    for g, r in zip(got, rows):
        assert any(np.array_equal(g, row) for row in r)


def _draw(threads, seed=11, batch=4):
    @pipeline_def(batch_size=batch, num_threads=threads, device_id=None, seed=seed)
    def pipe():
        return (fn.random.beta(alpha=0.5, beta=0.7, shape=[64]),
                fn.random.choice(10, p=[0.1] * 10, shape=[64]),
                fn.random.beta(alpha=2.0, beta=3.0, dtype=types.FLOAT64))

    p = pipe()
    p.build()
    return [[np.asarray(o.at(i)) for i in range(len(o))] for o in p.run()]


def test_same_seed_same_draws_whatever_the_threads():
    a, b, c = _draw(1), _draw(3), _draw(1, seed=12)
    for x, y in zip(a, b):
        for s, t in zip(x, y):
            np.testing.assert_array_equal(s, t)
    assert not np.array_equal(a[0][0], c[0][0])
    assert not np.array_equal(a[0][0], a[0][1])  # samples draw from their own keys


def test_extreme_parameters_stay_finite():
    """Beta(1e-30, 1e-30) is 0 or 1 about equally often; Beta(1e30, 1) is 1 (no NaN from 0/0 or inf/inf)."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=3)
    def pipe():
        return (fn.random.beta(alpha=1e-30, beta=1e-30, shape=[2000]),
                fn.random.beta(alpha=1e30, beta=1.0, shape=[100], dtype=types.FLOAT64))

    p = pipe()
    p.build()
    tiny, huge = (np.asarray(o.at(0)) for o in p.run())
    assert np.all(np.isin(tiny, [0.0, 1.0])) and 0.4 < tiny.mean() < 0.6
    assert np.all(huge == 1.0)


def _run_one(make, batch=2):
    @pipeline_def(batch_size=batch, num_threads=1, device_id=None, seed=5)
    def pipe():
        return make()

    p = pipe()
    p.build()
    return p.run()[0]


def test_choice_one_probability_is_given_to_every_element():
    """`p=0.25` with four elements is a uniform pick (DALI broadcasts a scalar `p`); with two
    elements the probabilities sum to 0.5 and the op refuses."""
    out = np.stack([np.asarray(s) for s in _run_one(lambda: fn.random.choice(4, p=0.25, shape=[400]))])
    assert set(np.unique(out)) == {0, 1, 2, 3}
    with pytest.raises(RuntimeError, match=r"sum to 0\.5, not 1\.0"):
        _run_one(lambda: fn.random.choice(2, p=0.25))


def test_array_arguments_are_per_sample_inputs():
    """A NumPy array with more dimensions than one value of a per-sample argument is a constant
    per-sample input, as in DALI: the op takes it if the shape suits it (a 3x3 matrix) and refuses
    it when the pipeline runs, a RuntimeError, otherwise."""
    img = _run_one(lambda: fn.experimental.warp_perspective(
        fn.random.uniform(shape=(4, 5, 3)), matrix=np.eye(3)))
    src = _run_one(lambda: fn.random.uniform(shape=(4, 5, 3)))
    np.testing.assert_array_equal(np.asarray(img[0]), np.asarray(src[0]))
    with pytest.raises(RuntimeError, match="one number per sample"):
        _run_one(lambda: fn.random.beta(alpha=np.full((2, 2), 1.0)))
    with pytest.raises(RuntimeError, match="1-D list"):
        _run_one(lambda: fn.random.choice(4, p=np.full((2, 2), 0.25)))
    ok = _run_one(lambda: fn.random.beta(alpha=np.array([0.5]), beta=np.array(2.0)))  # one value: a scalar
    assert np.asarray(ok[0]).shape == ()


def test_one_value_in_two_dimensions_is_not_a_scalar():
    with pytest.raises(RuntimeError, match="one number per sample"):
        _run_one(lambda: fn.random.beta(beta=np.full((1, 1), 1.0)))
