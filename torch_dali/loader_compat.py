"""torch.utils.data.DataLoader's arguments translated for `torch_dali.DataLoader`, and `loader.dataset`.

A loop written for torch's DataLoader passes names whose torch meaning (worker processes, samplers
yielding indices) has a different shape here: each is done the torch_dali way where it has a
meaning, or refused with what to use instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch.utils.data import DistributedSampler, RandomSampler, SequentialSampler

from .errors import ArgumentError, ArgumentTypeError

_NO_WORKERS = ("torch_dali starts no worker processes: its ops run on threads of this process "
               "(num_workers -> num_threads) and every random draw is seeded per sample from `seed`")


@dataclass
class LoaderArgs:
    """What the torch-style arguments come to."""

    shuffle: bool | None = None  # every reader's random_shuffle, when given
    seed: int | None = None  # the pipeline's seed (seed= or generator=)
    shard_seed: int | None = None  # a DistributedSampler's seed (the shards only)
    rank: int | None = None
    world_size: int | None = None
    num_threads: int | None = None
    prefetch: int | None = None  # prefetch_queue_depth
    timeout: float | None = None  # seconds per batch
    collate_fn: Callable[[list[Any]], Any] | None = None
    sampler: DistributedSampler | None = None  # whose set_epoch() the loader follows


def _int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ArgumentError(f"DataLoader: `{name}` must be an integer >= {low}, got {value!r}")
    return value


def _same(name: str, a: Any, b: Any, what: str) -> Any:
    if a is not None and b is not None and a != b:
        raise ArgumentError(f"DataLoader: {name}={a!r} differs from {what}'s {b!r}")
    return a if a is not None else b


def translate(*, shuffle: bool | None, sampler: Any, batch_sampler: Any, num_workers: int | None,
              collate_fn: Any, timeout: float, worker_init_fn: Any, multiprocessing_context: Any,
              generator: Any, prefetch_factor: int | None, persistent_workers: bool,
              pin_memory_device: str, in_order: bool, seed: int | None, num_threads: int | None,
              rank: int | None, world_size: int | None) -> LoaderArgs:
    a = LoaderArgs(shuffle=None if shuffle is None else bool(shuffle), seed=seed, rank=rank,
                   world_size=world_size, num_threads=num_threads)
    if batch_sampler is not None:
        raise ArgumentError("DataLoader: `batch_sampler` is not supported: the pipeline's reader makes "
                            "the batches; use batch_size= and drop_last= (or last_batch_policy=)")
    if worker_init_fn is not None:
        raise ArgumentError(f"DataLoader: `worker_init_fn` has nothing to run in: {_NO_WORKERS}; do "
                            "per-process set-up before making the loader")
    if multiprocessing_context is not None:
        raise ArgumentError(f"DataLoader: `multiprocessing_context`: {_NO_WORKERS}")
    if pin_memory_device:
        raise ArgumentError("DataLoader: `pin_memory_device`: use device= (where batches are delivered; "
                            "CPU batches bound for CUDA are pinned on the way)")
    for name, v in (("persistent_workers", persistent_workers), ("in_order", in_order)):
        if not isinstance(v, bool):  # accepted: threads persist across epochs, batches come in order
            raise ArgumentError(f"DataLoader: `{name}` must be True or False, got {v!r}")
    if num_workers is not None:
        a.num_threads = _same("num_threads", num_threads, max(1, _int("num_workers", num_workers, 0)),
                              "num_workers")
    if prefetch_factor is not None:
        a.prefetch = _int("prefetch_factor", prefetch_factor, 1)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
        raise ArgumentError(f"DataLoader: `timeout` must be seconds >= 0, got {timeout!r}")
    a.timeout = float(timeout) if timeout > 0 else None
    if collate_fn is not None and not callable(collate_fn):
        raise ArgumentTypeError(f"DataLoader: `collate_fn` must be callable, got {type(collate_fn).__name__}")
    a.collate_fn = collate_fn
    if generator is not None:
        if not isinstance(generator, torch.Generator):
            raise ArgumentTypeError(f"DataLoader: `generator` must be a torch.Generator, got "
                                    f"{type(generator).__name__}")
        a.seed = _same("seed", seed, int(generator.initial_seed()), "generator")
    if sampler is not None:
        _from_sampler(a, sampler)
    return a


def _from_sampler(a: LoaderArgs, sampler: Any) -> None:
    if a.shuffle is not None:
        raise ArgumentError("DataLoader: `sampler` and `shuffle` cannot both be given (as in torch)")
    if isinstance(sampler, DistributedSampler):
        if not sampler.shuffle:
            raise ArgumentError(
                "DataLoader: DistributedSampler(shuffle=False) interleaves the ranks (r, r+R, ...); "
                "unshuffled shards here are DALI's contiguous ranges: pass shuffle=False with rank= and "
                "world_size=, or exact=True to read each sample once for evaluation")
        if sampler.drop_last:
            raise ArgumentError("DataLoader: DistributedSampler(drop_last=True) is not supported: shards "
                                "here are drop_last=False's (padded to equal length)")
        a.rank = _same("rank", a.rank, sampler.rank, "the sampler")
        a.world_size = _same("world_size", a.world_size, sampler.num_replicas, "the sampler")
        a.shuffle, a.shard_seed, a.sampler = True, int(sampler.seed), sampler
    elif isinstance(sampler, RandomSampler):
        if sampler.replacement or sampler.num_samples != len(sampler.data_source):
            raise ArgumentError("DataLoader: RandomSampler with replacement or num_samples is not "
                                "supported: each epoch here is one permutation of the data set")
        a.shuffle = True
        if sampler.generator is not None and a.seed is None:
            a.seed = int(sampler.generator.initial_seed())
    elif isinstance(sampler, SequentialSampler):
        a.shuffle = False
    else:
        raise ArgumentError(
            f"DataLoader: a `sampler` of type {type(sampler).__name__} cannot steer the pipeline's "
            "reader, which picks the samples itself (a global permutation per epoch, sharded by rank "
            "as DistributedSampler): pass shuffle=, seed=, rank=/world_size= or a DistributedSampler, "
            "and choose the files with the reader's file_list= or files=")


def _plain(x: torch.Tensor) -> Any:
    """A one-element integer tensor (a label) as an int, like a torch data set's targets."""
    if x.numel() == 1 and not x.dtype.is_floating_point and x.dtype != torch.bool:
        return int(x.reshape(()))
    return x


class LoaderDataset:
    """`loader.dataset`: the data set the loader's reader reads, every rank's samples, before
    sharding and shuffling. `ds[i]` reads sample i now: the reader's outputs for it (encoded data,
    then the label as an int); `ds.source(i)` names its file or record; `ds.classes` (and
    `class_to_idx`) exist when the reader knows the class names (a folder of class folders)."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader

    def __len__(self) -> int:
        return int(self._reader.meta()["epoch_size"])

    def __getitem__(self, index: int) -> tuple[Any, ...]:
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"loader.dataset indices must be integers, got {type(index).__name__}")
        return tuple(_plain(t) for t in self._reader.sample(index))

    def source(self, index: int) -> str:
        return self._reader.source(index)

    @property
    def classes(self) -> list[str]:
        names = self._reader.classes
        if names is None:
            raise AttributeError(f"loader.dataset has no `classes`: reader '{self._reader.node.name}' "
                                 "does not know class names (only a folder of class folders does)")
        return list(names)

    @property
    def class_to_idx(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.classes)}
