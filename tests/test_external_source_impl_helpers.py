"""`nvidia.dali._utils.external_source_impl`'s sample and batch helpers (DALI's framework plugins
import them), as DALI 2.4 behaves: which objects are host samples / batches, what NumPy array each
becomes, and the error types (outcomes measured under DALI 2.4 on the same objects)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import Pipeline, fn, tensors
from torch_dali._utils import external_source_impl as esi

A = np.array([[42, 42], [42, 42]], dtype=np.uint8)


@pytest.mark.parametrize("sample", [A, tensors.TensorCPU(A), torch.tensor(A)])
def test_host_samples_convert_to_their_array(sample):
    assert esi.assert_cpu_sample_data_type(sample) is True
    out = esi.sample_to_numpy(sample)
    assert isinstance(out, np.ndarray) and out.dtype == np.uint8
    np.testing.assert_array_equal(out, A)
    assert esi.sample_to_numpy(A) is A  # a NumPy array is returned as it is


@pytest.mark.parametrize("batch, expected", [
    ([A], [A]),
    ([A] * 4, [A] * 4),
    ([tensors.TensorCPU(A)] * 4, [A] * 4),
    ([torch.tensor(A), A], [A, A]),
    (tensors.TensorListCPU(A), A),  # a dense batch: the samples are A's rows
    (A, A),
])
def test_host_batches_convert_to_one_stacked_array(batch, expected):
    assert esi.assert_cpu_batch_data_type(batch) is True
    out = esi.batch_to_numpy(batch)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, np.asarray(expected))


def test_batches_of_samples_with_different_shapes_are_a_value_error():
    with pytest.raises(ValueError):
        esi.batch_to_numpy([A, np.array([[42, 42]], dtype=np.uint8)])
    with pytest.raises(ValueError):
        esi.batch_to_numpy(tensors.TensorListCPU([A, A[:1]]))

    pipe = Pipeline(2, 1, None, prefetch_queue_depth=1)
    with pipe:
        pipe.set_outputs(fn.external_source(source=lambda: [np.array([42, 42]), np.array([1, 2, 3])]))
    pipe.build()
    with pytest.raises(ValueError):
        esi.batch_to_numpy(pipe.run()[0])


@pytest.mark.parametrize("obj", [(A, A), 5, "x", [[1, 2]], np.float32(2)])
def test_other_objects_are_type_errors(obj):
    # DALI 2.4: a tuple, a number, a string, a list of lists and a NumPy scalar are refused by
    # all four helpers (a list of lists fails on its first sample)
    for f in (esi.assert_cpu_sample_data_type, esi.assert_cpu_batch_data_type,
              esi.sample_to_numpy, esi.batch_to_numpy):
        with pytest.raises(TypeError):
            f(obj)


def test_a_batch_list_holding_a_batch_is_refused_and_an_empty_list_has_no_sample():
    assert esi.assert_cpu_batch_data_type([]) is True  # DALI 2.4: nothing to refuse
    with pytest.raises(IndexError):
        esi.batch_to_numpy([])
    with pytest.raises(TypeError):
        esi.assert_cpu_batch_data_type([tensors.TensorListCPU(A)])


def test_device_data_is_refused_even_without_cuda():
    # TensorGPU stays in host memory where there is no GPU; it is still device data to DALI
    with pytest.raises(TypeError):
        esi.assert_cpu_sample_data_type(tensors.TensorGPU(torch.tensor(A)))


def test_error_str_is_formatted_with_the_offending_type():
    with pytest.raises(TypeError, match="bad: <class 'int'>"):
        esi.sample_to_numpy(5, "bad: {}")
    with pytest.raises(ValueError, match="uneven"):
        esi.batch_to_numpy([A, A[:1]], non_uniform_str="uneven {}")
