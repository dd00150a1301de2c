"""fn.constant's output shape without `shape`, as DALI 2.4's CPU backend gives it (measured): a 1-D
tensor of the data, a single value included; `shape=[]` makes a scalar."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types


@pytest.mark.parametrize("make, dtype, shape", [
    (lambda: fn.constant(idata=[2]), types.INT32, (1,)),
    (lambda: fn.constant(idata=2), types.INT32, (1,)),
    (lambda: fn.constant(fdata=[2.5]), types.FLOAT, (1,)),
    (lambda: fn.constant(idata=[2, 3]), types.INT32, (2,)),
    (lambda: fn.constant(idata=[4], shape=[]), types.INT32, ()),
    (lambda: fn.constant(idata=[1, 2, 3, 4], shape=[2, 2]), types.INT32, (2, 2)),
])
def test_constant_shape(make, dtype, shape):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return make()

    p = pipe()
    p.build()
    (out,) = p.run()
    assert out.dtype == dtype and out.shape() == [shape, shape]
    assert np.asarray(out.at(1)).shape == shape
