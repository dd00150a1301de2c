"""torchdata.nodes for the dynamic mode (DALI 2.4's `ndd.pytorch.nodes`): `Reader` makes a reader
a node giving dicts of Tensors / Batches, `DictMapper` applies a function to one key, `ToTorch`
turns the dicts into tuples of torch tensors. They compose with torchdata's own nodes
(`Prefetcher`, `Loader`, `Mapper`...):

    node = ToTorch(DictMapper(Reader(ndd.readers.File, batch_size=32, file_root=root), decode))
    for images, labels in torchdata.nodes.Loader(node): ...

A node's `next()` runs on the CUDA device that was current at its `reset()` (torchdata may call
it from a prefetching thread whose current device differs)."""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch
import torchdata.nodes as tn

from .. import Batch, Tensor

__all__ = ["Reader", "DictMapper", "ToTorch"]


class _Node(tn.BaseNode):
    """Remembers the CUDA device current at `reset()` and makes it current around `next()`."""

    _cuda_device: int | None = None

    def reset(self, initial_state: dict | None = None) -> None:
        super().reset(initial_state)
        self._cuda_device = torch.cuda.current_device() if torch.cuda.is_available() else None

    def _on_device(self) -> Any:
        if self._cuda_device is None or torch.cuda.current_device() == self._cuda_device:
            return contextlib.nullcontext()
        return torch.cuda.device(self._cuda_device)


class Reader(_Node):
    """A reader as a node: `Reader(ndd.readers.File, batch_size=8, file_root=...)` makes the reader
    (`reader_type(**kwargs)`, with `max_batch_size=batch_size`) and gives, per `next()`, a dict of
    its outputs named `output_names` (for two outputs, `("data", "label")` by default). Each
    `reset()` starts the reader's next epoch; `batch_size=None` gives samples (Tensors)."""

    def __init__(self, reader_type: type, *, batch_size: int | None,
                 output_names: Iterable[str] | None = None, **kwargs: Any) -> None:
        super().__init__()
        if batch_size is not None and "max_batch_size" not in kwargs:
            kwargs["max_batch_size"] = batch_size
        self._reader = reader_type(**kwargs)
        self._batch_size = batch_size
        self._epoch: Iterator[Any] | None = None
        count = self._reader.infer_num_outputs()
        if output_names is not None:
            self._output_names = tuple(output_names)
            if len(self._output_names) != count:
                raise ValueError(f"ndd.pytorch.nodes.Reader: {len(self._output_names)} output names for "
                                 f"{reader_type.__qualname__}'s {count} outputs")
        elif count == 2:
            self._output_names = ("data", "label")
        else:
            raise ValueError(f"ndd.pytorch.nodes.Reader: {reader_type.__qualname__} has {count} outputs; "
                             "name them with output_names=")

    def next(self) -> dict[str, Any]:
        if self._epoch is None:
            raise RuntimeError("ndd.pytorch.nodes.Reader: call reset() before next()")
        with self._on_device():
            outputs = next(self._epoch)
        if isinstance(outputs, dict):  # named outputs (readers.TFRecord): in their order
            outputs = tuple(outputs.values())
        return dict(zip(self._output_names, outputs))

    def reset(self, initial_state: dict | None = None) -> None:
        if initial_state is not None:  # as DALI 2.4: a node's state is not restored yet
            raise NotImplementedError("ndd.pytorch.nodes.Reader: resuming from a state is not supported")
        super().reset(initial_state)
        self._epoch = iter(self._reader.next_epoch(batch_size=self._batch_size))

    def get_state(self) -> dict[str, Any]:
        return {}

    def get_metadata(self) -> dict[str, Any]:
        """The reader's metadata (epoch_size, number_of_shards, ...)."""
        return self._reader.get_metadata(self._batch_size)


class DictMapper(_Node):
    """Applies `map_fn` to the value at `key` (default `"data"`) of each dict `source` gives."""

    def __init__(self, source: tn.BaseNode, map_fn: Callable[[Any], Tensor | Batch], key: str = "data") -> None:
        super().__init__()
        self._source = source
        self._map_fn = map_fn
        self._key = key

    def next(self) -> dict[str, Any]:
        data = dict(self._source.next())
        with self._on_device():
            data[self._key] = self._map_fn(data[self._key])
        return data

    def reset(self, initial_state: dict | None = None) -> None:
        super().reset(initial_state)
        self._source.reset(initial_state)

    def get_state(self) -> dict[str, Any]:
        return {}


def _stream_context(output_stream: Any) -> Any:
    """Where the tensors are handed over: the given stream (torch's, one with `__cuda_stream__`, or
    a raw handle), else torch's current stream at construction (none without CUDA)."""
    if output_stream is None:
        if not torch.cuda.is_available():
            return contextlib.nullcontext()
        return torch.cuda.stream(torch.cuda.current_stream())
    if isinstance(output_stream, torch.cuda.Stream):
        return torch.cuda.stream(output_stream)
    if hasattr(output_stream, "__cuda_stream__"):
        output_stream = output_stream.__cuda_stream__()[1]
    if isinstance(output_stream, int):
        return torch.cuda.stream(torch.cuda.ExternalStream(output_stream))
    raise TypeError(f"ndd.pytorch.nodes.ToTorch: output_stream must be a torch.cuda.Stream, an object "
                    f"with __cuda_stream__ or a stream handle, got {type(output_stream).__name__}")


class ToTorch(_Node):
    """Turns each dict of Tensors / Batches from `source` into a tuple of torch tensors (in the
    dict's order; a Batch becomes one tensor, so its samples must share a shape). Where some
    values are on a GPU, the CPU ones are copied there; GPU values on different devices are a
    ValueError."""

    def __init__(self, source: tn.BaseNode, output_stream: Any | None = None) -> None:
        super().__init__()
        self._source = source
        self._stream_context = _stream_context(output_stream)

    def next(self) -> tuple[torch.Tensor, ...]:
        data = dict(self._source.next())
        gpu_ids = {v.device.device_id for v in data.values() if v.device.device_type == "gpu"}
        if len(gpu_ids) > 1:
            raise ValueError(f"ndd.pytorch.nodes.ToTorch: values on different GPUs {sorted(gpu_ids)}")
        if gpu_ids:
            (dev,) = gpu_ids
            data = {k: v.gpu(dev) if v.device.device_type == "cpu" else v for k, v in data.items()}
        with self._stream_context:
            return tuple(v.torch() for v in data.values())

    def reset(self, initial_state: dict | None = None) -> None:
        super().reset(initial_state)
        self._source.reset(initial_state)

    def get_state(self) -> dict[str, Any]:
        return {}
