"""random.uniform / normal / coin_flip against DALI 2.4's draws, as distributions (the generators
differ, so values cannot match one for one): the output type and per-sample shape equal DALI's;
continuous draws pass a two-sample Kolmogorov-Smirnov test (2000 a side: D > 0.08 has probability
below 1e-4 when the distributions agree); discrete draws have DALI's values with frequencies within
0.05 (measured: up to 0.037; KS up to 0.046).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types

from reference import cases as C
from reference.tables import SOURCES, expected, stored

_DT = {"int32": types.INT32}
_OPS = {"uniform": lambda **kw: fn.random.uniform(**kw), "normal": lambda **kw: fn.random.normal(**kw),
        "coin_flip": lambda **kw: fn.random.coin_flip(**kw)}


def ours(kind: str, args: dict[str, Any], seed: int = 17) -> np.ndarray:
    kw = {k: (_DT[v] if k == "dtype" else v) for k, v in args.items()}

    @pipeline_def(batch_size=250, num_threads=1, device_id=None, seed=seed)
    def pipe():
        return _OPS[kind](**kw)

    p = pipe()
    p.build()
    samples = []
    for _ in range(C.RANDOM_DRAWS // 250):
        out, = p.run()
        samples.extend(np.asarray(out.at(i)) for i in range(len(out)))
    return np.stack(samples)


def ks(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.sort(a.astype(np.float64)), np.sort(b.astype(np.float64))
    grid = np.concatenate([a, b])
    return float(np.abs(np.searchsorted(a, grid, "right") / a.size - np.searchsorted(b, grid, "right") / b.size).max())


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", sorted(C.RANDOM_CASES))
def test_draws_match_dali(name, source):
    kind, args = C.RANDOM_CASES[name]
    want = expected(source, f"random/{name}", lambda d: d.random_draws(kind, args))
    got = ours(kind, args)
    assert got.dtype == want.dtype
    assert got.shape[1:] == tuple(stored()[f"random_shape/{name}"].tolist())  # 0-d samples, as DALI's
    got = got.reshape(-1)
    values = np.unique(want)
    if values.size <= 10:  # discrete: the same values, about as often
        assert set(np.unique(got).tolist()) == set(values.tolist())
        f_got = np.array([(got == v).mean() for v in values])
        f_want = np.array([(want == v).mean() for v in values])
        assert np.abs(f_got - f_want).max() <= 0.05, (values, f_got, f_want)
    else:
        assert ks(got, want) <= 0.08
        assert got.min() >= want.min() - 0.1 * np.ptp(want) and got.max() <= want.max() + 0.1 * np.ptp(want)


def test_a_wrong_distribution_would_fail():
    """The bounds above are tight enough: shifting a uniform by 10% of its range, or flipping coins
    with p = 0.4 instead of 0.3, fails them."""
    u = stored()["random/uniform_2_5"].astype(np.float64)
    assert ks(u + 0.3, u) > 0.08
    rng = np.random.default_rng(0)
    assert abs((rng.random(2000) < 0.4).mean() - stored()["random/coin_0.3"].mean()) > 0.05
