"""What every reader shares: DALI's sharding, epoch wrap-around and padding, shuffling, resumable state.

Semantics checked against DALI 2.4 (n samples, R = num_shards, r = shard_id):

* Shard s holds the contiguous sample range [n*s//R, n*(s+1)//R); R > n is an error.
* Readers never stop. Without `pad_last_batch` the sample stream runs on across epochs, so one
  batch may hold the end of one epoch and the start of the next. With `pad_last_batch` a shard is
  first padded to ceil(n/R) samples and its last batch is then filled, both by repeating the
  shard's last sample; the next epoch starts on a fresh batch.
* With `stick_to_shard=False` shard (r + epoch) % R is read in each epoch; with True, always r.
* `epoch_size()` is n, or R*ceil(n/R) with `pad_last_batch` (what DALI's `Pipeline.epoch_size`
  gives); `meta()` has DALI's `reader_meta()` keys.

Shuffling differs from DALI on purpose. DALI shuffles within a buffer of `initial_fill` samples;
here `random_shuffle=True` draws a true global permutation per epoch,
`rng.permutation(seed, epoch, n)`, and rank r reads exactly the list torch's
`DistributedSampler(shuffle=True, seed=seed, drop_last=False)` yields for that epoch: the
permutation wrapped to R*ceil(n/R) entries, then every R-th entry from r. With one shard `seed` is
the op's (derived from the pipeline's); with several it must be the same on every rank, so it is
the `seed=` given to the reader itself, else 0 (DistributedSampler's default), never the
pipeline's: DALI code commonly gives each rank its own pipeline seed (`seed=12 + rank`) or none (a
random one per process), and DALI's shards stay disjoint whatever the seeds; a per-rank seed here
would make ranks read overlapping samples and miss others. Every rank so reads ceil(n/R) samples
per epoch (`even_shards`; no rotation). With `stick_to_shard=True`, shard r's own range is permuted.
`shuffle_after_epoch` (as DALI: shards fixed, meta's stick_to_shard=1) permutes the whole dataset
per epoch with `shuffle_after_epoch_seed` (or a fixed default); rank r reads DALI's range of it.

DALI's other loader arguments. `initial_fill` sizes the shuffle buffer of a stream (webdataset);
index-based readers draw a whole permutation (no samples held), so it does not change them. `read_ahead` asks the OS to
read each data file into the page cache when opened (posix_fadvise WILLNEED; readers.file reads
whole files, read ahead already). `skip_cached_images` skips samples a decoder cache holds; there
is none (decoders' `cache_size` is ignored): DALI with an empty cache. `lazy_init` defers listing
to the first use (errors come then). No effect: `dont_use_mmap` (files are always read with pread:
a mapped file that another process truncates is SIGBUS, in DALI too; pread makes it a DataError
naming the file), `prefetch_queue_depth` (whole batches are prefetched), `tensor_init_bytes`.

Bad data (`on_error`, on readers.file and readers.mxnet). "raise": an error naming the sample.
"skip": the reader leaves it out and refills the batch from the samples that follow (an epoch with
k bad samples yields n - k; `pad_last_batch` pads with its last good sample). A consumer that skips
too (`decoders.image(on_error="skip")`) registers a check with `add_check`, run by the reader on
every sample before it enters the batch, so the reader stays the one place that knows positions,
epochs and labels. Bad samples are remembered and logged once in `skip_log` (torch_dali.skips);
the stream depends only on the seed and the data, so skipping is deterministic.
"""
from __future__ import annotations

import abc
import math
from typing import Any, Callable, Sequence

import torch

from ...errors import ArgumentError, DataError, ListingError
from ...rng import permutation
from ...skips import SkipLog
from ...tensor_list import TensorList
from .._operator import BatchContext, Operator
from .._schema import Arg, non_negative, one_of, positive
from .source_names import Sources

_DEFAULT_SHUFFLE_AFTER_EPOCH_SEED = 0x5EED_DA11
_SHARED_SHARD_SEED = 0  # DistributedSampler's default seed

