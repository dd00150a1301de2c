"""`torch_dali.plugin.base_iterator` mirrors `nvidia.dali.plugin.base_iterator`: LastBatchPolicy
and the epoch bookkeeping DALI's framework iterators share.

Where an epoch ends, as in DALI 2.4:

* `reader_name=...`: the largest shard's size in whole batches on every rank, so ranks take the same
  steps (FILL carries what a shard read past its end into its next epoch; shard_epochs.py);
* `size=N`: after N samples (counted per batch; DALI's older way);
* neither (`size=-1`): when the pipeline raises StopIteration (an external source ran out). Then
  there is one pipeline, every batch is returned whole (FILL) and `reset()` starts the sources'
  next epoch; with `auto_reset` the iterator does it itself. `len()` is DALI's: 0.

`prepare_first_batch=True` (the default) runs the first batch when the iterator is made, as DALI
does, so a pipeline with no data fails there. `reset()` before an epoch ended is ignored (DALI
warns and ignores it too).
"""
from __future__ import annotations

import enum
import math
import warnings
from typing import Any, Sequence

from ..errors import ArgumentError, PipelineError
from ..graph.pipeline import Pipeline
from ..tensor_list import TensorList
from .shard_epochs import ShardEpochs


class LastBatchPolicy(enum.Enum):
    """What happens to the last batch of an epoch when the shard size is not a batch multiple.

    FILL: the batch is full; the extra samples come from the next epoch (or the reader's padding).
    DROP: the partial batch is not returned.
    PARTIAL: the batch is returned with only the samples that belong to the epoch.
    """

    FILL = 0
    DROP = 1
    PARTIAL = 2


class VariableBatchError(PipelineError, AssertionError):
    """A pipeline gave a batch of another size than its batch_size where the iterator counts
    samples by batches (`size=` or `reader_name=`); an AssertionError too, as DALI 2.4's is."""


def auto_reset_mode(v: Any) -> bool:
    if v in (True, "yes"):
        return True
    if v in (False, "no", None):
        return False
    raise ArgumentError(f"iterator: `auto_reset` must be True/'yes' or False/'no'/None, got {v!r}")


