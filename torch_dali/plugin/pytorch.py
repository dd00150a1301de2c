"""`nvidia.dali.plugin.pytorch`'s names: DALIGenericIterator, DALIClassificationIterator,
LastBatchPolicy, TorchPythonFunction. Outputs are torch tensors, handed over zero-copy."""
from __future__ import annotations

import enum
import math
from typing import Any, Sequence

import torch

from .. import fn as _fn
from .. import ops as _ops
from ..errors import ArgumentError
from ..graph.pipeline import Pipeline
from ..tensor_list import TensorList

TorchPythonFunction = _ops.TorchPythonFunction


class _FnNamespace:
    torch_python_function = staticmethod(_fn.torch_python_function)


fn = _FnNamespace()


class LastBatchPolicy(enum.Enum):
    """What happens to the last batch of an epoch when the shard size is not a batch multiple.

    FILL: the batch is full; the extra samples come from the next epoch (or the reader's padding).
    DROP: the partial batch is not returned.
    PARTIAL: the batch is returned with only the samples that belong to the epoch.
    """

    FILL = 0
    DROP = 1
    PARTIAL = 2


def to_torch(tl: TensorList) -> torch.Tensor:
    """A dense batch as one tensor (zero-copy when the batch is dense already)."""
    return tl.as_tensor()


class DALIGenericIterator:
    """Iterates pipelines; each step returns one dict per pipeline, keyed by `output_map`."""

    def __init__(self, pipelines: Pipeline | Sequence[Pipeline], output_map: Sequence[str], size: int = -1,
                 reader_name: str | None = None, auto_reset: bool | str = False,
                 fill_last_batch: bool | None = None, dynamic_shape: bool = False,
                 last_batch_padded: bool = False, last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
                 prepare_first_batch: bool = True) -> None:
        self._pipes = list(pipelines) if isinstance(pipelines, (list, tuple)) else [pipelines]
        if not self._pipes:
            raise ArgumentError("DALIGenericIterator: `pipelines` is empty")
        self.output_map = list(output_map)
        if len(set(self.output_map)) != len(self.output_map):
            raise ArgumentError(f"DALIGenericIterator: `output_map` has duplicate names: {self.output_map}")
        if fill_last_batch is not None:  # DALI's deprecated spelling
            last_batch_policy = LastBatchPolicy.FILL if fill_last_batch else LastBatchPolicy.PARTIAL
        if (size > 0) == (reader_name is not None):
            if size <= 0:
                raise ArgumentError("DALIGenericIterator: give `reader_name` (or `size`) so the iterator "
                                    "knows where an epoch ends")
            raise ArgumentError("DALIGenericIterator: give only one of `size` and `reader_name`")
        self._policy = last_batch_policy
        self._auto_reset = auto_reset in (True, "yes")
        self._reader_name = reader_name
        self._size = size
        self._padded = last_batch_padded
        for p in self._pipes:
            p.build()
        self.batch_size = self._pipes[0].batch_size
        self._counter = 0
        self._epoch_done = False

    # -- sizes ---------------------------------------------------------------------------------
    def _shard_size(self) -> int:
        if self._reader_name is None:
            return int(self._size)
        meta = self._pipes[0].reader_meta(self._reader_name)
        n = meta["epoch_size_padded"] if self._padded or meta.get("pad_last_batch") else meta["epoch_size"]
        shards, sid = meta["number_of_shards"], meta["shard_id"]
        return (sid + 1) * n // shards - sid * n // shards

    def __len__(self) -> int:
        size = self._shard_size()
        if self._policy == LastBatchPolicy.DROP:
            return size // self.batch_size
        return math.ceil(size / self.batch_size)

    @property
    def size(self) -> int:
        return self._shard_size()

    # -- iterating -----------------------------------------------------------------------------
    def __iter__(self) -> "DALIGenericIterator":
        return self

    def __next__(self) -> list[dict[str, torch.Tensor]]:
        size = self._shard_size()
        if self._epoch_done or self._counter >= size:
            self._end_epoch()
        left = size - self._counter
        if self._policy == LastBatchPolicy.DROP and left < self.batch_size:
            for p in self._pipes:  # consume the partial batch so the next epoch starts right
                p.run()
            self._counter += self.batch_size
            self._end_epoch()
        results = []
        for p in self._pipes:
            outs = p.run()
            if len(outs) != len(self.output_map):
                raise ArgumentError(f"DALIGenericIterator: the pipeline has {len(outs)} outputs but "
                                    f"output_map names {len(self.output_map)}")
            tensors = {name: to_torch(tl) for name, tl in zip(self.output_map, outs)}
            if self._policy == LastBatchPolicy.PARTIAL and left < self.batch_size:
                tensors = {k: v[:left] for k, v in tensors.items()}
            results.append(tensors)
        self._counter += self.batch_size
        if self._counter >= size:
            self._epoch_done = True
        return results

    def _end_epoch(self) -> None:
        """Ends the epoch with StopIteration; with auto_reset the next `for` loop starts the next."""
        if self._auto_reset:
            self.reset()
        raise StopIteration

    next = __next__

    def reset(self) -> None:
        """Starts the next epoch; samples already read past the epoch's end count towards it."""
        size = self._shard_size()
        if self._counter >= size:
            # Samples read past the epoch's end were returned to the caller (FILL, DROP's dropped
            # batch) and count towards the next epoch; with PARTIAL they were cut off, so the
            # next epoch returns `size` samples again (as DALI does).
            pad = self._padded or self._any_padded()
            partial = self._policy == LastBatchPolicy.PARTIAL
            self._counter = 0 if (pad or partial) else self._counter - size
        self._epoch_done = False

    def _any_padded(self) -> bool:
        if self._reader_name is None:
            return False
        return bool(self._pipes[0].reader_meta(self._reader_name).get("pad_last_batch"))


class DALIClassificationIterator(DALIGenericIterator):
    """DALIGenericIterator with output_map ["data", "label"]."""

    def __init__(self, pipelines: Pipeline | Sequence[Pipeline], size: int = -1, **kwargs: Any) -> None:
        super().__init__(pipelines, ["data", "label"], size=size, **kwargs)
