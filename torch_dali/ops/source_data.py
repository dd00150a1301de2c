"""What a Python source gives, as torch tensors and batches: one sample (`to_tensor`: NumPy, torch,
DLPack/CUDA-array objects, DLPack capsules, bytes, numbers; memory shared where it can be) and one batch
(`to_batch`: a list of samples or an array with a leading batch dimension). Used by external
sources and `readers.dataset`."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..errors import DataError
from ..tensor_input import from_numpy
from ..samples import TensorCPU
from ..tensor_list import TensorList, plain


def describe(x: Any) -> str:
    """What `x` is, for error messages (its type, length or shape and dtype)."""
    if isinstance(x, (list, tuple)):
        return f"{type(x).__name__} of {len(x)}"
    if isinstance(x, (np.ndarray, torch.Tensor)):
        return f"{type(x).__name__} of shape {tuple(x.shape)} and dtype {x.dtype}"
    return type(x).__name__


def is_capsule(x: Any) -> bool:
    """A PyCapsule, such as torch.utils.dlpack.to_dlpack gives: DALI 2.4 takes DLPack capsules as
    samples and as whole batches (a leading batch dimension)."""
    return type(x).__name__ == "PyCapsule" and type(x).__module__ == "builtins"


def to_tensor(x: Any, where: str) -> torch.Tensor:
    """One sample as a torch tensor, sharing memory where it can. Complex numbers are refused
    (DALI has no complex type)."""
    t = _to_tensor(x, where)
    if t.is_complex():
        raise DataError(f"{where}: complex data ({t.dtype}) is not supported; give real numbers")
    return t


def _to_tensor(x: Any, where: str) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x if type(x) is torch.Tensor else x.as_subclass(torch.Tensor)
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            raise DataError(f"{where}: got a NumPy array of Python objects; give numbers")
        try:
            return from_numpy(x)
        except TypeError:
            raise DataError(f"{where}: NumPy arrays of {x.dtype} are not supported; give numbers or "
                            "booleans") from None
    if isinstance(x, (bytes, bytearray, memoryview)):
        buf = bytearray(x) if not isinstance(x, bytearray) else x
        if not buf:
            return torch.empty(0, dtype=torch.uint8)
        return torch.frombuffer(buf, dtype=torch.uint8)
    if isinstance(x, (bool, int, float, np.generic)):
        return torch.from_numpy(np.asarray(x))
    if hasattr(x, "__dlpack__") or is_capsule(x):  # CuPy, JAX, ...; a capsule is consumed here
        return torch.from_dlpack(x)
    # `__array_interface__` alone: PIL images (DALI takes them, through the buffer they expose)
    if hasattr(x, "__cuda_array_interface__") or hasattr(x, "__array__") or hasattr(x, "__array_interface__"):
        return torch.as_tensor(x) if hasattr(x, "__cuda_array_interface__") else _to_tensor(np.asarray(x), where)
    raise DataError(f"{where}: cannot make a tensor out of {describe(x)}; give NumPy arrays, torch "
                    "tensors, CuPy arrays, bytes or numbers")


def to_batch(x: Any, where: str) -> TensorList:
    """A batch: a list/tuple of samples, or one array whose first dimension is the batch."""
    if isinstance(x, TensorList):
        return plain(x)  # a pipeline's output fed back: the executor's class, the same data
    if isinstance(x, (list, tuple)):
        # samples of a pipeline's output (TensorCPU) bring their batch's layout
        layouts = {s.dali_layout() if isinstance(s, TensorCPU) else "" for s in x}
        return TensorList([to_tensor(s, f"{where}, sample {i}") for i, s in enumerate(x)],
                          layouts.pop() if len(layouts) == 1 else "")
    if isinstance(x, (np.ndarray, torch.Tensor)) or hasattr(x, "__dlpack__") \
            or hasattr(x, "__cuda_array_interface__") or is_capsule(x):
        t = to_tensor(x, where)
        if t.dim() == 0:
            raise DataError(f"{where}: a batch must be a list of samples or an array with a leading "
                            f"batch dimension, got a 0-d {type(x).__name__}")
        return TensorList(t)
    raise DataError(f"{where}: a batch must be a list of samples or an array with a leading batch "
                    f"dimension, got {describe(x)}")
