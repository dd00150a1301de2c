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


@pytest.mark.parametrize("make, dtype, value", [
    (lambda: types.Constant(np.int64(5)), types.INT64, 5),
    (lambda: types.Constant(2**40, dtype=types.INT64), types.INT64, 2**40),
    (lambda: types.Constant(2**40).int64(), types.INT64, 2**40),
    (lambda: types.Constant(2**40, dtype=types.UINT64), types.UINT64, 2**40),
    (lambda: types.Constant(np.uint64(5)), types.UINT64, 5),
    (lambda: types.Constant(2**40), types.INT32, 2**31 - 1),
    (lambda: types.Constant(2**33, dtype=types.UINT32), types.UINT32, 2**32 - 1),
    (lambda: types.Constant(300, dtype=types.UINT8), types.UINT8, 255),
    (lambda: types.Constant(-1, dtype=types.UINT8), types.UINT8, 0),
    (lambda: types.Constant(-200).int8(), types.INT8, -128),
    (lambda: types.Constant(-2.9).uint8(), types.UINT8, 0),
    (lambda: types.Constant(-1).uint64(), types.UINT64, 0),
])
def test_a_scalar_constant_output_keeps_its_type_and_saturates(make, dtype, value):
    """A `types.Constant` scalar returned from a pipeline, as DALI 2.4 gives it (measured): its own
    type, 64-bit ones included, and a value outside that type's range clamped to it (fn.constant's
    rule), not an OverflowError."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return make()

    p = pipe()
    p.build()
    (out,) = p.run()
    assert out.dtype == dtype and out.shape() == [()]
    assert np.asarray(out.at(0)).item() == value
