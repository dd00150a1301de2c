"""What `pipe.run()` gives back, as DALI 2.4 gives it (found by DALI's own tests): a list of numbers
returned by a pipeline definition is one constant output, and a batch's `as_tensor()` has DALI's
`as_cpu()`."""
from __future__ import annotations

import numpy as np
import torch

import torch_dali.fn as fn
from torch_dali import pipeline_def, types
from torch_dali.plugin.pytorch import to_torch


@pipeline_def(batch_size=2, num_threads=1, device_id=None)
def _lists():
    x = fn.random.uniform(range=(0, 1), shape=(2,), seed=3)
    return x, [0.5 * 255, 1.0, 2.0], [1, 2], [[x, x]]


def test_a_list_of_numbers_is_one_constant_output():
    outs = _lists().run()
    # DALI 2.4: (x, FLOAT [127.5, 1, 2], INT32 [1, 2]); nested DataNodes are flattened here
    assert len(outs) == 5
    assert [o.dtype for o in outs] == [types.FLOAT, types.FLOAT, types.INT32, types.FLOAT, types.FLOAT]
    np.testing.assert_array_equal(outs[1].at(1), np.float32([127.5, 1.0, 2.0]))
    np.testing.assert_array_equal(outs[2].at(0), np.int32([1, 2]))


def test_as_tensor_of_a_batch_has_as_cpu():
    outs = _lists().run()
    t = outs[0].as_tensor()
    assert np.array(t.as_cpu()).shape == (2, 2)
    assert type(to_torch(outs[0])) is torch.Tensor  # what the iterators hand on stays plain
