"""Batch sizes that change from iteration to iteration (external sources fed fewer samples than
the pipeline's batch_size): every op makes as many samples as were fed, as in DALI."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import Pipeline, fn

SIZES = (4, 2, 8)


def _epoch() -> list[np.ndarray]:
    return [np.arange(bs * 3, dtype=np.float32).reshape(bs, 3) for bs in SIZES]


@pytest.mark.parametrize("exec_pipelined", [False, True])
def test_input_less_ops_defined_before_the_source_follow_its_batch_size(exec_pipelined: bool) -> None:
    """batch_permutation and random draws declared before the external source still make one
    sample per fed sample (they used to make batch_size ones, and `d + u` failed)."""
    p = Pipeline(batch_size=max(SIZES), num_threads=1, device_id=None, exec_pipelined=exec_pipelined,
                 exec_async=exec_pipelined)
    with p:
        perm = fn.batch_permutation(seed=1)
        u = fn.random.uniform(range=(0, 1))
        c = fn.random.coin_flip()
        d = fn.external_source(source=_epoch(), cycle=False)
        p.set_outputs(fn.permute_batch(d, indices=perm), d + u, c, perm)
    p.build()
    for bs, want in zip(SIZES, _epoch()):
        permuted, summed, flips, idx = p.run()
        assert [len(permuted), len(summed), len(flips), len(idx)] == [bs] * 4
        order = [int(np.asarray(idx[i])) for i in range(bs)]
        assert sorted(order) == list(range(bs))
        for i, j in enumerate(order):
            np.testing.assert_array_equal(np.asarray(permuted[i]), want[j])
