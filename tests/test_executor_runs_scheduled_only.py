"""A pipeline without GPU ops makes only the iterations DALI 2.4 schedules: `prefetch_queue_depth`
at the first run(), one more at each later run(). A Python function's side effects therefore happen
where DALI has them (DALI's `test_python_function.test_func_with_side_effects`); torch_dali's
producer ran one or two iterations further ahead when no external source held it back.
Counts measured under DALI 2.4 with the same pipelines."""
from __future__ import annotations

import time

import numpy as np
import pytest

from torch_dali import fn
from torch_dali.pipeline import Pipeline

_calls = 0


def _count(x):
    global _calls
    _calls += 1
    return np.full_like(x, _calls)


def _pipe(depth: int, batch: int = 1) -> Pipeline:
    pipe = Pipeline(batch, 1, None, seed=3, prefetch_queue_depth=depth)
    with pipe:
        pipe.set_outputs(fn.python_function(fn.random.uniform(shape=[1]), function=_count))
    pipe.build()
    return pipe


@pytest.mark.parametrize("depth, seen", [(1, [1, 2, 3]), (2, [2, 3, 4]), (3, [3, 4, 5])])
def test_calls_after_each_run(depth, seen):
    global _calls
    _calls = 0
    pipe = _pipe(depth)
    got = []
    for _ in range(3):
        pipe.run()
        time.sleep(0.3)  # time to run ahead, were it to
        got.append(_calls)
    assert got == seen


def test_two_pipelines_side_effects_in_run_order():
    global _calls
    one, two = _pipe(1, 4), _pipe(1, 4)
    for _ in range(3):
        _calls = 0
        a, b = one.run()[0], two.run()[0]
        assert sorted(float(np.array(a[i])[0]) for i in range(4)) == [1, 2, 3, 4]
        assert sorted(float(np.array(b[i])[0]) for i in range(4)) == [5, 6, 7, 8]
