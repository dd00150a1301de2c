"""`nvidia.dali.plugin.pytorch`'s names: DALIGenericIterator, DALIClassificationIterator,
DALIRaggedIterator, LastBatchPolicy, TorchPythonFunction, feed_ndarray, to_torch_type. Outputs
are torch tensors, handed over zero-copy. Epochs and resets: see `base_iterator`."""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any, Sequence

import torch

from .. import fn as _fn
from .. import ops as _ops
from .. import types
from ..errors import ArgumentError
from ..graph.pipeline import Pipeline
from ..tensor_list import TensorList, plain
from .base_iterator import BaseIterator, LastBatchPolicy  # noqa: F401

# the class ops/__init__.py generates at import; annotated, as mypy otherwise calls it "Any? not callable"
TorchPythonFunction: Any = _ops.TorchPythonFunction

#: DALI's element types -> torch's
to_torch_type = {d: types.to_torch_dtype(d) for d in (
    types.BOOL, types.UINT8, types.UINT16, types.UINT32, types.UINT64, types.INT8, types.INT16, types.INT32,
    types.INT64, types.FLOAT16, types.BFLOAT16, types.FLOAT, types.FLOAT64)}


# DALI's `nvidia.dali.plugin.pytorch.fn`: a module (importable by name) holding the torch ops
fn = ModuleType(f"{__name__}.fn", "the functional API of the PyTorch plugin: torch_python_function")
fn.torch_python_function = _fn.torch_python_function  # type: ignore[attr-defined]
sys.modules[fn.__name__] = fn

# DALI's `nvidia.dali.plugin.pytorch.loader_evaluator` (a subpackage there): importable by that name
from . import loader_evaluator  # noqa: E402
sys.modules[f"{__name__}.loader_evaluator"] = loader_evaluator


def to_torch(tl: TensorList) -> torch.Tensor:
    """A dense batch as one tensor (zero-copy when the batch is dense already)."""
    return plain(tl).as_tensor()


class FeedMismatchError(ArgumentError, AssertionError):
    """feed_ndarray's data and target differ in element type or shape; an AssertionError too, as
    DALI's (which asserts) is."""


def feed_ndarray(dali_tensor: Any, arr: torch.Tensor, cuda_stream: Any = None) -> torch.Tensor:
    """Copies a batch (TensorListCPU/GPU, dense) or a sample (TensorCPU/GPU) into the torch tensor
    `arr`, which must have its element type and shape; returns `arr`."""
    src = dali_tensor.as_tensor() if isinstance(dali_tensor, TensorList) else torch.as_tensor(dali_tensor)
    src = src.as_subclass(torch.Tensor) if type(src) is not torch.Tensor else src
    if src.dtype != arr.dtype:
        raise FeedMismatchError(f"feed_ndarray: the element types differ: {src.dtype} (data) vs {arr.dtype} "
                                "(target)")
    if tuple(src.shape) != tuple(arr.shape):
        raise FeedMismatchError(f"feed_ndarray: the shapes differ: {list(src.shape)} (data) vs "
                                f"{list(arr.shape)} (target)")
    arr.copy_(src, non_blocking=cuda_stream is not None)
    return arr


class DALIGenericIterator(BaseIterator):
    """Iterates pipelines; each step returns one dict per pipeline, keyed by `output_map`."""

    def __init__(self, pipelines: Pipeline | Sequence[Pipeline], output_map: Sequence[str], size: int = -1,
                 reader_name: str | None = None, auto_reset: bool | str | None = False,
                 fill_last_batch: bool | None = None, dynamic_shape: bool = False,
                 last_batch_padded: bool = False, last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
                 prepare_first_batch: bool = True) -> None:
        self.output_map = list(output_map)
        if len(set(self.output_map)) != len(self.output_map):
            raise ArgumentError(f"{type(self).__name__}: `output_map` has duplicate names: {self.output_map}")
        super().__init__(pipelines, size, reader_name, auto_reset, fill_last_batch, last_batch_padded,
                         last_batch_policy, prepare_first_batch)

    def _check_outputs(self, outs: tuple[TensorList, ...]) -> None:
        if len(outs) != len(self.output_map):
            raise ArgumentError(f"{type(self).__name__}: the pipeline has {len(outs)} outputs but output_map "
                                f"names {len(self.output_map)}")

    def _convert(self, outs: tuple[TensorList, ...], take: int | None) -> dict[str, Any]:
        self._check_outputs(outs)
        tensors = {name: to_torch(tl) for name, tl in zip(self.output_map, outs)}
        if take is not None:
            tensors = {k: v[:take] for k, v in tensors.items()}
        return tensors


