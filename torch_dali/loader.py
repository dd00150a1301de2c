"""`torch_dali.DataLoader`: the front door for a loop written for torch.utils.data.DataLoader.

Each `iter()` is one epoch (a fresh, seeded global permutation when the reader shuffles); `len()`
is exact per rank; the last batch is partial unless `drop_last`; labels come out int64 like default
collation; CUDA outputs are handed over zero-copy with the consumer's stream made to wait. torch's
own arguments (shuffle, sampler, num_workers, collate_fn, ...) are translated in `loader_compat`.
"""
from __future__ import annotations

import math
import os
import weakref
from typing import Any, Callable, Iterator, Sequence

import torch

from . import types
from .rng import derive_seed
from .errors import ArgumentError
from .graph.pipeline import Pipeline
from .loader_compat import LoaderArgs, LoaderDataset, translate
from .plugin.pytorch import LastBatchPolicy
from .tensor_list import TensorList, plain

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


class DataLoader:
    """Iterate a pipeline like a torch DataLoader.

    `pipeline` is a Pipeline (not yet built), a factory returning one (a `@pipeline_def` function:
    it is called with batch_size, num_threads, device_id, seed and prefetch_queue_depth), or the
    path of a YAML pipeline. torch's arguments keep their places and names (see the README).
    """

    def __init__(self, pipeline: Pipeline | Callable[..., Pipeline] | str | os.PathLike, batch_size: int | None = None,
                 shuffle: bool | None = None, sampler: Any = None, batch_sampler: Any = None,
                 num_workers: int | None = None, collate_fn: Callable[[list[Any]], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Any = None, multiprocessing_context: Any = None,
                 generator: torch.Generator | None = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True,
                 last_batch_policy: LastBatchPolicy | None = None, output_map: Sequence[str] | None = None,
                 reader_name: str | None = None, device: str | torch.device | None = None,
                 dtype: torch.dtype | None = None, memory_format: torch.memory_format | None = None,
                 seed: int | None = None, num_threads: int | None = None, rank: int | None = None,
                 world_size: int | None = None, exact: bool = False, labels_int64: bool = True,
                 **pipeline_kwargs: Any) -> None:
        if dtype is not None and dtype not in _DTYPES:
            raise ArgumentError(f"DataLoader: `dtype` must be one of {list(_DTYPES)}, got {dtype}")
        if memory_format not in (None, torch.contiguous_format, torch.channels_last):
            raise ArgumentError(f"DataLoader: `memory_format` must be torch.channels_last or "
                                f"torch.contiguous_format, got {memory_format}")
        args = translate(shuffle=shuffle, sampler=sampler, batch_sampler=batch_sampler, num_workers=num_workers,
                         collate_fn=collate_fn, timeout=timeout, worker_init_fn=worker_init_fn,
                         multiprocessing_context=multiprocessing_context, generator=generator,
                         prefetch_factor=prefetch_factor, persistent_workers=persistent_workers,
                         pin_memory_device=pin_memory_device, in_order=in_order, seed=seed,
                         num_threads=num_threads, rank=rank, world_size=world_size)
        r, w = distributed_rank_world()
        self.rank = r if args.rank is None else int(args.rank)
        self.world_size = w if args.world_size is None else int(args.world_size)
        if not 0 <= self.rank < self.world_size:
            raise ArgumentError(f"DataLoader: rank {self.rank} is outside world size {self.world_size}")
        self.device = torch.device(device) if device is not None else default_device()
        self.policy = last_batch_policy or (LastBatchPolicy.DROP if drop_last else LastBatchPolicy.PARTIAL)
        self.drop_last = self.policy == LastBatchPolicy.DROP
        self.dtype = dtype
        self.channels_last = memory_format == torch.channels_last
        self.pin_memory = pin_memory
        self.exact = exact
        self.labels_int64 = labels_int64
        self.collate_fn = args.collate_fn
        self.timeout = args.timeout
        self.sampler = args.sampler
        device_id = self.device.index if self.device.type == "cuda" else None
        if device_id is None and self.device.type == "cuda":
            device_id = torch.cuda.current_device()
        self.pipe = self._make_pipeline(pipeline, batch_size, args, device_id, pipeline_kwargs)
        if self.timeout is not None and not self.pipe.exec_async:
            raise ArgumentError("DataLoader: `timeout` needs exec_async=True (the default): with "
                                "exec_async=False batches are made on the caller's thread")
        self.batch_size = self.pipe.batch_size
        self.seed = self._shard_seed(args)
        self._configure_graph(args.shuffle)
        # a training step keeps the GPU busy: the pipeline's decoders and streams keep out of its way
        self.pipe.feeds_training = True
        self.pipe.build()
        names = self.pipe.reader_names()
        if not names:
            raise ArgumentError("DataLoader: the pipeline has no reader, so epochs have no end; use "
                                "the pipeline directly (pipe.run())")
        if reader_name is not None and reader_name not in names:
            raise ArgumentError(f"DataLoader: no reader named {reader_name!r}; its readers: {', '.join(names)}")
        self.reader_name = reader_name if reader_name is not None else names[0]
        self._reader = self.pipe.reader(self.reader_name)
        outs = self.pipe.graph.outputs
        self.output_map = list(output_map) if output_map is not None else None
        if self.output_map is not None and len(self.output_map) != len(outs):
            raise ArgumentError(f"DataLoader: output_map names {len(self.output_map)} outputs, the pipeline "
                                f"has {len(outs)}")
        self.dataset = LoaderDataset(self._reader)
        if self.sampler is not None and len(self.sampler.dataset) != len(self.dataset):
            raise ArgumentError(f"DataLoader: the sampler's data set has {len(self.sampler.dataset)} samples, "
                                f"reader '{self.reader_name}' has {len(self.dataset)}")
        self.epoch = self.sampler.epoch if self.sampler is not None else 0
        self._sampler_epoch = self.epoch
        self._epoch_set = False  # set_epoch() since the last iter() / load_state_dict()
        self._resume: dict[str, Any] | None = None
        self._batches_done = 0
        self._ended = False  # the last batch yielded ended its epoch
        self._epoch_started: int | None = None
        if self.sampler is not None:
            self._hook_sampler()

    # -- construction --------------------------------------------------------------------------
    @staticmethod
    def _make_pipeline(pipeline: Any, batch_size: int | None, args: LoaderArgs, device_id: int | None,
                       extra: dict[str, Any]) -> Pipeline:
        params: dict[str, Any] = dict(extra)
        given = {"batch_size": batch_size, "seed": args.seed, "num_threads": args.num_threads,
                 "prefetch_queue_depth": args.prefetch}
        if isinstance(pipeline, Pipeline):
            if pipeline.built:
                raise ArgumentError("DataLoader: pass the pipeline before build(): the loader sets its shards")
            for key, value in given.items():
                have = getattr(pipeline, key)
                if value is not None and value != have:
                    raise ArgumentError(f"DataLoader: {key}={value} differs from the pipeline's {have}; "
                                        "give it to the Pipeline")
            return pipeline
        for key, value in given.items():
            if value is not None:
                if key in params and params[key] != value:
                    raise ArgumentError(f"DataLoader: {key}={params[key]!r} and the torch-style argument "
                                        f"giving {value!r} disagree")
                params[key] = value
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

    def _shard_seed(self, args: LoaderArgs) -> int:
        """The seed of the readers' permutations: the shards are DistributedSampler(shuffle=True,
        seed=this)'s. A sampler's seed, else `seed`/`generator`, else the pipeline's; with no seed
        anywhere and several ranks, 0 (DistributedSampler's default), so every rank draws alike."""
        if args.shard_seed is not None:
            return args.shard_seed
        if args.seed is not None:
            return int(args.seed)
        if self.pipe.seed_given or self.world_size == 1:
            return self.pipe.seed
        return 0

    def _configure_graph(self, shuffle: bool | None) -> None:
        """Shards every reader by rank, with the loader's seed (and `shuffle` when given); pads so
        ranks read equal counts (not in exact mode); asks CropMirrorNormalize for the dtype and
        layout wanted, so no conversion runs afterwards."""
        for node in list(self.pipe.graph.nodes):
            if node.op.startswith("readers."):
                args: dict[str, Any] = {"shard_id": self.rank, "num_shards": self.world_size}
                if shuffle is not None:
                    args["random_shuffle"] = shuffle
                if self.exact:
                    if args.get("random_shuffle", node.args.get("random_shuffle")):
                        raise ArgumentError("DataLoader: exact=True (each sample once, no padding) reads "
                                            "shards in order; turn random_shuffle off for evaluation")
                    args.update(pad_last_batch=False, stick_to_shard=True)
                else:
                    args["pad_last_batch"] = True
                if node.op == "readers.webdataset" and "split_by_file" not in node.explicit:
                    args["split_by_file"] = True  # tar shards go to ranks whole (split_by_node)
                self.pipe.set_node_args(node.name, seed=self.seed, **args)
            elif self.world_size > 1 and not node.seed_given:
                # Augmentations differ across ranks, as each rank's own DataLoader workers draw:
                # the rank folds into the seeds the pipeline derived (a seed given to an op is kept)
                self.pipe.set_node_args(node.name, seed=derive_seed(node.seed, self.rank))
            if node.op == "crop_mirror_normalize":
                args = {}
                if self.dtype is not None:
                    args["dtype"] = _DTYPES[self.dtype]
                if self.channels_last:
                    args["output_layout"] = "HWC"
                if args:
                    self.pipe.set_node_args(node.name, **args)

    # -- sizes ---------------------------------------------------------------------------------
    def _samples_in(self, epoch: int) -> int:
        return len(self._reader.epoch_order(epoch))

    def _batches_in(self, epoch: int) -> int:
        n = self._samples_in(epoch)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def _len_epoch(self) -> int:
        """The epoch len() describes: the running one, or after one ended the one the next iter()
        starts (its size may differ: whole tars of uneven sizes dealt per epoch)."""
        if self._ended and not self._epoch_set and self._resume is None and self._epoch_started is not None:
            return self._epoch_started + 1
        return self.epoch

    @property
    def num_samples(self) -> int:
        """Samples this rank reads per epoch."""
        return self._samples_in(self._len_epoch())

    def __len__(self) -> int:
        return self._batches_in(self._len_epoch())

    def set_epoch(self, epoch: int) -> None:
        """As DistributedSampler.set_epoch: the next iter() runs this epoch, from its start; after
        load_state_dict(), the saved epoch's remaining batches when it is the epoch the state
        continues (the saved one, or the next after a state saved at an epoch's end)."""
        self.epoch = int(epoch)
        self._epoch_set = True

    # -- iterating -----------------------------------------------------------------------------
    def _start_state(self, epoch: int) -> dict[str, Any]:
        names = self.pipe.reader_names()
        ops = {n: {**self.pipe.reader(n).state_dict(), "epoch": epoch, "position": 0} for n in names}
        return {"iteration": epoch * self._batches_in(epoch), "ops": ops}

    def _hook_sampler(self) -> None:
        """Makes each call of the sampler's set_epoch() one of the loader's: `sampler.epoch` alone
        cannot tell set_epoch(e) called again with the same e (torch reruns epoch e) from no call
        (the loader counts on). The loader is held weakly: the sampler may outlive it."""
        # on the instance: the user's object, its class untouched
        self.sampler.set_epoch = _SetEpochHook(self.sampler, weakref.ref(self))

    def follow_set_epoch(self) -> None:
        """The sampler's set_epoch() was called: the loader's next iter() runs that epoch."""
        if self.sampler is not None:
            self._sampler_epoch = self.sampler.epoch
            self.set_epoch(self.sampler.epoch)

    def _follow_sampler(self) -> None:
        """A DistributedSampler given as `sampler`: an `epoch` assigned to it directly counts as
        set_epoch() too."""
        if self.sampler is not None and self.sampler.epoch != self._sampler_epoch:
            self._sampler_epoch = self.sampler.epoch
            self.set_epoch(self.sampler.epoch)

    def __iter__(self) -> Iterator[Any]:
        self._follow_sampler()
        resume, self._resume = self._resume, None
        state: dict[str, Any] | None = None
        start = 0
        if resume is not None:
            saved, done = int(resume["epoch"]), int(resume["batches"])
            ended = bool(resume.get("ended", not self._skips and done >= self._batches_in(saved)))
            # a state saved at an epoch's end continues with the whole next epoch (torchdata's rule)
            follows, at = (saved + 1, 0) if ended else (saved, done)
            if self._epoch_set and self.epoch != follows:
                epoch = self.epoch  # set_epoch() after load_state_dict(): that epoch, whole
            elif at == 0:
                epoch = follows
            else:
                epoch, start, state = saved, at, resume["pipeline"]
        elif not self._epoch_set and self._epoch_started is not None:
            epoch = self._epoch_started + 1
        else:
            epoch = self.epoch
        self.epoch = epoch
        if state is not None:
            self.pipe.load_state_dict(state)
        else:
            want = self._start_state(epoch)
            have = self.pipe.state_dict()
            if (have.get("iteration"), have.get("ops")) != (want["iteration"], want["ops"]):
                self.pipe.load_state_dict(want)
        self._epoch_set = False
        self._epoch_started = epoch
        self._batches_done, self._ended = start, False
        return self._epoch(start)

    @property
    def _skips(self) -> bool:
        return bool(self._reader.may_skip)

    def _next(self) -> tuple[TensorList, ...]:
        return self.pipe.run(timeout=self.timeout)

    def _took(self, batches: int, ended: bool) -> None:
        self._batches_done, self._ended = batches, ended

    def _epoch(self, start: int) -> Iterator[Any]:
        if self._skips:
            yield from self._epoch_with_skips(start)
            return
        n = self.num_samples
        nb = len(self)
        for b in range(start, nb):
            outs = self._next()
            left = n - b * self.batch_size
            take = left if (left < self.batch_size and self.policy == LastBatchPolicy.PARTIAL) else None
            self._took(b + 1, b + 1 == nb)
            yield self._convert(outs, take)

    def _batch_end(self) -> tuple[int, bool]:
        """(real samples, epoch ended) of the batch just taken, as the loader's reader reports them."""
        info = self.pipe.last_batch_info(self.reader_name)
        return int(info["real"]), bool(info["ended"])

    def _epoch_with_skips(self, start: int) -> Iterator[Any]:
        """With on_error="skip" the epoch's good-sample count is known only as it is read: the
        reader says which batch ends the epoch and how many of its samples are real. One process:
        the epoch ends there, and `len()` is an upper bound. Several ranks: see `_epoch_in_step`."""
        if self.world_size > 1 and not self.exact:
            yield from self._epoch_in_step(start)
            return
        b = start
        while True:
            outs = self._next()
            real, ended = self._batch_end()
            b += 1
            self._took(b, ended)
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
            outs = self._next()
            real, ended = self._batch_end()
            last = b == target - 1
            self._took(b + 1, last)
            take = None
            if last and ended and not ended_before and 0 < real < self.batch_size \
                    and self.policy == LastBatchPolicy.PARTIAL:
                take = real
            ended_before = ended_before or ended
            yield self._convert(outs, take)

    def _tensor(self, t: torch.Tensor, layout: str, batched: bool) -> torch.Tensor:
        """A batch (or, batched=False, one sample) with the dtype, layout and device asked for."""
        lead = 1 if batched else 0
        if self.labels_int64 and not t.dtype.is_floating_point and t.dim() == lead + 1 and t.shape[lead] == 1:
            t = t.reshape(t.shape[:lead]).to(torch.int64)  # labels: (B,) int64, like default collation
        elif t.is_floating_point():
            if self.dtype is not None and t.dtype != self.dtype:
                t = t.to(self.dtype)
            if self.channels_last and t.dim() == lead + 3 and layout == "HWC":
                # NCHW view with channels_last strides: zero-copy
                t = t.permute(0, 3, 1, 2) if batched else t.permute(2, 0, 1)
        if t.device != self.device:
            if self.device.type == "cuda" and t.device.type == "cpu":
                t = t.pin_memory().to(self.device, non_blocking=True)
            else:
                t = t.to(self.device)
        elif self.pin_memory and t.device.type == "cpu" and torch.cuda.is_available():
            t = t.pin_memory()
        return t

    def _convert(self, outs: tuple[TensorList, ...], take: int | None) -> Any:
        if self.collate_fn is not None:
            return self._collate(outs, take)
        tensors = []
        for tl in outs:
            t = plain(tl).as_tensor()
            tensors.append(self._tensor(t[:take] if take is not None else t, tl.layout(), True))
        if self.output_map is not None:
            return dict(zip(self.output_map, tensors))
        return tuple(tensors)

    def _collate(self, outs: tuple[TensorList, ...], take: int | None) -> Any:
        """collate_fn gets what torch's gets: a list of samples, each a tuple of the outputs (a dict
        with output_map), already converted; samples of different shapes are fine here."""
        columns: list[list[torch.Tensor]] = []
        for tl in outs:
            if tl.is_dense_tensor():
                t = plain(tl).as_tensor()
                columns.append(list(self._tensor(t[:take] if take is not None else t, tl.layout(), True).unbind(0)))
            else:
                samples = tl.samples[:take] if take is not None else tl.samples
                columns.append([self._tensor(x, tl.layout(), False) for x in samples])
        if self.output_map is not None:
            items: list[Any] = [dict(zip(self.output_map, row)) for row in zip(*columns)]
        else:
            items = [tuple(row) for row in zip(*columns)]
        return self.collate_fn(items)  # type: ignore[misc]

    # -- checkpointing -------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Where the loop stands: batches already yielded count, prefetched ones do not."""
        if self._resume is not None:  # loaded, not yet iterated: the same state again
            return dict(self._resume)
        return {"epoch": self.epoch, "batches": self._batches_done, "ended": self._ended,
                "pipeline": self.pipe.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """The next iter() resumes right after the last batch that was yielded: the rest of the
        saved epoch, or the whole next epoch when the state was saved at an epoch's end."""
        for key in ("epoch", "batches", "pipeline"):
            if key not in state:
                raise ArgumentError(f"DataLoader.load_state_dict: the state has no `{key}`")
        self._resume = dict(state)
        self._epoch_set = False

    def shutdown(self) -> None:
        self.pipe.shutdown()


class _SetEpochHook:
    """A sampler's set_epoch() that also tells the loader (`DataLoader._hook_sampler`). A pickled
    or copied sampler gets its class's own set_epoch back (the hook names the loader, which is
    not part of the sampler's state)."""

    def __init__(self, sampler: Any, loader: "weakref.ref[DataLoader]") -> None:
        self.sampler, self.own, self.loader = sampler, sampler.set_epoch, loader

    def __call__(self, epoch: int) -> None:
        self.own(epoch)
        dl = self.loader()
        if dl is not None and dl.sampler is self.sampler:
            dl.follow_set_epoch()

    def __reduce__(self) -> tuple[Any, ...]:
        # restored before the sampler's own attributes, so this finds its class's method
        return getattr, (self.sampler, "set_epoch")

