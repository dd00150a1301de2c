"""`nvidia.dali.plugin.pytorch.torch_utils` (importable by that name): feed_ndarray, to_torch_type
and to_torch_tensor, DALI 2.4's helpers that turn a pipeline's output sample into a torch tensor."""
from __future__ import annotations

from typing import Any

import torch

from ..tensor_list import TensorList
from .pytorch import feed_ndarray, to_torch_type

__all__ = ["feed_ndarray", "to_torch_tensor", "to_torch_type"]


class NotOneTensorError(TypeError, RuntimeError):
    """A batch given to to_torch_tensor: DALI 2.4 fails with TypeError (copy=True) or RuntimeError
    (copy=False, from DLPack); this is both."""


def to_torch_tensor(dali_tensor: Any, copy: bool) -> torch.Tensor:
    """One sample (`out[i]`, or a batch's `as_tensor()`) as a plain torch tensor: a new one when
    `copy`, else sharing the sample's memory (DALI shares it through DLPack). A batch itself is
    refused (TypeError), as DALI 2.4 refuses it: take `as_tensor()` or a sample first."""
    if isinstance(dali_tensor, TensorList):
        raise NotOneTensorError("to_torch_tensor takes one tensor (a sample, or a batch's as_tensor()), not a batch")
    t = torch.as_tensor(dali_tensor)
    t = t.as_subclass(torch.Tensor) if type(t) is not torch.Tensor else t
    return t.clone() if copy else t