READER_ARGS: tuple[Arg, ...] = (
    Arg("random_shuffle", "bool", False, "shuffle with a global permutation per epoch"),
    Arg("shard_id", "int", 0, "index of the shard to read", check=non_negative),
    Arg("num_shards", "int", 1, "number of parts the data is split into", check=positive),
    Arg("stick_to_shard", "bool", False, "read the same shard every epoch"),
    Arg("pad_last_batch", "bool", False, "pad the shard and its last batch with its last sample"),
    Arg("shuffle_after_epoch", "bool", False, "shuffle the whole dataset each epoch; shards fixed"),
    Arg("shuffle_after_epoch_seed", "int", None, "seed of shuffle_after_epoch's permutations"),
    Arg("initial_fill", "int", 1024, "shuffle buffer of a streamed reader (webdataset); index-based "
        "readers draw a whole permutation, so it does not change them (> 0 with random_shuffle)"),
    Arg("read_ahead", "bool", False, "ask the OS to read each data file into memory when opened"),
    Arg("prefetch_queue_depth", "int", 1, "accepted; no effect", check=positive),
    Arg("skip_cached_images", "bool", False, "skip samples a decoder cache holds (there is no "
        "decoder cache, so none is skipped)"),
    Arg("lazy_init", "bool", False, "list the dataset on first use rather than at build"),
    Arg("dont_use_mmap", "bool", False, "accepted; files are always read with pread (no SIGBUS when one is cut)"),
    Arg("tensor_init_bytes", "int", 1048576, "accepted; no effect"),
)

ON_ERROR_ARG = Arg("on_error", "str", "raise",
                   "a sample that cannot be read or decoded: 'raise' (an error naming it) or 'skip' "
                   "(leave it out, refill the batch; listed by torch_dali.skips.skipped)",
                   check=one_of("raise", "skip"))

#: a consumer's check of one sample's data: raises (DataError) when the consumer cannot use it
SampleCheck = Callable[[torch.Tensor, str], None]


def error_reason(e: BaseException, source: str) -> str:
    """The part of an error message after the sample's name ("... x.jpg: <reason>")."""
    msg = str(e).strip() or type(e).__name__
    if source:
        k = msg.find(source + ": ")
        if k >= 0:
            return msg[k + len(source) + 2:]
    return msg


class _EpochOrder:
    """One epoch's sample indices for this shard: `base`, then `pad` copies of its last index."""

    __slots__ = ("base", "pad")

    def __init__(self, base: Sequence[int], pad: int = 0) -> None:
        self.base = base
        self.pad = max(0, pad)

    def __len__(self) -> int:
        return len(self.base) + self.pad

    def take(self, start: int, stop: int) -> list[int]:
        head = list(self.base[start:stop])
        extra = min(stop, len(self)) - max(start, len(self.base))
        return head + [self.base[-1]] * max(0, extra)

    def last(self) -> int:
        return self.base[-1]


