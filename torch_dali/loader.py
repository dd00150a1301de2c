"""`torch_dali.DataLoader`: the front door for a loop written for torch.utils.data.DataLoader.

Each `iter()` is one epoch (a fresh, seeded global permutation when the reader shuffles); `len()`
is exact per rank; the last batch is partial unless `drop_last`; labels come out int64 like default
collation; CUDA outputs are handed over zero-copy with the consumer's stream made to wait.
"""
from __future__ import annotations

import math
import os
from typing import Any, Callable, Iterator, Sequence

import torch

from . import types
from .errors import ArgumentError
from .graph.pipeline import Pipeline
from .plugin.pytorch import LastBatchPolicy
from .tensor_list import TensorList

_DTYPES = {torch.float32: types.FLOAT, torch.float16: types.FLOAT16, torch.bfloat16: types.BFLOAT16,
           torch.uint8: types.UINT8}


def distributed_rank_world() -> tuple[int, int]:
    """(rank, world size) from an initialised process group, else RANK/WORLD_SIZE, else (0, 1)."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def default_device() -> torch.device:
    if torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    return torch.device("cpu")


class _DatasetView:
    """What `len(loader.dataset)` reads in a loop written for torch's DataLoader."""

    def __init__(self, loader: "DataLoader") -> None:
        self._loader = loader

    def __len__(self) -> int:
        return self._loader.num_samples


