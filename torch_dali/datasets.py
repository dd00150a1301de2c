"""`torch_dali.from_dataset`: a map-style `torch.utils.data.Dataset` as a pipeline reader.

The dataset becomes a `readers.dataset` op built on the shared reader base, so everything readers
do works unchanged: `torch_dali.DataLoader` shards it by rank, `random_shuffle=True` reads what
`DistributedSampler(shuffle=True)` would, `pad_last_batch`, epochs, `epoch_size()`,
`reader_meta()` and `state_dict()` resume.

Items are `(data, label)` or any tuple of fields (a lone value is one field). Each field becomes a
torch tensor: `bytes` (e.g. an encoded JPEG, for `fn.decoders.image`) -> uint8 of shape (size,);
NumPy arrays, torch tensors, CuPy arrays, PIL images (HWC uint8) as they are; Python/NumPy scalars
and 0-d tensors -> shape (1,) (int -> int64, float -> float32, bool -> bool), which
`torch_dali.DataLoader` hands out as int64 labels of shape (B,), like torch's default collation.
A field whose samples all share a shape is batched as one dense tensor.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .errors import ArgumentError, ArgumentTypeError, DataError
from .graph.node import caller_origin
from .ops._registry import call_op, register
from .ops._schema import Arg, OpSchema, positive
from .ops.source_data import to_tensor
from .ops.readers._base import READER_ARGS, ReaderBase
from .tensor_list import TensorList


def _field(x: Any, where: str) -> torch.Tensor:
    if isinstance(x, bool):
        return torch.tensor([x])
    if isinstance(x, int):
        return torch.tensor([x], dtype=torch.int64)
    if isinstance(x, float):
        return torch.tensor([x], dtype=torch.float32)
    if hasattr(x, "getbands") and hasattr(x, "mode"):  # a PIL image
        x = np.asarray(x)
    t = to_tensor(x, where)
    return t.reshape(1) if t.dim() == 0 else t


def _fields(item: Any) -> tuple[Any, ...]:
    return tuple(item) if isinstance(item, (tuple, list)) else (item,)


class DatasetReader(ReaderBase):
    """Reads `dataset[i]` on the pipeline's threads; one output per field of an item."""

    def _check_args(self) -> None:
        ds = self.args["dataset"]
        if not (hasattr(ds, "__len__") and hasattr(ds, "__getitem__")):
            raise ArgumentTypeError(f"{self.name}: `dataset` must be map-style (with __len__ and "
                                    f"__getitem__), got {type(ds).__name__}")
        if self.shuffle and self.after_epoch:
            raise ArgumentError(f"{self.name}: `random_shuffle` cannot be used with shuffle_after_epoch")
        self.dataset = ds
        self.classes = getattr(ds, "classes", None)
        self.k: int = self.args["num_outputs"]
        self._kind = type(ds).__name__

    def _list(self) -> int:
        return len(self.dataset)

    def _describe_source(self) -> str:
        return f"len({self._kind}) is 0"

    def _source(self, index: int) -> str:
        return f"{self._kind}[{index}]"

    def _load(self, index: int) -> tuple[torch.Tensor, ...]:  # type: ignore[override]
        where = f"{self.name} '{self.node.name}': {self._source(index)}"
        try:
            item = self.dataset[index]
        except Exception as e:  # noqa: BLE001 - reported with the item it came from
            raise DataError(f"{where} raised {type(e).__name__}: {e}") from e
        fields = _fields(item)
        if len(fields) != self.k:
            raise DataError(f"{where} has {len(fields)} field(s), the reader has {self.k} output(s) "
                            "(from the first item or `num_outputs`)")
        return tuple(_field(f, f"{where} field {j}") for j, f in enumerate(fields))

    def _assemble(self, indices: list[int], rows: list[tuple[Any, ...]]) -> list[TensorList]:
        """One output per field; dense where every sample of a field has one shape and dtype."""
        outs = []
        for j in range(self.k):
            samples = [r[j] for r in rows]
            first = samples[0]
            if all(s.shape == first.shape and s.dtype == first.dtype and s.device == first.device
                   for s in samples):
                outs.append(TensorList(torch.stack(samples)))
            else:
                outs.append(TensorList(samples))
        return outs


_SCHEMA = register(OpSchema(
    name="readers.dataset", impl=DatasetReader, class_name_override="DatasetReader", devices=("cpu",),
    min_inputs=0, max_inputs=0, num_outputs=lambda a: a.get("num_outputs") or 1,
    doc="Reads a map-style torch Dataset (see torch_dali.from_dataset).",
    args=READER_ARGS + (
        Arg("dataset", "any", doc="a map-style dataset (__len__ and __getitem__); a Python object "
            "that cannot be written to YAML"),
        Arg("num_outputs", "int", None, "fields per item (default: those of dataset[0])", check=positive),
    ),
))


def from_dataset(dataset: Any, *, random_shuffle: bool = False, shard_id: int = 0, num_shards: int = 1,
                 pad_last_batch: bool = False, stick_to_shard: bool = False, name: str | None = None,
                 num_outputs: int | None = None, seed: int | None = None, **reader_args: Any) -> Any:
    """Reads a map-style `torch.utils.data.Dataset` inside a pipeline definition, like
    `fn.readers.file(...)`; returns one DataNode per field of an item (a tuple when more than one).

    ```python
    @pipeline_def(batch_size=32, num_threads=4, device_id=0)
    def p(ds):
        jpegs, labels = torch_dali.from_dataset(ds, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed")
    ```

    Items are `(data, label)` or a tuple of fields: encoded image `bytes` (or uint8 1-D tensors /
    arrays) to decode with `fn.decoders.image`, arrays or tensors, and scalars (labels: a Python
    int becomes an int64 of shape (1,), which `torch_dali.DataLoader` returns as int64 of shape
    (B,)). `num_outputs` is taken from `dataset[0]` unless given. Sharding, shuffling (a global
    permutation per epoch, as DistributedSampler), padding, epochs and `state_dict()` resume are the
    readers' own; `torch_dali.DataLoader` sets `shard_id`/`num_shards` per rank. Other reader
    arguments (`shuffle_after_epoch`, `lazy_init`, ...) pass through `reader_args`.

    `dataset[i]` is called on the pipeline's worker threads, several at once: `__getitem__` must be
    thread-safe (no shared file handles or random state without a lock). The dataset object lives
    in the pipeline and cannot be written to YAML: `serialize()` refuses such a pipeline.
    """
    if isinstance(dataset, torch.utils.data.IterableDataset) or not (
            hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
        raise ArgumentTypeError(f"from_dataset: the dataset must be map-style (__len__ and __getitem__), got "
                                f"{type(dataset).__name__}; feed iterables with fn.external_source")
    if num_outputs is None:
        n = len(dataset)
        if n == 0:
            raise DataError(f"from_dataset: the dataset ({type(dataset).__name__}) is empty")
        try:
            first = dataset[0]
        except Exception as e:  # noqa: BLE001
            raise DataError(f"from_dataset: {type(dataset).__name__}[0] raised {type(e).__name__}: {e}") from e
        num_outputs = len(_fields(first))
    kwargs = dict(reader_args, dataset=dataset, num_outputs=num_outputs, random_shuffle=random_shuffle,
                  shard_id=shard_id, num_shards=num_shards, pad_last_batch=pad_last_batch,
                  stick_to_shard=stick_to_shard, name=name, seed=seed)
    return call_op(_SCHEMA, (), kwargs, origin=caller_origin())

