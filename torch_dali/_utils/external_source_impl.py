"""`nvidia.dali._utils.external_source_impl`: the external source's helpers DALI code imports.

Besides `accepted_arg_count`, DALI's framework plugins use four checks and conversions of what a
source returned: a sample is a NumPy array, a CPU torch tensor (TensorCPU included) or a CPU MXNet
array; a batch is one of those (dense, first dimension = samples), a list of samples or a
TensorListCPU. Anything else, device data included, is a TypeError; a batch whose samples differ
in shape cannot be one array (ValueError). `error_str` (and `non_uniform_str`) take the offending
object through `.format`, as DALI's callers pass their own messages.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..ops.external_source_checks import accepted_arg_count
from ..samples import TensorGPU
from ..tensor_list import TensorListCPU

__all__ = ["accepted_arg_count", "assert_cpu_sample_data_type", "assert_cpu_batch_data_type",
           "sample_to_numpy", "batch_to_numpy"]

_NOT_CPU = "expected host data (a NumPy array, or a CPU torch/MXNet tensor), got `{}`"
_NOT_UNIFORM = "the samples of the batch differ in shape, so they cannot form one array: {}"


def _mxnet_device(x: Any) -> str | None:
    """The device type of an MXNet NDArray (None for anything else; MXNet is never imported)."""
    if not type(x).__module__.startswith("mxnet"):
        return None
    ctx = getattr(x, "context", None)
    return getattr(ctx, "device_type", None)


def assert_cpu_sample_data_type(sample: Any, error_str: str = _NOT_CPU) -> bool:
    """True for one host sample; TypeError for device data or anything that is not an array."""
    if isinstance(sample, np.ndarray):
        return True
    mx = _mxnet_device(sample)
    if mx is not None:
        if mx != "cpu":
            raise TypeError(error_str.format("an MXNet GPU array: device data is not accepted here"))
        return True
    if isinstance(sample, torch.Tensor):
        # TensorGPU is device data even where torch_dali keeps it in host memory (no CUDA)
        if sample.device.type != "cpu" or isinstance(sample, TensorGPU):
            raise TypeError(error_str.format("a torch GPU tensor: device data is not accepted here"))
        return True
    raise TypeError(error_str.format(type(sample)))


def assert_cpu_batch_data_type(batch: Any, error_str: str = _NOT_CPU) -> bool:
    """True for a host batch: a TensorListCPU, a list of host samples or one dense host array."""
    if isinstance(batch, TensorListCPU):
        return True
    if isinstance(batch, list):
        for sample in batch:
            assert_cpu_sample_data_type(sample, error_str)
        return True
    return assert_cpu_sample_data_type(batch, error_str)


def sample_to_numpy(sample: Any, error_str: str = _NOT_CPU) -> np.ndarray:
    """A host sample as a NumPy array (the array itself when it is one)."""
    assert_cpu_sample_data_type(sample, error_str)
    if isinstance(sample, np.ndarray):
        return sample
    if _mxnet_device(sample) is not None:
        return sample.asnumpy()
    return np.asarray(torch.Tensor.numpy(sample.detach()))


def batch_to_numpy(batch: Any, error_str: str = _NOT_CPU,
                   non_uniform_str: str = _NOT_UNIFORM) -> np.ndarray:
    """A host batch as one NumPy array with the samples stacked on a new first dimension (a dense
    array is returned as it is)."""
    assert_cpu_batch_data_type(batch, error_str)
    if isinstance(batch, TensorListCPU):
        if not batch.is_dense_tensor():
            raise ValueError(non_uniform_str.format(batch))
        return batch.as_array()
    if isinstance(batch, list):
        arrays = [sample_to_numpy(s, error_str) for s in batch]
        if not arrays:  # DALI 2.4 raises IndexError here too: no first sample to compare with
            raise IndexError("an empty list is not a batch: it has no sample to stack")
        if any(a.shape != arrays[0].shape for a in arrays):
            raise ValueError(non_uniform_str.format(batch))
        return np.stack(arrays)
    return sample_to_numpy(batch, error_str)
