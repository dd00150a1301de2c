"""`readers.mxnet` (DALI's MXNetReader): records of MXNet RecordIO files with their float labels.

As DALI 2.4: `index_path` is one `.idx` whose offsets count from the start of the concatenation of
the `path` files; its lines are read in offset order (keys are not used; repeated offsets count
once). As an addition, `index_path` may instead list one `.idx` per `path` file (offsets per
file). Outputs: the record's payload after its IRHeader and labels, as uint8 of shape (size,), and
the labels as float32 of shape (1,) (flag 0: the header's label) or (flag,) (flag > 0).

With `on_error="skip"` an `.idx` line that is malformed or points past the end of the data and a
record that cannot be read (bad magic, a length running past the end, a short IRHeader) are left
out (see `_base`). A file that shrinks while it is read gives DataErrors for the records past its
new end, not SIGBUS: files are read with pread, never memory-mapped, whatever `dont_use_mmap` says
(DALI maps them; the zero-copy views of a map handed out here before were SIGBUS when touched after
a shrink).
"""
from __future__ import annotations

import bisect
import os
from typing import Any

import numpy as np
import torch

from ...errors import ArgumentError, DataError
from ...io.recordio import RecordFile, read_index, unpack
from ...packed import PackedSamples
from ...tensor_list import TensorList
from .._registry import register
from .._schema import Arg, OpSchema
from ._base import ON_ERROR_ARG, READER_ARGS, ReaderBase


def _as_list(v: str | list[str]) -> list[str]:
    return [v] if isinstance(v, str) else list(v)