class DALIClassificationIterator(DALIGenericIterator):
    """DALIGenericIterator with output_map ["data", "label"]."""

    def __init__(self, pipelines: Pipeline | Sequence[Pipeline], size: int = -1, **kwargs: Any) -> None:
        super().__init__(pipelines, ["data", "label"], size=size, **kwargs)


class DALIRaggedIterator(DALIGenericIterator):
    """Like DALIGenericIterator, for outputs whose samples differ in shape: per output, DENSE_TAG
    (one tensor; samples must share a shape), SPARSE_LIST_TAG (a list of tensors) or SPARSE_COO_TAG
    (a torch sparse COO tensor of the samples' rows, indexed by (sample, row))."""

    DENSE_TAG: str = "dense"
    SPARSE_LIST_TAG: str = "sparse_list"
    SPARSE_COO_TAG: str = "sparse_coo"

    def __init__(self, pipelines: Pipeline | Sequence[Pipeline], output_map: Sequence[str], size: int = -1,
                 reader_name: str | None = None, output_types: Sequence[str] | None = None,
                 auto_reset: bool | str | None = False, fill_last_batch: bool | None = None,
                 dynamic_shape: bool = False, last_batch_padded: bool = False,
                 last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL, prepare_first_batch: bool = True) -> None:
        tags = list(output_types) if output_types is not None else [self.DENSE_TAG] * len(output_map)
        bad = [t for t in tags if t not in (self.DENSE_TAG, self.SPARSE_LIST_TAG, self.SPARSE_COO_TAG)]
        if bad or len(tags) != len(output_map):
            raise ArgumentError("DALIRaggedIterator: `output_types` must give DENSE_TAG, SPARSE_LIST_TAG or "
                                f"SPARSE_COO_TAG for each of the {len(output_map)} outputs, got {output_types!r}")
        self._tags = tags
        super().__init__(pipelines, output_map, size, reader_name, auto_reset, fill_last_batch, dynamic_shape,
                         last_batch_padded, last_batch_policy, prepare_first_batch)

    def _convert(self, outs: tuple[TensorList, ...], take: int | None) -> dict[str, Any]:
        self._check_outputs(outs)
        res: dict[str, Any] = {}
        for name, tag, tl in zip(self.output_map, self._tags, outs):
            if tag == self.DENSE_TAG:
                t: Any = to_torch(tl)
                res[name] = t[:take] if take is not None else t
                continue
            samples = list(tl.samples[:take] if take is not None else tl.samples)
            if tag == self.SPARSE_LIST_TAG:
                res[name] = samples
                continue
            rows = [(i, j) for i, s in enumerate(samples) for j in range(s.shape[0] if s.dim() else 1)]
            values = torch.cat([s.reshape(-1, *s.shape[1:]) if s.dim() else s.reshape(1) for s in samples]) \
                if samples else torch.empty(0)
            index = torch.tensor(rows, dtype=torch.long, device=values.device).reshape(-1, 2).T
            res[name] = torch.sparse_coo_tensor(index, values, check_invariants=True)
        return res


# DALI's `nvidia.dali.plugin.pytorch.torch_utils`: importable by that name (it reads feed_ndarray)
from . import torch_utils  # noqa: E402
sys.modules[f"{__name__}.torch_utils"] = torch_utils

# DALI's `nvidia.dali.plugin.pytorch.experimental` (a subpackage there) and its `proxy`: both
# importable by those names
from . import pytorch_proxy as _proxy  # noqa: E402
experimental = ModuleType(f"{__name__}.experimental", "DALI's experimental PyTorch plugin modules: proxy")
experimental.proxy = _proxy  # type: ignore[attr-defined]
sys.modules[experimental.__name__] = experimental
sys.modules[f"{__name__}.experimental.proxy"] = _proxy
