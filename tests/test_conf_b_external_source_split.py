"""An external source with num_outputs=k takes, as DALI does, an array whose first dimension is k
(one entry per output) where it takes a tuple of k."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.errors import PipelineError


def _pipe(make, batch):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def p():
        def gen():
            while True:
                yield make()
        return tuple(fn.external_source(source=gen, num_outputs=2, batch=batch, layout=["A", "X"]))
    return p()


@pytest.mark.parametrize("make", [lambda: np.arange(6.0).reshape(2, 3), lambda: torch.arange(6.0).reshape(2, 3)])
def test_per_sample_array_splits_by_first_dimension(make):
    a, b = _pipe(make, batch=False).run()
    assert a.layout() == "A" and b.layout() == "X"
    assert np.array_equal(np.asarray(a.at(1)), [0.0, 1.0, 2.0])
    assert np.array_equal(np.asarray(b.at(0)), [3.0, 4.0, 5.0])


def test_batch_array_splits_by_first_dimension():
    a, b = _pipe(lambda: np.arange(12.0).reshape(2, 2, 3), batch=True).run()
    assert np.array_equal(np.asarray(b.at(1)), [9.0, 10.0, 11.0])


def test_array_of_another_length_is_refused():
    with pytest.raises(PipelineError, match="num_outputs=2"):
        _pipe(lambda: np.zeros((3, 3)), batch=False).run()
