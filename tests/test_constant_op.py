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


def test_a_torch_tensor_constant_keeps_its_integer_type():
    """DALI 2.4 (measured): `fn.copy(torch.full((2,), 6))` is INT64, a NumPy int64 array's is INT32."""
    import torch

    for value, want in ((torch.full((2,), 6), types.INT64), (np.full((2,), 6), types.INT32),
                        (torch.full((2,), 6, dtype=torch.int16), types.INT16)):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def p():
            return fn.copy(value)

        pipe = p()
        pipe.build()
        (out,) = pipe.run()
        assert out.dtype == want and np.asarray(out.at(0)).tolist() == [6, 6]
