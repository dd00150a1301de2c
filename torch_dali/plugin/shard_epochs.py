"""Epochs of a framework iterator given `reader_name=`, counted as DALI 2.4 counts them.

Every rank of a sharded job must take the same number of steps in an epoch, or a collective
(DDP's all-reduce) waits for ever. Shards differ by a sample when the dataset does not divide
evenly, so the epoch is as long as the largest shard, rounded up to whole batches, on every rank
(the reader's stream simply runs on into the next epoch's samples). Each rank works this out for
all shards from the reader's metadata alone, so they agree without talking:

* FILL without padding: the samples a shard read past its end count towards its next epoch, which
  is then shorter; the next epoch's length is the most any shard still has to read, in batches.
* PARTIAL: every epoch has the same length; a pipeline whose shard ran out returns a shorter batch,
  or an empty one (`takes`).
* DROP: an epoch ends before the first batch that would reach past any shard's end.
* With the reader's padding every shard has the same size and every epoch the same length.

With `stick_to_shard=False` each pipeline moves to the next shard at every epoch, as its reader does.
A reader whose shuffled shards are DistributedSampler's (`even_shards`: ceil(n/R) samples on every
rank, a choice of conformance/on_purpose.md) is counted with those sizes instead, so PARTIAL does not
cut a rank's last sample (which no other rank reads) and FILL's carry-over matches what it read.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np


class ShardEpochs:
    """The step counter of one iterator over pipelines that read shards of one dataset."""

    def __init__(self, metas: list[dict[str, Any]], policy: str, batch_size: int, padded: bool,
                 even: bool = False, sizes_of: Callable[[int], list[int]] | None = None) -> None:
        first = metas[0]
        for key in ("epoch_size", "number_of_shards"):
            if any(m[key] != first[key] for m in metas):
                raise ValueError(f"the pipelines' readers disagree on `{key}`")
        self.policy, self.batch_size = policy, batch_size
        n, shards = int(first["epoch_size"]), int(first["number_of_shards"])
        self.padded = bool(padded or first.get("pad_last_batch"))
        self.stick = bool(first.get("stick_to_shard"))
        self.shard_ids = np.array([int(m["shard_id"]) for m in metas], dtype=np.int64)
        k = np.arange(shards, dtype=np.int64)
        self.shard_sizes = (k + 1) * n // shards - k * n // shards  # shard k's size, fixed
        if even:  # the reader's shuffled split (DistributedSampler's): ceil(n/R) on every rank
            self.shard_sizes = np.full(shards, math.ceil(n / shards), dtype=np.int64)
        self.sizes = self.shard_sizes.copy()  # what each rank's shard holds this epoch (FILL)
        self.ahead = np.zeros(shards, dtype=np.int64)  # samples each rank already read of it (FILL)
        if policy == "DROP":
            self.size = int(self.shard_sizes.min())
        elif self.padded:
            self.size = int(first["epoch_size_padded"]) // shards
        else:
            self.size = math.ceil(math.ceil(n / shards) / batch_size) * batch_size
        self.counter = 0
        # a reader that says what each rank reads per epoch (whole tar files: sizes change with the
        # epoch) is counted by that instead of the rotation of contiguous shards
        self.sizes_of, self.reader_epoch = sizes_of, 0
        if sizes_of is not None:
            self.stick = True  # the sizes are per rank already
            self._take_sizes(0)

    def _take_sizes(self, epoch: int) -> None:
        """The sizes the reader says for `epoch` (only with `sizes_of`)."""
        if self.sizes_of is None:
            return
        self.reader_epoch = epoch
        self.sizes = np.array(self.sizes_of(epoch), dtype=np.int64)
        self.shard_sizes = self.sizes.copy()
        if self.policy == "DROP":
            self.size = int(self.sizes.min())
        else:
            self.size = math.ceil(int((self.sizes - self.ahead).max()) / self.batch_size) * self.batch_size

    # -- stepping ------------------------------------------------------------------------------
    def ended(self) -> bool:
        return self.counter >= self.size

    def overran(self, extra: int = 0) -> bool:
        """DROP: whether the samples counted (plus `extra`) reach past some rank's shard: the batch
        that did so is not returned, and the epoch ends."""
        if self.policy != "DROP":
            return False
        return bool(np.any(self.ahead + self.counter + extra > self.sizes))

    def advance(self) -> None:
        self.counter += self.batch_size

    def takes(self) -> list[int] | None:
        """PARTIAL: how many samples of the batch just counted each pipeline returns (None: all)."""
        if self.policy != "PARTIAL":
            return None
        left = self.batch_size - (self.counter - self.shard_sizes[self.shard_ids])
        if not np.any(left < self.batch_size):
            return None
        return [int(max(0, min(self.batch_size, x))) for x in left]

    def __len__(self) -> int:
        return self.size // self.batch_size if self.policy == "DROP" else math.ceil(self.size / self.batch_size)

    # -- epochs --------------------------------------------------------------------------------
    def next_epoch(self) -> None:
        fill = self.policy == "FILL" and not self.padded
        if fill:  # what each rank read past its shard's end starts its next epoch
            self.counter -= int(self.ahead.min())
            self.ahead = self.ahead + self.counter - self.sizes
            self.counter = int(self.ahead.min())
        else:
            self.counter = 0
        if self.sizes_of is not None:
            self._take_sizes(self.reader_epoch + 1)
            if fill and self.size == 0:  # read this whole epoch ahead already: on to the next
                self.ahead[:] = 0
                self.counter = 0
                self._take_sizes(self.reader_epoch + 1)
            return
        if not self.stick:
            self.shard_ids = (self.shard_ids + 1) % len(self.shard_sizes)
        if not fill:
            return
        if not self.stick:
            self.sizes = np.roll(self.sizes, 1)
        self.size = math.ceil(int((self.sizes - self.ahead).max()) / self.batch_size) * self.batch_size
        if self.size == 0:  # read so far ahead that this epoch is done already: on to the one after
            self.ahead = np.zeros_like(self.ahead)
            self.counter = 0
            self.sizes = np.roll(self.sizes, 1)
            self.size = math.ceil(int(self.sizes.max()) / self.batch_size) * self.batch_size

    # -- checkpoints ---------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        return {"counter": int(self.counter), "size": int(self.size), "ahead": self.ahead.tolist(),
                "sizes": self.sizes.tolist(), "shard_ids": self.shard_ids.tolist(),
                "reader_epoch": int(self.reader_epoch)}

    def load(self, data: dict[str, Any]) -> None:
        shards = len(self.shard_sizes)

        def ints(v: Any, count: int) -> np.ndarray:
            if not (isinstance(v, list) and len(v) == count and all(isinstance(x, int) and not isinstance(x, bool)
                                                                   and abs(x) < 1 << 62 for x in v)):
                raise ValueError(f"expected {count} integers, got {v!r}"[:200])
            return np.array(v, dtype=np.int64)

        counter, size = data.get("counter"), data.get("size", self.size)
        if not all(isinstance(x, int) and not isinstance(x, bool) and abs(x) < 1 << 62 for x in (counter, size)):
            raise ValueError(f"counter {counter!r} / size {size!r}")
        # what state() can give: a step past the end at most, no negative count, a shard that exists
        if not 0 <= counter <= size + self.batch_size:
            raise ValueError(f"counter {counter} outside its epoch of {size} samples")
        self.counter, self.size = counter, size
        epoch = data.get("reader_epoch", 0)
        if self.sizes_of is not None and isinstance(epoch, int) and 0 <= epoch < 1 << 32:
            self._take_sizes(epoch)  # sizes and size of that epoch; `size` saved below wins
            self.size = size
        if "ahead" in data:
            self.ahead = ints(data["ahead"], shards)
            self.sizes = ints(data["sizes"], shards)
            self.shard_ids = ints(data["shard_ids"], len(self.shard_ids))
            ids_ok = ((0 <= self.shard_ids) & (self.shard_ids < shards)).all()
            if (self.ahead < 0).any() or (self.sizes < 0).any() or not ids_ok:
                raise ValueError(f"negative counts or a shard id outside 0..{shards - 1}")