class BaseIterator:
    """Epochs, sizes and resets over one or more pipelines; subclasses turn batches into their
    framework's tensors (`_convert`)."""

    def __init__(self, pipelines: Pipeline | Sequence[Pipeline], size: int = -1, reader_name: str | None = None,
                 auto_reset: bool | str | None = False, fill_last_batch: bool | None = None,
                 last_batch_padded: bool = False, last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
                 prepare_first_batch: bool = True) -> None:
        name = type(self).__name__
        self._pipes = list(pipelines) if isinstance(pipelines, (list, tuple)) else [pipelines]
        if not self._pipes:
            raise ArgumentError(f"{name}: `pipelines` is empty")
        if fill_last_batch is not None:  # DALI's deprecated spelling
            last_batch_policy = LastBatchPolicy.FILL if fill_last_batch else LastBatchPolicy.PARTIAL
        if not isinstance(last_batch_policy, LastBatchPolicy):
            raise ArgumentError(f"{name}: `last_batch_policy` must be a LastBatchPolicy, got {last_batch_policy!r}")
        size = int(size)
        if size == 0:
            raise ArgumentError(f"{name}: Size cannot be 0 (give a positive `size`, -1, or `reader_name`)")
        if size > 0 and reader_name is not None:
            raise ArgumentError(f"{name}: give only one of `size` and `reader_name`")
        if reader_name is not None and last_batch_padded:
            raise ArgumentError(f"{name}: `last_batch_padded` comes from the reader when `reader_name` is given")
        self._unknown_size = size < 0 and reader_name is None
        if self._unknown_size and len(self._pipes) > 1:
            raise ArgumentError(f"{name}: Negative size is supported only for a single pipeline (the epoch then "
                                "ends when it raises StopIteration); give `size` or `reader_name`")
        if self._unknown_size:
            last_batch_policy, last_batch_padded = LastBatchPolicy.FILL, False
        if size > 0 and not reader_name:
            # DALI 2.4 warns here too (category `Warning`): a hand-given size can cut or repeat
            # samples where the reader's own shard size (reader_name=) would not
            warnings.warn(f"{name}: an epoch size given by hand (`size=`, `last_batch_padded=`) can miss "
                          "samples or repeat them when it does not match the reader's shards; "
                          "prefer `reader_name=` where there is a reader", Warning, stacklevel=3)
        self._policy = last_batch_policy
        self._auto_reset = auto_reset_mode(auto_reset)
        self._reader_name = reader_name
        self._given_size = size
        self._padded = last_batch_padded
        for p in self._pipes:
            p.build()
        self.batch_size = self._pipes[0].batch_size
        self._shards: ShardEpochs | None = None
        if reader_name is not None:
            try:
                readers = [p.reader(reader_name) for p in self._pipes]
                even = all(getattr(r, "even_shards", False) for r in readers)
                sizes_of = getattr(readers[0], "rank_sizes", None)  # whole-tar shards (webdataset)
                if sizes_of is None or sizes_of(0) is None:
                    sizes_of = None
                self._shards = ShardEpochs([p.reader_meta(reader_name) for p in self._pipes], last_batch_policy.name,
                                           self.batch_size, last_batch_padded, even, sizes_of)
            except ValueError as e:
                raise ArgumentError(f"{name}: {e}") from None
        self._counter = 0
        self._epoch_done = False
        self._ever_consumed = False
        self._first_batch: Any = None
        self._checkpointing = self._pipes[0].enable_checkpointing
        if any(p.enable_checkpointing != self._checkpointing for p in self._pipes):
            raise ArgumentError(f"{name}: all pipelines must have the same `enable_checkpointing`")
        restored = [p.is_restored_from_checkpoint for p in self._pipes]
        if any(restored):
            if not all(restored):
                raise ArgumentError(f"{name}: some but not all pipelines were restored from a checkpoint")
            data = [p.iterator_data for p in self._pipes]
            if any(d != data[0] for d in data):
                raise ArgumentError(f"{name}: the pipelines' checkpoints hold different iterator positions")
            self._load_state(data[0])
        self._initial_checkpoints = ([p.checkpoint(iterator_data=self._save_state()) for p in self._pipes]
                                     if self._checkpointing else [])
        if prepare_first_batch:
            try:
                self._first_batch = self._next_batch()
            except StopIteration:
                # a checkpoint taken at an epoch's end restores an iterator with nothing left in
                # that epoch: next() raises StopIteration until reset(), as in DALI 2.4; otherwise
                # no data is an error
                if not any(restored):
                    raise PipelineError(f"{name}: the pipeline has no data (its first batch raised "
                                        "StopIteration)") from None
                # ... and it counts as used, so a `for` loop resets it and reads the next epoch at
                # once, as the original iterator's next loop would (DALI 2.4: its failed first
                # next() leaves _ever_consumed set); else a resumed training had one empty epoch
                self._ever_consumed = True
        elif any(restored) and self._at_epoch_end():
            # the same without a first batch (DALI 2.4 gives an empty epoch first here: on_purpose.md)
            self._ever_consumed = True

    def _at_epoch_end(self) -> bool:
        """Whether next() would end the epoch (DROP: no whole batch is left in it)."""
        sh = self._shards
        if sh is not None:
            return sh.ended() or sh.overran(extra=self.batch_size)
        left = self._given_size - self._counter
        drop = self._policy == LastBatchPolicy.DROP and left < self._step()
        return not self._unknown_size and (self._epoch_done or left <= 0 or drop)

    # -- checkpoints -----------------------------------------------------------------------------
    def _save_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {"counter": self._counter, "epoch_done": self._epoch_done}
        if self._shards is not None:
            state["shards"] = self._shards.state()
        return state

    def _load_state(self, data: Any) -> None:
        if data is None:
            return
        if not isinstance(data, dict) or not isinstance(data.get("counter"), int):
            raise ArgumentError(f"{type(self).__name__}: the checkpoint's iterator position is malformed: {data!r}")
        self._counter = int(data["counter"])
        self._epoch_done = bool(data.get("epoch_done", False))
        if self._shards is not None and isinstance(data.get("shards"), dict):
            try:
                self._shards.load(data["shards"])
            except (ValueError, TypeError) as e:
                raise ArgumentError(f"{type(self).__name__}: the checkpoint's shard positions are malformed "
                                    f"({e})") from None

    def checkpoints(self) -> list[str]:
        """One checkpoint per pipeline, with this iterator's position: make the pipelines with
        `checkpoint=` and a new iterator over them continues from here."""
        if not self._checkpointing:
            raise ArgumentError(f"{type(self).__name__}: checkpointing is disabled (the pipelines need "
                                "enable_checkpointing=True)")
        if not self._ever_consumed:
            return list(self._initial_checkpoints)
        return [p.checkpoint(iterator_data=self._save_state()) for p in self._pipes]

    # -- sizes ---------------------------------------------------------------------------------
    def _shard_size(self) -> int:
        """The epoch's size given by hand (`size=`; with `reader_name` the shards count, see there)."""
        return int(self._given_size)

    def _step(self) -> int:
        """Samples one iteration counts with `size=`: DALI's size is the total over the pipelines,
        so a step counts every pipeline's batch."""
        return self.batch_size * len(self._pipes)

    def __len__(self) -> int:
        if self._unknown_size:
            return 0  # DALI's value where the epoch ends on StopIteration (its size is -1)
        if self._shards is not None:
            return len(self._shards)
        size = self._shard_size()
        if self._policy == LastBatchPolicy.DROP:
            return size // self._step()
        return math.ceil(size / self._step())

    @property
    def _size(self) -> int:
        """DALI's `_size`, which its examples read (resnet50's `ceil(loader._size / batch_size)`):
        the given `size` (-1 where the epoch ends on StopIteration) or, with `reader_name`, this
        epoch's length in samples on every rank (shard_epochs.py)."""
        if self._shards is None:
            return int(self._given_size)
        return self._shards.size

    @property
    def size(self) -> int:
        """DALI's `size` (its `_size`, see there)."""
        return self._size

    # -- iterating -----------------------------------------------------------------------------
    def __iter__(self) -> "BaseIterator":
        counter = self._shards.counter if self._shards is not None else self._counter
        if counter != 0 and self._ever_consumed:
            self._reset(quiet=True)  # a new `for` loop over a used iterator: the next epoch, if this one ended
        return self

    def __next__(self) -> Any:
        self._ever_consumed = True
        if self._first_batch is not None:
            batch, self._first_batch = self._first_batch, None
            return batch
        return self._next_batch()

    next = __next__

    def _run_all(self) -> list[tuple[TensorList, ...]]:
        """Each pipeline's next batch, scheduled as DALI's iterators schedule: the first batches
        before the first take, then one more right after each take (an external source's
        `source` is called one iteration ahead of what `pipe.run()` alone would call)."""
        for p in self._pipes:
            if p.empty():
                p.schedule_run()
        outs = [p.share_outputs() for p in self._pipes]
        if not self._unknown_size:
            # epochs are counted in whole batches: a shorter one would shift every epoch's end
            for o in (o for out in outs for o in out):
                if len(o) != self.batch_size:
                    raise VariableBatchError(f"{type(self).__name__}: a batch of {len(o)} samples where the "
                                             f"pipeline's batch_size is {self.batch_size}; with `size=` or "
                                             "`reader_name=` every batch must be full (use size=-1)")
        for p in self._pipes:
            p.schedule_run()
        return outs

    def _reset_pipes(self) -> None:
        for p in self._pipes:
            p.reset()
            if p.empty():  # a source ran out and started over: schedule its next epoch now, as DALI
                p.schedule_run()

    def _next_batch(self) -> Any:
        if self._unknown_size:
            try:
                outs = self._run_all()
            except StopIteration:
                if self._auto_reset:
                    self.reset()
                raise
            self._counter += self.batch_size
            return [self._convert(o, None) for o in outs]
        if self._shards is not None:
            return self._next_shard_batch(self._shards)
        size = self._shard_size()
        if self._epoch_done or self._counter >= size:
            self._end_epoch()
        left = size - self._counter
        step = self._step()
        if self._policy == LastBatchPolicy.DROP and left < step:
            self._run_all()  # consume the partial batch so the next epoch starts right
            self._counter += step
            self._end_epoch()
        outs = self._run_all()
        if self._policy == LastBatchPolicy.PARTIAL and left < step:
            # the epoch's last samples, pipeline after pipeline (DALI leaves out pipelines with none)
            takes = [min(self.batch_size, left - k * self.batch_size) for k in range(len(outs))]
            results = [self._convert(o, t) for o, t in zip(outs, takes) if t > 0]
        else:
            results = [self._convert(o, None) for o in outs]
        self._counter += step
        if self._counter >= size:
            self._epoch_done = True
        return results

    def _next_shard_batch(self, sh: ShardEpochs) -> Any:
        """With `reader_name`: DALI's step accounting over all shards (shard_epochs.py)."""
        if sh.ended():
            self._end_epoch()
        outs = self._run_all()
        sh.advance()
        self._counter = sh.counter
        if sh.overran():  # DROP: this batch reaches past a shard's end: dropped, the epoch ends
            self._end_epoch()
        takes = sh.takes()  # PARTIAL: a pipeline whose shard ran out returns fewer samples, or none
        return [self._convert(o, None if takes is None else t) for o, t in zip(outs, takes or [None] * len(outs))]

    def _convert(self, outs: tuple[TensorList, ...], take: int | None) -> Any:
        raise NotImplementedError

    def _end_epoch(self) -> None:
        """Ends the epoch with StopIteration; with auto_reset the next `for` loop starts the next."""
        if self._auto_reset:
            self.reset()
        raise StopIteration

    def reset(self) -> None:
        """Starts the next epoch; samples already read past the epoch's end count towards it."""
        self._reset(quiet=False)

    def _reset(self, quiet: bool) -> None:
        if self._unknown_size:
            self._counter = 0
            self._reset_pipes()
            return
        sh = self._shards
        if sh is not None:
            if sh.overran(extra=self.batch_size) and not sh.ended():
                self._run_all()  # DROP: the batch that would reach past a shard's end is taken and dropped
                sh.advance()
            if not sh.ended():
                if not quiet:
                    warnings.warn(f"{type(self).__name__}: reset() before the epoch ended is ignored (as in DALI)",
                                  RuntimeWarning, stacklevel=3)
                return
            sh.next_epoch()
            self._counter = sh.counter
            self._reset_pipes()
            return
        size = self._shard_size()
        if (self._policy == LastBatchPolicy.DROP and not self._epoch_done
                and 0 < size - self._counter < self._step()):
            self._run_all()  # DROP: the partial batch left in the epoch is taken and dropped first
            self._counter += self._step()
        if self._counter < size and not self._epoch_done:
            if quiet:
                return
            warnings.warn(f"{type(self).__name__}: reset() before the epoch ended is ignored (as in DALI)",
                          RuntimeWarning, stacklevel=2)
            return
        # As DALI 2.4: only FILL without padding carries what it read past the end into the next
        # epoch, and modulo the size (a batch larger than the size still leaves each epoch a
        # batch); DROP's dropped batch and PARTIAL's cut samples start the next epoch afresh
        fill = self._policy == LastBatchPolicy.FILL and not self._padded
        self._counter = self._counter % size if fill else 0
        self._epoch_done = False
        self._reset_pipes()
