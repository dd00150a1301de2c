"""Python function ops as DALI 2.4 has them: no input sets, `output_layouts` no longer than the
outputs."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, ops, types
from torch_dali.errors import PipelineError
from torch_dali.pipeline import Pipeline


def _ident(x):
    return x


@pytest.mark.parametrize("call", [
    lambda *x: fn.python_function(*x, function=_ident),
    lambda *x: ops.PythonFunction(function=_ident)(*x),
    lambda *x: fn.dl_tensor_python_function(*x, function=_ident),
    lambda *x: fn.torch_python_function(*x, function=_ident),
])
def test_python_function_refuses_input_sets(call):
    with Pipeline(batch_size=1, num_threads=1, device_id=None):
        a, b = fn.random.uniform(), fn.random.uniform()
        for inputs in (([a, b],), ([a],), ((a, b),), (a, [b])):
            with pytest.raises(TypeError, match="input sets"):
                call(*inputs)
        call(a)  # one DataNode per input is fine


def test_other_ops_keep_input_sets():
    with Pipeline(batch_size=1, num_threads=1, device_id=None):
        a, b = fn.random.uniform(), fn.random.uniform()
        assert len(fn.cast([a, b], dtype=types.FLOAT16)) == 2


def test_output_layouts_longer_than_outputs_fail_at_build():
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, seed=1)
    with pipe:
        pipe.set_outputs(fn.python_function(function=lambda: np.zeros((1, 1)), output_layouts=["HW", "HWC"]))
    with pytest.raises(PipelineError, match="length of `output_layouts` \\(2\\) is greater than the number of "
                                            "outputs \\(1\\)"):
        pipe.build()
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, seed=1)
    with pipe:
        pipe.set_outputs(*fn.python_function(function=lambda: (np.zeros((1, 1)),) * 2, num_outputs=2,
                                             output_layouts=["HW", "AB"]))
    a, b = pipe.run()
    assert a.layout() == "HW" and b.layout() == "AB"


def test_dlpack_array_round_trip_shares_memory():
    array = np.arange(0, 10, 0.5).reshape((2, 10, 1))[:, 2:5, :]  # strided: not contiguous
    back = ops._dlpack_to_array(ops._dlpack_from_array(array))
    assert back.shape == array.shape and np.array_equal(back, array)
    assert np.shares_memory(back, array)
    with pytest.raises(TypeError, match="NumPy array"):
        ops._dlpack_from_array([1, 2])
