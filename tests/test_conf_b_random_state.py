"""`_random_state` (DALI's internal argument through which dynamic mode hands a random op its state):
the state and the sample index decide a sample's draws, not the op's seed or the iteration."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def

S1 = np.array([1, 2, 3, 4, 5, 6, 7], np.uint32)
S2 = np.array([1, 2, 3, 4, 5, 6, 8], np.uint32)


def _outs(make, states, iters=2, bs=3, seed=1):
    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=seed)
    def pipe():
        s = fn.external_source(lambda: states, batch=True)
        return tuple(make(s))
    p = pipe()
    return [[[np.array(t) for t in out] for out in p.run()] for _ in range(iters)]


@pytest.mark.parametrize("op", [
    lambda s: fn.random.uniform(shape=[3], _random_state=s),
    lambda s: fn.random.normal(shape=[2], _random_state=s),
    lambda s: fn.random.coin_flip(shape=[8], _random_state=s),
    lambda s: fn.random.beta(shape=[2], _random_state=s),
    lambda s: fn.random.choice(10, shape=[4], _random_state=s),
    lambda s: fn.random.uniform(values=[1, 2, 3, 4, 5], shape=[6], _random_state=s),
])
def test_state_decides_draws(op):
    # two ops given the same state draw the same; iterations repeat (DALI 2.4, measured); samples
    # with the same state still differ by index, and another state draws otherwise
    it = _outs(lambda s: (op(s), op(s)), [S1, S1, S2], seed=1)
    (a0, b0), (a1, b1) = it
    for i in range(3):
        assert np.array_equal(a0[i], b0[i]) and np.array_equal(a0[i], a1[i]) and np.array_equal(b0[i], b1[i])
    other = _outs(lambda s: (op(s),), [S1, S1, S2], seed=99, iters=1)[0][0]
    assert all(np.array_equal(x, y) for x, y in zip(a0, other))  # the pipeline seed plays no part
    assert not np.array_equal(a0[0], a0[1]) and not np.array_equal(a0[0], a0[2])


def test_constant_state_and_scalar_draws():
    # a constant state (not an argument input) works too, also for one draw per sample
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=3)
    def pipe():
        return fn.random.uniform(_random_state=S1), fn.random.uniform(_random_state=S1), fn.random.uniform()
    p = pipe()
    a, b, c = (np.array(o.as_tensor()) for o in p.run())
    a2 = np.array(p.run()[0].as_tensor())
    assert np.array_equal(a, b) and np.array_equal(a, a2) and len(set(a.tolist())) == 4
    assert not np.array_equal(a, c)


def test_dali_random_state_case():
    # DALI's own check: states cycling with periods 2 and 3 give draws with those periods
    st1 = [[np.arange(1, 8, dtype=np.uint32)] * 4, [np.arange(8, 15, dtype=np.uint32)] * 4]
    st2 = [[np.arange(k, k + 7, dtype=np.uint32) * 100] * 4 for k in (1, 8, 15)]

    @pipeline_def(batch_size=4, num_threads=3, device_id=None, seed=123456)
    def pipe():
        s1 = fn.external_source(st1, batch=True, cycle=True)
        s2 = fn.external_source(st2, batch=True, cycle=True)
        return (fn.random.uniform(shape=[100], _random_state=s1), fn.random.uniform(shape=[100], _random_state=s1),
                fn.random.uniform(shape=[100], _random_state=s2))
    p = pipe()
    outs = [[np.array(o.as_tensor()) for o in p.run()] for _ in range(4)]
    for o in outs:
        assert np.array_equal(o[0], o[1]) and not np.array_equal(o[0], o[2])
    assert np.array_equal(outs[2][0], outs[0][0]) and not np.array_equal(outs[1][0], outs[0][0])
    assert np.array_equal(outs[3][2], outs[0][2]) and not np.array_equal(outs[1][2], outs[0][2])