class DataLoader:
    """Iterate a pipeline like a torch DataLoader.

    `pipeline` is a Pipeline (not yet built), a factory returning one (a `@pipeline_def` function:
    it is called with batch_size, num_threads, device_id and seed), or the path of a YAML pipeline.
    """

    def __init__(self, pipeline: Pipeline | Callable[..., Pipeline] | str | os.PathLike, batch_size: int | None = None,
                 *, drop_last: bool = False, last_batch_policy: LastBatchPolicy | None = None,
                 output_map: Sequence[str] | None = None, reader_name: str | None = None,
                 device: str | torch.device | None = None, dtype: torch.dtype | None = None,
                 memory_format: torch.memory_format | None = None, pin_memory: bool = False,
                 seed: int | None = None, num_threads: int | None = None, rank: int | None = None,
                 world_size: int | None = None, exact: bool = False, labels_int64: bool = True,
                 **pipeline_kwargs: Any) -> None:
        if dtype is not None and dtype not in _DTYPES:
            raise ArgumentError(f"DataLoader: `dtype` must be one of {list(_DTYPES)}, got {dtype}")
        if memory_format not in (None, torch.contiguous_format, torch.channels_last):
            raise ArgumentError(f"DataLoader: `memory_format` must be torch.channels_last or "
                                f"torch.contiguous_format, got {memory_format}")
        r, w = distributed_rank_world()
        self.rank = r if rank is None else int(rank)
        self.world_size = w if world_size is None else int(world_size)
        if not 0 <= self.rank < self.world_size:
            raise ArgumentError(f"DataLoader: rank {self.rank} is outside world size {self.world_size}")
        self.device = torch.device(device) if device is not None else default_device()
        self.drop_last = bool(drop_last)
        self.policy = last_batch_policy or (LastBatchPolicy.DROP if drop_last else LastBatchPolicy.PARTIAL)
        self.drop_last = self.policy == LastBatchPolicy.DROP
        self.dtype = dtype
        self.channels_last = memory_format == torch.channels_last
        self.pin_memory = pin_memory
        self.exact = exact
        self.labels_int64 = labels_int64
        device_id = self.device.index if self.device.type == "cuda" else None
        if device_id is None and self.device.type == "cuda":
            device_id = torch.cuda.current_device()
        self.pipe = self._make_pipeline(pipeline, batch_size, seed, num_threads, device_id, pipeline_kwargs)
        self.batch_size = self.pipe.batch_size
        self._configure_graph()
        self.pipe.build()
        readers = self.pipe._exec().plan.readers()
        if not readers:
            raise ArgumentError("DataLoader: the pipeline has no reader, so epochs have no end; use "
                                "the pipeline directly (pipe.run())")
        if reader_name is not None:
            readers = [x for x in readers if x[0].name == reader_name] + [x for x in readers if x[0].name != reader_name]
            if readers[0][0].name != reader_name:
                raise ArgumentError(f"DataLoader: no reader named {reader_name!r}")
        self._readers = readers
        outs = self.pipe.graph.outputs
        self.output_map = list(output_map) if output_map is not None else None
        if self.output_map is not None and len(self.output_map) != len(outs):
            raise ArgumentError(f"DataLoader: output_map names {len(self.output_map)} outputs, the pipeline "
                                f"has {len(outs)}")
        self.epoch = 0
        self._auto_epoch = True
        self._resume: dict[str, Any] | None = None
        self._batches_done = 0
        self._epoch_started: int | None = None
        self.dataset = _DatasetView(self)

    # -- construction --------------------------------------------------------------------------
    @staticmethod
    def _make_pipeline(pipeline: Any, batch_size: int | None, seed: int | None, num_threads: int | None,
                       device_id: int | None, extra: dict[str, Any]) -> Pipeline:
        params: dict[str, Any] = dict(extra)
        if batch_size is not None:
            params["batch_size"] = batch_size
        if seed is not None:
            params["seed"] = seed
        if num_threads is not None:
            params["num_threads"] = num_threads
        if isinstance(pipeline, Pipeline):
            if pipeline._built:
                raise ArgumentError("DataLoader: pass the pipeline before build(): the loader sets its shards")
            if batch_size is not None and batch_size != pipeline.batch_size:
                raise ArgumentError(f"DataLoader: batch_size={batch_size} differs from the pipeline's "
                                    f"{pipeline.batch_size}")
            return pipeline
        params.setdefault("device_id", device_id)
        if isinstance(pipeline, (str, os.PathLike)):
            return Pipeline.deserialize(filename=str(pipeline), **params)
        if callable(pipeline):
            p = pipeline(**params)
            if not isinstance(p, Pipeline):
                raise ArgumentError(f"DataLoader: the factory returned {type(p).__name__}, not a Pipeline")
            return p
        raise ArgumentError(f"DataLoader: `pipeline` must be a Pipeline, a factory or a YAML path, got "
                            f"{type(pipeline).__name__}")

    def _configure_graph(self) -> None:
        """Shards every reader by rank; pads so ranks read equal counts (not in exact mode); asks
        CropMirrorNormalize for the dtype and layout wanted, so no conversion runs afterwards."""
        graph = self.pipe.graph
        for node in graph.nodes:
            if node.op.startswith("readers."):
                node.args["shard_id"] = self.rank
                node.args["num_shards"] = self.world_size
                if self.exact:
                    if node.args.get("random_shuffle"):
                        raise ArgumentError("DataLoader: exact=True (each sample once, no padding) reads "
                                            "shards in order; turn random_shuffle off for evaluation")
                    node.args["pad_last_batch"] = False
                    node.args["stick_to_shard"] = True
                else:
                    node.args["pad_last_batch"] = True
            if node.op == "crop_mirror_normalize":
                if self.dtype is not None:
                    node.args["dtype"] = _DTYPES[self.dtype]
                if self.channels_last:
                    node.args["output_layout"] = "HWC"

    # -- sizes ---------------------------------------------------------------------------------
    @property
    def _reader(self) -> Any:
        return self._readers[0][1]

    @property
    def num_samples(self) -> int:
        """Samples this rank reads per epoch."""
        return len(self._reader.epoch_order(self.epoch))

    def __len__(self) -> int:
        n = self.num_samples
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def set_epoch(self, epoch: int) -> None:
        """As DistributedSampler.set_epoch: the next iter() runs this epoch."""
        self.epoch = int(epoch)
        self._auto_epoch = False

    # -- iterating -----------------------------------------------------------------------------
    def _start_state(self, epoch: int, batches: int) -> dict[str, Any]:
        ops = {n.name: {**op.state_dict(), "epoch": epoch, "position": batches * self.batch_size}
               for n, op in self._readers}
        return {"iteration": epoch * len(self) + batches, "ops": ops}

    def __iter__(self) -> Iterator[Any]:
        if self._resume is not None:
            state, self._resume = self._resume, None
            self.epoch = state["epoch"]
            start = state["batches"]
            self.pipe.load_state_dict(state["pipeline"])
        else:
            if self._epoch_started is not None and self._auto_epoch:
                self.epoch = self._epoch_started + 1
            start = 0
            want = self._start_state(self.epoch, 0)
            have = self.pipe.state_dict()
            if (have.get("iteration"), have.get("ops")) != (want["iteration"], want["ops"]):
                self.pipe.load_state_dict(want)
        self._auto_epoch = True
        self._epoch_started = self.epoch
        return self._epoch(start)

    @property
    def _skips(self) -> bool:
        op = self._reader
        return bool(getattr(op, "skip", False) or getattr(op, "_checks", None))

    def _epoch(self, start: int) -> Iterator[Any]:
        if self._skips:
            yield from self._epoch_with_skips(start)
            return
        n = self.num_samples
        nb = len(self)
        self._batches_done = start
        for b in range(start, nb):
            outs = self.pipe.run()
            left = n - b * self.batch_size
            take = left if (left < self.batch_size and self.policy == LastBatchPolicy.PARTIAL) else None
            self._batches_done = b + 1
            yield self._convert(outs, take)

    def _batch_end(self) -> tuple[int, bool]:
        """(real samples, epoch ended) of the batch just taken, as the first reader reports them."""
        name = self._readers[0][0].name
        info = (self.pipe._consumed_state.get("info") or {}).get(name, {"real": self.batch_size, "ended": False})
        return int(info["real"]), bool(info["ended"])

    def _epoch_with_skips(self, start: int) -> Iterator[Any]:
        """With on_error="skip" the epoch's good-sample count is known only as it is read: the
        reader says which batch ends the epoch and how many of its samples are real. One process:
        the epoch ends there, and `len()` is an upper bound. Several ranks: see `_epoch_in_step`."""
        if self.world_size > 1 and not self.exact:
            yield from self._epoch_in_step(start)
            return
        b = start
        self._batches_done = start
        while True:
            outs = self.pipe.run()
            real, ended = self._batch_end()
            b += 1
            self._batches_done = b
            if ended and real < self.batch_size and self.policy == LastBatchPolicy.DROP:
                return
            take = real if (ended and real < self.batch_size and self.policy == LastBatchPolicy.PARTIAL) else None
            if real > 0 or not ended:
                yield self._convert(outs, take)
            if ended:
                return

    def _epoch_in_step(self, start: int) -> Iterator[Any]:
        """Every rank yields exactly `len()` batches, however many samples it skipped: otherwise a
        DDP step on the rank that skipped fewer waits forever for the others. A rank whose shard
        ran short fills its last batches with the samples that follow (the next epoch's; as
        DistributedSampler's padding, samples repeat); only a last batch that ends the shard is
        cut to its real samples (PARTIAL)."""
        target = len(self)
        ended_before = False
        for b in range(start, target):
            outs = self.pipe.run()
            real, ended = self._batch_end()
            self._batches_done = b + 1
            last = b == target - 1
            take = None
            if last and ended and not ended_before and 0 < real < self.batch_size \
                    and self.policy == LastBatchPolicy.PARTIAL:
                take = real
            ended_before = ended_before or ended
            yield self._convert(outs, take)

    def _convert(self, outs: tuple[TensorList, ...], take: int | None) -> Any:
        tensors = []
        for tl in outs:
            t = tl.as_tensor()
            if take is not None:
                t = t[:take]
            if self.labels_int64 and not t.dtype.is_floating_point and t.dim() == 2 and t.shape[1] == 1:
                t = t.reshape(-1).to(torch.int64)
            elif t.is_floating_point():
                if self.dtype is not None and t.dtype != self.dtype:
                    t = t.to(self.dtype)
                if self.channels_last and t.dim() == 4 and tl.layout() == "HWC":
                    t = t.permute(0, 3, 1, 2)  # NCHW view with channels_last strides: zero-copy
            if t.device != self.device:
                if self.device.type == "cuda" and t.device.type == "cpu":
                    t = t.pin_memory().to(self.device, non_blocking=True)
                else:
                    t = t.to(self.device)
            elif self.pin_memory and t.device.type == "cpu" and torch.cuda.is_available():
                t = t.pin_memory()
            tensors.append(t)
        if self.output_map is not None:
            return dict(zip(self.output_map, tensors))
        return tuple(tensors)

    # -- checkpointing -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Where the loop stands: batches already yielded count, prefetched ones do not."""
        return {"epoch": self.epoch, "batches": self._batches_done, "pipeline": self.pipe.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """The next iter() resumes the saved epoch right after the last batch that was yielded."""
        for key in ("epoch", "batches", "pipeline"):
            if key not in state:
                raise ArgumentError(f"DataLoader.load_state_dict: the state has no `{key}`")
        self._resume = dict(state)

    def shutdown(self) -> None:
        self.pipe.shutdown()

    def __del__(self) -> None:
        try:
            if self.pipe._executor is not None:
                self.pipe._executor.shutdown(wait=False)
        except Exception:  # noqa: BLE001 - interpreter teardown
            pass
