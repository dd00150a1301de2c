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


@pytest.mark.parametrize("make", [
    lambda x: fn.python_function(x, function=_ident, output_layouts="ABC"),
    lambda x: fn.python_function(x, function=_ident, output_layouts="A"),
    lambda x: fn.python_function(x, function=_ident, output_layouts="ABC", batch_processing=True),
    lambda x: fn.torch_python_function(x, function=_ident, output_layouts=["ABC"]),
    lambda x: fn.python_function(x, function=lambda a: (a, a[0]), num_outputs=2, output_layouts=["AB", "AB"])[1],
])
def test_output_layouts_must_name_every_dimension(make):
    """DALI 2.4 (measured): a layout of the wrong length for what the function returned fails the
    run with a ValueError; the batch never carries it."""
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, exec_async=False, exec_pipelined=False)
    with pipe:
        x = fn.external_source(source=lambda: [np.zeros((2, 3), np.float32)] * 2, batch=True)
        pipe.set_outputs(make(x))
    pipe.build()
    with pytest.raises(ValueError, match="output_layouts") as e:
        pipe.run()
    assert isinstance(e.value, PipelineError)


def test_vmapped_torch_function_keeps_output_layouts():
    """The vmapped path (torch_python_function on CUDA) sets `output_layouts` as the sample loop
    does, and checks them the same way."""
    import torch

    from torch_dali.ops.python_function import OutputLayoutError, TorchPythonFunction
    from torch_dali.tensor_list import TensorList

    op = object.__new__(TorchPythonFunction)
    op.function, op.num_outputs, op._vmapped, op.fname = (lambda t: t * 2), 1, None, "double"
    schema = type("S", (), {"display_name": lambda self: "TorchPythonFunction"})()
    op.node = type("N", (), {"name": "n", "origin": None, "schema": schema})()
    batch = [TensorList(torch.ones(2, 3, 4))]
    op.args = {"output_layouts": "HW"}
    (out,) = op._try_vmap(batch)
    assert out.layout() == "HW" and torch.equal(out.as_tensor(), torch.full((2, 3, 4), 2.0))
    op.args, op._vmapped = {"output_layouts": "HWC"}, None
    with pytest.raises(OutputLayoutError):
        op._try_vmap(batch)


def test_dlpack_from_array_takes_negative_strides():
    """DALI's `test_python_function.test_not_a_tuple_dl` returns `_dlpack_from_array(np.fliplr(a))`:
    DALI 2.4 takes the flipped view (values below measured there); torch has no negative strides."""
    x = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    back = ops._dlpack_to_array(ops._dlpack_from_array(np.fliplr(x)))
    assert np.array_equal(back, np.fliplr(x))

    def flip_batch(batch):
        return [ops._dlpack_from_array(np.fliplr(ops._dlpack_to_array(t))) for t in batch]

    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.dl_tensor_python_function(fn.external_source(lambda: [x]), function=flip_batch))
    pipe.build()
    assert np.array(pipe.run()[0][0]).tolist() == [
        [[9, 10, 11], [6, 7, 8], [3, 4, 5], [0, 1, 2]], [[21, 22, 23], [18, 19, 20], [15, 16, 17], [12, 13, 14]]]


def _complex_np(x):
    return x.astype(np.complex64) * (1 + 2j)


def _complex_torch(x):
    import torch
    return x.to(torch.complex64) * (1 + 2j)


def _complex_batch_np(xs):
    return [_complex_np(x) for x in xs]


def _complex_second_np(x):
    return x, x.astype(np.complex128)


@pytest.mark.parametrize("make", [
    lambda x: fn.python_function(x, function=_complex_np),
    lambda x: fn.python_function(x, function=_complex_batch_np, batch_processing=True),
    lambda x: fn.torch_python_function(x, function=_complex_torch),
    lambda x: fn.python_function(x, function=_complex_second_np, num_outputs=2)[1],
])
def test_complex_results_are_refused_at_the_run(make):
    # DALI 2.4 runs it and reads each complex64 as two float32 values (sample [1+2j, 1+2j] came out
    # as FLOAT [1., 2.]); torch_dali has no complex element type, so the run names the op instead
    # of a later KeyError from the batch's dtype
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, exec_async=False, exec_pipelined=False)
    with pipe:
        pipe.set_outputs(make(fn.random.uniform(shape=[2])))
    pipe.build()
    with pytest.raises(PipelineError, match=r"output \d is torch\.complex"):
        pipe.run()