class MXNetReader(ReaderBase):
    """Indexes the records once; reads a batch's payloads with pread into one buffer."""

    def _check_args(self) -> None:
        self._paths = _as_list(self.args["path"])
        self._idx_paths = _as_list(self.args["index_path"])
        if not self._paths:
            raise ArgumentError(f"{self.name}: `path` must name at least one .rec file")
        if len(self._idx_paths) not in (1, len(self._paths)):
            raise ArgumentError(
                f"{self.name}: `index_path` must be one .idx for all of `path` (offsets over the "
                f"files in order) or one per file ({len(self._paths)}), got {len(self._idx_paths)}")
        self._files: list[RecordFile] = []
        self._entries: list[tuple[int, int, str]] = []  # (file, offset in file, key)
        self._fast_labels: tuple[list[int], np.ndarray] | None = None  # _load_batch's, for _batch_labels
        self._offsets: np.ndarray | None = None  # each entry's offset in its file, for _packed_batch

    def _describe_source(self) -> str:
        return f"the index {', '.join(self._idx_paths)} lists no records"

    def _list(self) -> int:
        for p in self._paths:
            if not os.path.isfile(p):
                raise DataError(f"{self.name}: RecordIO file {p} does not exist")
        self._files = [RecordFile(p) for p in self._paths]
        if self.args["read_ahead"]:
            for f in self._files:
                f.read_ahead()
        sizes = [f.size for f in self._files]
        if len(self._idx_paths) == 1:
            starts = [0]
            for s in sizes:
                starts.append(starts[-1] + s)
            seen: set[int] = set()
            for key, off in sorted(read_index(self._idx_paths[0], starts[-1], self._bad_line(0)),
                                   key=lambda e: e[1]):
                if off in seen:
                    continue
                seen.add(off)
                k = bisect.bisect_right(starts, off) - 1
                self._entries.append((k, off - starts[k], key))
        else:
            for k, idx in enumerate(self._idx_paths):
                seen = set()
                for key, off in sorted(read_index(idx, sizes[k], self._bad_line(k)), key=lambda e: e[1]):
                    if off not in seen:
                        seen.add(off)
                        self._entries.append((k, off, key))
        return len(self._entries)

    def _bad_line(self, k: int):
        """read_index's `on_bad`: with on_error="skip" a bad .idx line is logged and left out."""
        if not self.skip:
            return None
        idx = self._idx_paths[k]
        return lambda message, no, why: self.reject(message, f"{idx}, line {no}", why)

    def _load(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        k, offset, key = self._entries[index]
        f = self._files[k]
        where = f"{self.name}: {f.path}, record {key} at byte {offset}"
        record = f.record(offset, where)
        _, labels, start = unpack(record, where)
        size = len(record) - start
        data = (torch.frombuffer(record, dtype=torch.uint8, count=size, offset=start) if size
                else torch.empty(0, dtype=torch.uint8))
        return data, torch.from_numpy(labels)

    def _packed_batch(self, ctx: Any, indices: list[int]) -> list[TensorList] | None:
        """A batch of one-frame, one-label records of one file: the payloads as parts of one buffer
        (no tensor per record; making 256 views held the GIL ~1 ms a batch) and the labels as one
        array. None otherwise (`_load_batch`, then `_load`, read those)."""
        if len(self._files) != 1:
            return None
        if self._offsets is None or len(self._offsets) != len(self._entries):
            self._offsets = np.array([e[1] for e in self._entries], dtype=np.int64)
        f = self._files[0]
        got = f.simple_records(self._offsets[np.asarray(indices, dtype=np.int64)])
        if got is None:
            return None
        whole, starts, sizes, labels = got
        return [TensorList.from_packed(PackedSamples.make(whole, starts, sizes)),
                TensorList(torch.from_numpy(labels).reshape(-1, 1))]

    def _load_batch(self, ctx: Any, indices: list[int]) -> list[tuple[torch.Tensor, None]] | None:
        """A batch of one-frame, one-label records read in two C calls a file (the
        per-record Python path held the GIL ~40 us a record); None for anything else, which
        `_load` then reads record by record (and reports). The labels stay one array, which
        `_batch_labels` (called next, on this thread) takes: a tensor per label and stacking them
        back held the GIL ~0.5 ms a batch."""
        self._fast_labels = None
        ents = [self._entries[i] for i in indices]
        out: list[Any] = [None] * len(ents)
        labels = np.empty(len(ents), dtype=np.float32)
        for k, f in enumerate(self._files):
            rows = [j for j, e in enumerate(ents) if e[0] == k]
            if not rows:
                continue
            got = f.simple_records(np.array([ents[j][1] for j in rows], dtype=np.int64))
            if got is None:
                return None
            whole, starts, sizes, lab = got
            labels[rows] = lab
            for j, a, b in zip(rows, starts.tolist(), sizes.tolist()):
                out[j] = (whole[a:a + b], None)
        self._fast_labels = (indices, labels)
        return out

    def _batch_labels(self, indices: list[int], labels: list[torch.Tensor | None]) -> TensorList:
        fast, self._fast_labels = self._fast_labels, None
        if fast is None or not labels or labels[0] is not None:
            return super()._batch_labels(indices, labels)
        loaded, table = fast
        if loaded != indices:  # padding repeats a sample, loaded once
            pos = {i: k for k, i in enumerate(loaded)}
            table = table[[pos[i] for i in indices]]
        return TensorList(torch.from_numpy(table).reshape(-1, 1))

    def _source(self, index: int) -> str:
        k, _, key = self._entries[index]
        return f"{self._paths[k]}#record {key}"

    def _info(self, index: int) -> str:
        """DALI 2.4's source_info(): the file and the record's byte offset in it."""
        k, offset, _ = self._entries[index]
        return f"{self._paths[k]} at index {offset}"

    def close(self) -> None:
        for f in self._files:
            f.close()
        self._files = []


register(OpSchema(
    name="readers.mxnet", impl=MXNetReader, legacy_names=("MXNetReader",), devices=("cpu",), class_name_override="MXNet",
    min_inputs=0, max_inputs=0, num_outputs=2,
    doc="Reads records of MXNet RecordIO files (.rec + .idx) and their float labels.",
    args=READER_ARGS + (
        ON_ERROR_ARG,
        Arg("path", "strs", doc="RecordIO (.rec) files, read in order"),
        Arg("index_path", "strs", doc="the .idx file (one for all of `path`, or one per file)"),
    ),
))
