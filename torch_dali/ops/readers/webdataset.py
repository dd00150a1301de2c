"""`readers.webdataset` (DALI's Webdataset reader): samples of tar shards, one output per `ext` group.

As DALI 2.4: a sample is a run of consecutive files sharing a basename (`torch_dali.io.
tarindex`); each `ext` entry is a set of extensions separated by ';' (e.g. "jpg;png"), and its
output is the first component in the tar whose extension is in the set (a warning-free choice;
DALI warns), as `dtypes` (default uint8; the size must divide) of shape (size // itemsize,).
`missing_component_behavior`: "empty"/"" (an empty output), "skip" (the sample is left out) or
"error". Extensions match case-sensitively unless `case_sensitive_extensions=False`. Index files
(`index_paths`, DALI's `wds2idx` v1.1/v1.2) are optional: without them each tar's headers are
scanned once at build (on remote storage that reads the whole file; give indexes there). Paths may
be fsspec URLs. Unlike DALI 2.4, a component feeding two outputs counts as filling both (DALI
counts components, so such a sample is "missing" one).

Reading is a stream: each epoch reads its tars front to back. With `random_shuffle` the order is
a shuffle buffer of `initial_fill` samples over that stream (as webdataset's `.shuffle(n)` and
DALI's buffer), drawn from the seed and the epoch, so at most `initial_fill` samples read ahead
are held in memory, never a whole shard.

Sharding. By default as DALI: `num_shards` contiguous ranges of samples (over all tars).
With `split_by_file=True` (what `torch_dali.DataLoader` sets, unless the reader sets it), shards
are whole tar files as webdataset's `split_by_node` deals them: file i to shard i % num_shards;
with `random_shuffle` the file list is first permuted per epoch with the seed (the same on every
rank, as webdataset's shard shuffle). With `pad_last_batch` every shard then reads as many samples
as the largest one, repeating its own first samples (as DistributedSampler pads), so all ranks
run the same number of batches.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch

from ... import types
from ...errors import ArgumentError, DataError
from ...rng import first_uniforms, hash_key, permutation
from ...io.tarindex import Component, parse_index, scan_tar
from ...skips import printable
from .._registry import register
from .._schema import REQUIRED, Arg, OpSchema
from ._base import READER_ARGS
from .source_names import Sources
from ._multi import MultiOutputReader, as_list
from ._storage import FilePool, open_stream, read_small

_DTYPES = {torch.uint8, torch.uint16, torch.uint32, torch.uint64, torch.int8, torch.int16, torch.int32,
           torch.int64, torch.float16, torch.float32, torch.float64}
_MISSING = {"": "empty", "empty": "empty", "skip": "skip", "error": "error"}
_SHUFFLE_TAG = 0x5753  # keys the shuffle buffer's draws apart from other uses of the seed


class _Order:
    """One epoch's sample indices (the base reader's order interface: take, last, len)."""

    __slots__ = ("base", "pad")

    def __init__(self, base: list[int], pad: int = 0) -> None:
        self.base, self.pad = base, max(0, pad)

    def __len__(self) -> int:
        return len(self.base) + self.pad

    def take(self, start: int, stop: int) -> list[int]:
        head = self.base[start:stop]
        extra = min(stop, len(self)) - max(start, len(self.base))
        return head + [self.base[-1]] * max(0, extra)

    def last(self) -> int:
        return self.base[-1]


def buffer_shuffle(seq: list[int], size: int, seed: int, epoch: int) -> list[int]:
    """`seq` passed through a shuffle buffer of `size`: each step fills the buffer from the
    stream, then emits a uniformly drawn entry; the rest is drained at random at the end. A sample
    is emitted at most `size` samples after it is read."""
    n = len(seq)
    u = first_uniforms(hash_key(seed, _SHUFFLE_TAG), epoch, n).tolist()
    buf: list[int] = []
    out: list[int] = []
    k = 0
    for s in seq:
        buf.append(s)
        if len(buf) >= size:
            j = int(u[k] * len(buf))
            k += 1
            out.append(buf[j])
            buf[j] = buf[-1]
            buf.pop()
    while buf:
        j = int(u[k] * len(buf))
        k += 1
        out.append(buf[j])
        buf[j] = buf[-1]
        buf.pop()
    return out


class WebdatasetReader(MultiOutputReader):
    """Lists samples at build (indexes or tar headers); reads each epoch's tars as a stream."""

    def _check_args(self) -> None:
        a = self.args
        self._paths = as_list(a["paths"])
        self._idx = as_list(a["index_paths"])
        if not self._paths:
            raise ArgumentError(f"{self.name}: `paths` must name at least one tar file")
        if self._idx and len(self._idx) != len(self._paths):
            raise ArgumentError(f"{self.name}: `index_paths`, when given, must name one index per tar "
                                f"({len(self._paths)}), got {len(self._idx)}")
        behaviour = str(a["missing_component_behavior"]).lower()
        if behaviour not in _MISSING:
            raise ArgumentError(f"{self.name}: `missing_component_behavior` must be 'empty', 'skip' or "
                                f"'error', got {a['missing_component_behavior']!r}")
        self._missing = _MISSING[behaviour]
        case = a["case_sensitive_extensions"]
        self._exts = [{e if case else e.lower() for e in group.split(";")} for group in as_list(a["ext"])]
        if not self._exts:
            raise ArgumentError(f"{self.name}: `ext` must name at least one extension set")
        dts = a["dtypes"]
        dts = [types.UINT8] * len(self._exts) if dts is None else (list(dts) if isinstance(dts, (list, tuple)) else [dts])
        if len(dts) != len(self._exts):
            raise ArgumentError(f"{self.name}: `dtypes` must have one entry per `ext` group "
                                f"({len(self._exts)}), got {len(dts)}")
        self._torch = []
        for d in dts:
            try:
                t = types.to_torch_dtype(d)
            except (KeyError, ValueError, TypeError):
                t = None
            if t not in _DTYPES:
                raise ArgumentError(f"{self.name}: unsupported output dtype {d!r}; the dtypes are integers "
                                    "of 8 to 64 bits, float16, float and float64")
            self._torch.append(t)
        self._by_file: bool = a["split_by_file"]
        self._pool = FilePool(self.name, read_ahead=a["read_ahead"])
        self._samples: list[tuple[int, tuple[Component | None, ...]]] = []  # (tar, component per output)
        self._tar_range: list[range] = []
        self._seqs: dict[int, list[int]] = {}
        self._batch_epochs: dict[int, int] = {}
        self._buf: OrderedDict[tuple[int, int], tuple[Any, ...]] = OrderedDict()
        self._cursor: tuple[int, dict[int, int], int] | None = None  # (epoch, position in stream, next)

    def _describe_source(self) -> str:
        return f"no samples with the extensions {as_list(self.args['ext'])} in {', '.join(self._paths)}"

    # -- listing -------------------------------------------------------------------------------
    def _list(self) -> int:
        case = self.args["case_sensitive_extensions"]
        for k, path in enumerate(self._paths):
            start = len(self._samples)
            size = self._pool.size(path)
            if self._idx:
                where = f"{self.name}: index {printable(self._idx[k])}"
                raw = read_small(self._idx[k], f"{self.name}: index")
                groups = parse_index(raw.decode("utf-8", "replace"), where)
            else:
                with open_stream(path, self.name) as f:
                    groups = scan_tar(f, f"{self.name}: {printable(path)}")
            for line, comps in enumerate(groups, 1):
                where = (f"{self.name}: index {printable(self._idx[k])}, line {line}" if self._idx
                         else f"{self.name}: tar {printable(path)}, sample {line}")
                got: list[Component | None] = [None] * len(self._exts)
                for c in comps:
                    if c.offset + c.size > size:
                        raise DataError(f"{where}: component {c.name or c.ext!r} ({c.size} bytes at byte "
                                        f"{c.offset}) lies outside the tar {printable(path)} ({size} "
                                        "bytes): the tar is truncated or the index is not its own")
                    ext = c.ext if case else c.ext.lower()
                    for o, group in enumerate(self._exts):
                        if got[o] is None and ext in group:
                            item = torch.empty(0, dtype=self._torch[o]).element_size()
                            if c.size % item:
                                raise DataError(f"{where}: component {c.name or c.ext!r} has {c.size} bytes, "
                                                f"not a multiple of its output type's size ({item})")
                            got[o] = c
                if None in got:
                    if self._missing == "skip":
                        continue
                    if self._missing == "error":
                        missing = [as_list(self.args["ext"])[o] for o, g in enumerate(got) if g is None]
                        raise DataError(f"{where}: the sample has no component for {missing} "
                                        "(missing_component_behavior='error')")
                self._samples.append((k, tuple(got)))
            self._tar_range.append(range(start, len(self._samples)))
        if self._by_file and self.num_shards > len(self._paths):
            raise ArgumentError(f"{self.name}: split_by_file deals whole tar files to shards: "
                                f"`num_shards` ({self.num_shards}) must not exceed the number of tar "
                                f"files ({len(self._paths)})")
        return len(self._samples)

    def _source(self, index: int) -> str:
        k, comps = self._samples[index]
        first = next((c for c in comps if c is not None), None)
        if first is None:
            return f"{printable(self._paths[k])} (a sample with no selected component)"
        return f"{printable(self._paths[k])}:{first.offset}:{first.name}"

    def output_source_info(self, k: int) -> Sources:
        """As DALI 2.4: each output's samples carry their own component's "tar:offset:name" (the
        name empty with a v1.1 index), "" where the sample has no such component."""
        def name(index: int) -> str:
            t, comps = self._samples[index]
            c = comps[k]
            return "" if c is None else f"{printable(self._paths[t])}:{c.offset}:{c.name}"
        return Sources(name, list(getattr(self, "_last_indices", [])))

    # -- the order of an epoch ---------------------------------------------------------------
    def _file_groups(self, epoch: int) -> list[list[int]]:
        """The tar files of each shard in `epoch` (split_by_file)."""
        nt, R = len(self._paths), self.num_shards
        if self.shuffle:
            files = permutation(self._seed(), epoch, nt)
            return [files[s::R] for s in range(R)]
        groups = [list(range(nt))[s::R] for s in range(R)]
        return groups if self.stick else groups[epoch % R:] + groups[:epoch % R]

    def _make_order(self, epoch: int) -> _Order:  # type: ignore[override]
        if self._by_file:
            groups = self._file_groups(epoch)
            counts = [sum(len(self._tar_range[f]) for f in g) for g in groups]
            seq = [i for f in groups[self.shard_id] for i in self._tar_range[f]]
            order = buffer_shuffle(seq, self.args["initial_fill"], self._seed(), epoch) if self.shuffle else seq
            self._seqs[epoch] = seq
            if self.pad and order:
                want = max(counts)
                while len(order) < want:
                    order = order + order[: want - len(order)]
            if not order:
                raise DataError(f"{self.name}: shard {self.shard_id} holds no samples in epoch {epoch} "
                                "(its tar files are empty)")
            return _Order(order)
        if self.shuffle and not self.after_epoch:  # DALI's: the shard's stream through the buffer
            r, R = self.shard_id, self.num_shards
            rng = self._range(r if self.stick else (r + epoch) % R)
            seq = list(rng)
            self._seqs[epoch] = seq
            pad_to = self._per_shard() if self.pad else 0
            return _Order(buffer_shuffle(seq, self.args["initial_fill"], self._seed(), epoch),
                          pad_to - len(seq))
        order = super()._make_order(epoch)
        self._seqs[epoch] = list(order.base)
        return order

    @property
    def even_shards(self) -> bool:
        return False  # shuffled shards are DALI's contiguous ranges through the buffer

    def rank_sizes(self, epoch: int) -> list[int] | None:
        """With split_by_file, the samples each rank reads in `epoch` (whole tars, padded to the
        largest with pad_last_batch), what an iterator with `reader_name` counts; else None (DALI's
        contiguous shards)."""
        if not self._by_file:
            return None
        self._ensure_listed()
        counts = [sum(len(self._tar_range[f]) for f in g) for g in self._file_groups(epoch)]
        return [max(counts)] * len(counts) if self.pad else counts

    def epoch_size(self) -> int:
        if not self._by_file or not self.pad:
            return super().epoch_size()
        return len(self._order(0)) * self.num_shards

    # -- reading -------------------------------------------------------------------------------
    def _read(self, index: int) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        k, comps = self._samples[index]
        path = self._paths[k]
        got: dict[Component, bytearray] = {}
        outs = []
        for c, dtype in zip(comps, self._torch):
            if c is None or c.size == 0:
                outs.append(torch.zeros(0, dtype=dtype))
                continue
            if c not in got:
                got[c] = self._pool.read(path, c.offset, c.size)
            outs.append(torch.frombuffer(got[c], dtype=dtype))
        return outs[0], tuple(outs[1:])

    def _load(self, index: int) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        return self._read(index)

    def _next_indices(self, batch_size: int) -> list[int]:
        """The base's batch, noting the epoch each sample belongs to (for the stream)."""
        e, p = self.epoch, self.position
        out = super()._next_indices(batch_size)
        self._batch_epochs = {}
        for i in out:
            n = len(self._order(e))
            if p >= n and not self.pad:
                e, p = e + 1, 0
            self._batch_epochs.setdefault(i, e)
            p += 1
        return out

    def _load_batch(self, ctx: Any, indices: list[int]) -> list[tuple[Any, ...]]:
        limit = max(int(self.args["initial_fill"]), 0) + 2 * len(indices)  # any fill without shuffling
        return [self._fetch_streamed(i, self._batch_epochs.get(i, self.epoch), limit) for i in indices]

    def _fetch_streamed(self, index: int, epoch: int, limit: int) -> tuple[Any, ...]:
        """Sample `index` of `epoch`: from the read-ahead buffer, or by reading the epoch's stream
        forward to it (keeping what it passes, at most `limit` samples), or, when the stream is
        already past it (a resumed state, padding), by reading it alone."""
        row = self._buf.pop((epoch, index), None)
        if row is not None:
            return row
        if self._cursor is None or self._cursor[0] != epoch:
            self._buf = OrderedDict((key, v) for key, v in self._buf.items() if key[0] > epoch)
            if epoch not in self._seqs:
                self._order(epoch)
            seq = self._seqs[epoch]
            self._cursor = (epoch, {s: q for q, s in enumerate(seq)}, 0)
            for old in [e for e in self._seqs if e < epoch - 1]:
                del self._seqs[old]
        e, where, nxt = self._cursor
        q = where.get(index)
        if q is None or q < nxt:
            return self._read(index)
        seq = self._seqs[epoch]
        for s in seq[nxt:q]:
            self._buf[(epoch, s)] = self._read(s)
            while len(self._buf) > limit:
                self._buf.popitem(last=False)
        self._cursor = (e, where, q + 1)
        return self._read(index)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self._buf.clear()
        self._cursor = None

    def close(self) -> None:
        self._pool.close()


register(OpSchema(
    name="readers.webdataset", impl=WebdatasetReader, devices=("cpu",), min_inputs=0, max_inputs=0,
    num_outputs=lambda a: len(as_list(a.get("ext"))) or 1,
    doc="Reads samples of webdataset tar shards (optionally with DALI's index files); one output "
        "per extension set.",
    args=READER_ARGS + (
        Arg("paths", "strs", REQUIRED, "tar files (local paths or fsspec URLs)"),
        Arg("index_paths", "strs", None, "index files (wds2idx), one per tar; scanned from the tars "
            "when not given"),
        Arg("ext", "strs", REQUIRED, "one extension set per output; extensions of a set separated by ';'"),
        Arg("missing_component_behavior", "str", "", "a sample without a component for an output: "
            "'empty' (default), 'skip' or 'error'"),
        Arg("case_sensitive_extensions", "bool", True, "match extensions case-sensitively"),
        Arg("dtypes", "any", None, "output types (default: uint8 for all)"),
        Arg("split_by_file", "bool", False, "shards are whole tar files dealt as webdataset's "
            "split_by_node (set by torch_dali.DataLoader), not ranges of samples"),
    ),
))