class ReaderBase(Operator, metaclass=abc.ABCMeta):
    """A batch op with no inputs that lists a dataset once and hands out (data, label) batches.
    Subclasses provide `_list`, `_load` and `_source`."""

    sample_wise = False
    takes_checks = True
    classes: list[str] | None = None  # class names by label, where the reader knows them

    def setup(self) -> None:
        a = self.args
        self.shard_id: int = a["shard_id"]
        self.num_shards: int = a["num_shards"]
        self.pad: bool = a["pad_last_batch"]
        self.stick: bool = a["stick_to_shard"]
        self.shuffle: bool = a["random_shuffle"]
        self.after_epoch: bool = a["shuffle_after_epoch"]
        if self.shard_id >= self.num_shards:
            raise ArgumentError(f"{self.name}: `shard_id` must be < num_shards ({self.num_shards}), "
                                f"got {self.shard_id}")
        if self.after_epoch and self.stick:
            raise ArgumentError(f"{self.name}: `stick_to_shard` cannot be used with shuffle_after_epoch")
        # DALI 2.4 ignores the buffer's size unless it shuffles, and then dies on one below 1 (SIGFPE)
        if self.shuffle and a["initial_fill"] <= 0:
            raise ArgumentError(f"{self.name}: `initial_fill` (the shuffle buffer's size) must be > 0 with "
                                f"random_shuffle, got {a['initial_fill']}")
        self._check_args()
        self.epoch = 0
        self.position = 0
        self.batch_info = {"real": 0, "ended": False}
        self.last_sources = []
        self._n: int | None = None
        self._order_cache: tuple[int, _EpochOrder] | None = None
        self.skip: bool = a.get("on_error", "raise") == "skip"
        self.skip_log = SkipLog()
        self._bad: dict[int, tuple[str, str]] = {}  # index -> (op that refused it, why)
        self._checks: list[tuple[str, SampleCheck, Callable[[], None] | None]] = []
        self._misses = 0  # consecutive samples skipped (gives up after a whole dataset's worth)
        if not a["lazy_init"]:
            self._ensure_listed()

    # -- what subclasses provide ------------------------------------------------------------
    def _check_args(self) -> None:
        """Reader-specific argument checks (run at build)."""

    @abc.abstractmethod
    def _list(self) -> int:
        """Lists the dataset; returns the number of samples."""
        ...

    @abc.abstractmethod
    def _load(self, index: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(encoded data, label or None) of one sample; may run on several threads at once."""
        ...

    @abc.abstractmethod
    def _source(self, index: int) -> str:
        ...

    def _info(self, index: int) -> str:
        """Sample `index`'s `source_info()`: DALI's name for it (default: `_source`'s)."""
        return self._source(index)

    def source_info(self) -> Sequence[str]:
        return Sources(self._info, list(getattr(self, "_last_indices", [])))

    def _batch_labels(self, indices: list[int], labels: list[torch.Tensor | None]) -> TensorList:
        """The label output from what `_load` returned; dense when every label has one shape."""
        if labels and all(t is not None and t.shape == labels[0].shape for t in labels):
            return TensorList(torch.stack(labels))  # type: ignore[arg-type]
        return TensorList(labels)  # type: ignore[arg-type]

    # -- listing and shards --------------------------------------------------------------------
    def _ensure_listed(self) -> int:
        if self._n is None:
            try:
                n = self._list()
            except MemoryError:  # parsing a list or index near MAX_LIST_BYTES under a memory cap
                raise ListingError(f"{self.name}: not enough memory to read its lists or indexes") from None
            except DataError as e:
                if isinstance(e, RuntimeError):
                    raise
                raise ListingError(*e.args).with_traceback(e.__traceback__) from None
            if n == 0:
                raise ListingError(f"{self.name}: the dataset is empty ({self._describe_source()})")
            if self.num_shards > n:
                raise ArgumentError(f"{self.name}: `num_shards` ({self.num_shards}) must not exceed "
                                    f"the number of samples ({n})")
            self._n = n
        return self._n

    def _describe_source(self) -> str:
        return "no samples found"

    def _range(self, shard: int) -> range:
        n = self._ensure_listed()
        return range(n * shard // self.num_shards, n * (shard + 1) // self.num_shards)

    def _per_shard(self) -> int:
        return math.ceil(self._ensure_listed() / self.num_shards)

    def _seed(self) -> int:
        if self.after_epoch:
            s = self.args.get("shuffle_after_epoch_seed")
            return _DEFAULT_SHUFFLE_AFTER_EPOCH_SEED if s is None else int(s)
        node = self.node
        if self.shuffle and not self.stick and self.num_shards > 1 and not getattr(node, "seed_given", False):
            # every rank must draw the same global permutation, and DALI code gives each rank its
            # own pipeline seed (or none): only a seed given to the reader itself is shared
            return _SHARED_SHARD_SEED
        return int(node.seed)

    @property
    def even_shards(self) -> bool:
        """Every shard reads ceil(n/R) samples each epoch (the DistributedSampler split, not
        DALI's contiguous shards): what an iterator with `reader_name` must count epochs by."""
        return self.shuffle and not self.stick and not self.after_epoch and self.num_shards > 1

    def _make_order(self, epoch: int) -> _EpochOrder:
        n, R, r = self._ensure_listed(), self.num_shards, self.shard_id
        pad_to = self._per_shard() if self.pad else 0
        if self.after_epoch:  # DALI: whole dataset permuted per epoch, fixed contiguous shard
            perm = permutation(self._seed(), epoch, n)
            rng = self._range(r)
            return _EpochOrder(perm[rng.start:rng.stop], pad_to - len(rng))
        if self.shuffle and self.stick:
            rng = self._range(r)
            perm = permutation(self._seed(), epoch, len(rng))
            return _EpochOrder([rng.start + p for p in perm], pad_to - len(rng))
        if self.shuffle:  # DistributedSampler's list for rank r
            perm = permutation(self._seed(), epoch, n)
            total = self._per_shard() * R
            while len(perm) < total:
                perm += perm[: total - len(perm)]
            return _EpochOrder(perm[r:total:R])
        rng = self._range(r if self.stick else (r + epoch) % R)
        return _EpochOrder(rng, pad_to - len(rng))

    def epoch_order(self, epoch: int) -> list[int]:
        """The sample indices this shard reads in `epoch` (before the last batch is filled)."""
        o = self._order(epoch)
        return o.take(0, len(o))

    def _order(self, epoch: int) -> _EpochOrder:
        if self._order_cache is None or self._order_cache[0] != epoch:
            self._order_cache = (epoch, self._make_order(epoch))
        return self._order_cache[1]

    def _next_indices(self, batch_size: int) -> list[int]:
        out: list[int] = []
        self.batch_info = {"real": batch_size, "ended": False}
        while len(out) < batch_size:
            order = self._order(self.epoch)
            stop = min(len(order), self.position + batch_size - len(out))
            out += order.take(self.position, stop)
            self.position = stop
            if self.position >= len(order):
                self._epoch_ended(len(out))
                if self.pad and len(out) < batch_size:
                    out += [order.last()] * (batch_size - len(out))
                self.epoch += 1
                self.position = 0
        return out

    def _epoch_ended(self, real: int) -> None:
        """Notes that the epoch ended inside this batch after `real` samples (the rest is padding or
        the next epoch): what a loader needs to end epochs right when samples were skipped."""
        if not self.batch_info["ended"]:
            self.batch_info = {"real": real, "ended": True}

    # -- bad data -----------------------------------------------------------------------------
    def add_check(self, op: str, check: SampleCheck, reset: Callable[[], None] | None = None) -> None:
        """A consumer of this reader's data output that skips bad samples: `check(data, source)`
        raises on a sample it cannot use, which the reader then leaves out (logged under `op`).
        `reset()` runs before each batch (the consumer drops what it kept from the last one)."""
        self._checks.append((op, check, reset))

    def reject(self, message: str, source: str, reason: str) -> None:
        """A problem found while listing: an error (`message`), or with on_error="skip" a log entry."""
        if not self.skip:
            raise DataError(message)
        self.skip_log.add(self.name, source, reason)

    def _fetch(self, index: int) -> tuple[torch.Tensor, torch.Tensor | None] | tuple[str, str]:
        """(data, label) of a sample every check accepts, else (op, reason) of its first refusal."""
        known = self._bad.get(index)
        if known is not None:
            return known
        source = self._source(index)
        try:
            data, label = self._load(index)
        except Exception as e:  # noqa: BLE001 - any failure to read a sample is about that sample
            if not self.skip:
                raise
            return self.name, error_reason(e, source)
        for op, check, _ in self._checks:
            try:
                check(data, source)
            except Exception as e:  # noqa: BLE001 - the consumer said no: its reason is logged
                return op, error_reason(e, source)
        return data, label

    def _give_up_after(self) -> int:
        return self.num_shards * self._per_shard() * self.num_shards

    def _next_good(self, ctx: BatchContext) -> list[tuple[int, torch.Tensor, torch.Tensor | None]]:
        """A full batch of samples that read (and pass the checks), refilled past bad ones."""
        bs = ctx.batch_size
        for _, _, reset in self._checks:
            if reset is not None:
                reset()
        picked: list[tuple[int, torch.Tensor, torch.Tensor | None]] = []
        self.batch_info = {"real": bs, "ended": False}
        while len(picked) < bs:
            order = self._order(self.epoch)
            stop = min(len(order), self.position + bs - len(picked))
            chunk = order.take(self.position, stop)
            self.position = stop
            unique = list(dict.fromkeys(chunk))
            fetched = dict(zip(unique, ctx.map(lambda k: self._fetch(unique[k]), len(unique))))
            for i in chunk:  # logged here, in sample order, so the log is deterministic too
                r = fetched[i]
                if isinstance(r[0], str):
                    op, reason = r  # type: ignore[misc]
                    if i not in self._bad:
                        self._bad[i] = (op, reason)
                        self.skip_log.add(op, self._source(i), reason)
                    self._misses += 1
                else:
                    picked.append((i, r[0], r[1]))  # type: ignore[arg-type]
                    self._misses = 0
            if self._misses >= self._give_up_after():
                op, reason = next(reversed(self._bad.values()))
                raise DataError(f"{self.name}: the last {self._misses} samples were all skipped "
                                f"({len(self._bad)} bad samples, e.g. {op}: {reason}); no good "
                                "sample is left to read")
            if self.position >= len(order):
                self._epoch_ended(len(picked))
                if self.pad and picked:
                    picked += [picked[-1]] * (bs - len(picked))
                self.epoch += 1
                self.position = 0
        return picked

    # -- running ------------------------------------------------------------------------------
    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        self._ensure_listed()
        if self.skip or self._checks:
            picked = self._next_good(ctx)
            indices = [p[0] for p in picked]
            self.last_sources, self._last_indices = [self._source(i) for i in indices], indices
            return [TensorList([p[1] for p in picked]),
                    self._batch_labels(indices, [p[2] for p in picked])]
        indices = self._next_indices(ctx.batch_size)
        outputs = self._packed_batch(ctx, indices)
        if outputs is None:
            unique = list(dict.fromkeys(indices))  # padding repeats a sample: load it once
            rows = self._load_batch(ctx, unique)
            if rows is None:
                rows = ctx.map(lambda k: self._load(unique[k]), len(unique))
            loaded = dict(zip(unique, rows))
            outputs = self._assemble(indices, [loaded[i] for i in indices])
        self.last_sources, self._last_indices = Sources(self._source, indices), indices
        return outputs

    def _packed_batch(self, ctx: BatchContext, indices: list[int]) -> list[TensorList] | None:
        """The outputs for `indices` (repeats included), the data packed in one buffer
        (`TensorList.from_packed`: no tensor per sample), or None for the general path."""
        return None

    def _load_batch(self, ctx: BatchContext, indices: list[int]) -> list[tuple[Any, ...]] | None:
        """All of a batch's samples in one call, or None to load them one by one on the threads."""
        return None

    def _assemble(self, indices: list[int], rows: list[tuple[Any, ...]]) -> list[TensorList]:
        """The outputs from each sample's loaded fields (default: data and label)."""
        return [TensorList([r[0] for r in rows]), self._batch_labels(indices, [r[1] for r in rows])]

    def output_layout(self, index: int) -> str:
        return ""

    # -- one sample, by index (DataLoader.dataset) ----------------------------------------------
    @property
    def may_skip(self) -> bool:
        """Whether samples may be left out (on_error="skip" here or in a consumer): an epoch's
        length is then known only as it is read."""
        return self.skip or bool(self._checks)

    def _index(self, index: int) -> int:
        n = self._ensure_listed()
        if not -n <= index < n:
            raise IndexError(f"{self.name}: sample {index} is out of range (the data set has {n})")
        return index % n

    def sample(self, index: int) -> tuple[torch.Tensor, ...]:
        """Sample `index` of the whole data set (before sharding and shuffling), read now: the
        reader's outputs for it (data, label, ...)."""
        i = self._index(index)
        return tuple(tl[0] for tl in self._assemble([i], [self._load(i)]))

    def source(self, index: int) -> str:
        """The file or record sample `index` comes from."""
        return self._source(self._index(index))

    # -- DALI's metadata and resumable state ----------------------------------------------------
    def epoch_size(self) -> int:
        n = self._ensure_listed()
        return self._per_shard() * self.num_shards if self.pad else n

    def meta(self) -> dict[str, int]:
        """DALI's `reader_meta()` entry for this reader."""
        return {
            "epoch_size": self._ensure_listed(),
            "epoch_size_padded": self.epoch_size(),
            "number_of_shards": self.num_shards,
            "shard_id": self.shard_id,
            "pad_last_batch": int(self.pad),
            "stick_to_shard": int(self.stick or self.after_epoch),
        }

    def state_dict(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "position": self.position, "epoch_size": self._n,
                "shard_id": self.shard_id, "num_shards": self.num_shards}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        n = self._ensure_listed()
        saved = state.get("epoch_size")
        if saved is not None and saved != n:
            raise DataError(f"{self.name}: the saved state is for a dataset of {saved} samples, but "
                            f"this one has {n}; it cannot be resumed")
        for key in ("shard_id", "num_shards"):
            if key in state and state[key] != getattr(self, key):
                raise ArgumentError(f"{self.name}: the saved state has {key}={state[key]}, this "
                                    f"reader {key}={getattr(self, key)}")
        epoch, position = int(state.get("epoch", 0)), int(state.get("position", 0))
        if not 0 <= epoch < 1 << 32 or not 0 <= position <= len(self._order(epoch)):
            raise DataError(f"{self.name}: invalid saved position (epoch {epoch}, position {position})")
        self.epoch, self.position = epoch, position
