"""`readers.file` (DALI's FileReader): whole files as encoded bytes, with integer labels.

Listing rules checked against DALI 2.4:

* `file_root` alone: each direct subfolder is a class; labels are the folder's index among all
  subfolders sorted by name (empty ones count; `dir_filters` narrows the set first). Only files
  directly inside a class folder are read (no recursion, files in `file_root` itself are skipped),
  hidden files included, matched against `file_filters` (case-insensitively unless
  `case_sensitive_filter`). Samples go class by class, file names sorted within a class.
* `file_list`: "path label" lines in file order (the name may hold spaces; the label is the last
  field, a non-negative integer of ASCII digits that fits the int32 output), relative to
  `file_root` when given, else to the list's folder. Blank lines are skipped (DALI rejects them).
  A file list is data, not code: entries outside that folder (absolute paths, `..`) are refused
  unless `allow_outside_root=True` (an addition; DALI reads them).
* `files` (+ optional `labels`; default: the position in `files`), in the given order, relative to
  `file_root` when given.

Outputs: the file's bytes as uint8 of shape (size,), the label as int32 of shape (1,).

With `on_error="skip"` a `file_list` line naming a missing file or holding a bad label, a `files`
entry that does not exist, and a file that cannot be read are left out (see `_base`). File names
that are not UTF-8 are read as the bytes on disk (surrogate escapes) and shown as `\\xNN`.
"""
from __future__ import annotations

import fnmatch
import os
import re

import torch

from ...errors import ArgumentError, DataError
from ...io import host_io
from ...io.bounded_file import list_too_large
from ...tensor_list import TensorList
from .._operator import BatchContext
from .._registry import register
from .._schema import Arg, OpSchema
from ...skips import printable
from ._base import ON_ERROR_ARG, READER_ARGS, ReaderBase
from .source_names import relative_name
from ._multi import outside
from ._storage import read_file_bytes

DEFAULT_FILTERS = ("*.jpg", "*.jpeg", "*.png", "*.bmp", "*.tif", "*.tiff", "*.pnm", "*.ppm", "*.pgm",
                   "*.pbm", "*.jp2", "*.webp", "*.flac", "*.ogg", "*.wav")
_LABEL = re.compile(r"^(.*\S)\s+(\S+)\s*$")
_DIGITS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() takes '²', which int() then refuses
INT32_MAX = 2**31 - 1  # the label output is int32


def _label_error(text: str) -> str | None:
    """Why a file_list label is not one (None when it is)."""
    if not _DIGITS.fullmatch(text):
        return f"the label must be a non-negative integer, got {text!r}"
    digits = text.lstrip("0") or "0"
    if len(digits) > 10 or int(digits) > INT32_MAX:  # int() of 4300+ digits raises ValueError
        return f"the label {text} does not fit the int32 label output (at most {INT32_MAX})"
    return None


def _outside(entry: str, base: str, what: str) -> str | None:
    """Why a file_list entry may not be read: it names a path outside `base` (an absolute path, or
    `..` climbing out). Compared as written: links inside the folder are its owner's choice."""
    if not outside(entry, base):
        return None
    return (f"{entry!r} is outside {what} (file_list entries are read only inside it; "
            "allow_outside_root=True reads them anyway)")


def _matcher(patterns: list[str], case_sensitive: bool):
    """name -> whether it matches any of the glob `patterns` (fnmatchcase's rules), as one compiled
    regular expression: one fnmatch call per pattern and file took ~0.3 s of a build listing 8,192
    files against DALI's default filters."""
    pats = patterns if case_sensitive else [p.lower() for p in patterns]
    if not pats:
        return lambda name: False
    rx = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in pats))
    if case_sensitive:
        return lambda name: rx.match(name) is not None
    return lambda name: rx.match(name.lower()) is not None


class FileReader(ReaderBase):
    """Lists files once (at build, or first use with `lazy_init`) and reads them on threads."""

    def _check_args(self) -> None:
        a = self.args
        if a["file_list"] is not None and a["files"] is not None:
            raise ArgumentError(f"{self.name}: `file_list` and `files` cannot be used together")
        if a["file_list"] is None and a["files"] is None and a["file_root"] is None:
            raise ArgumentError(f"{self.name}: give `file_root` (one subfolder per class), "
                                "`file_list` or `files`")
        if a["labels"] is not None and a["files"] is None:
            raise ArgumentError(f"{self.name}: `labels` can only be used with `files`")
        if self.shuffle and self.after_epoch:
            raise ArgumentError(f"{self.name}: `random_shuffle` cannot be used with shuffle_after_epoch")
        self._paths: list[str] = []
        self._labels: list[int] = []
        self._label_table: torch.Tensor | None = None  # _labels as a tensor, made when first read

    def _describe_source(self) -> str:
        a = self.args
        if a["file_list"] is not None:
            return f"file_list {a['file_list']} has no entries"
        if a["files"] is not None:
            return "`files` is empty"
        return f"no files matching {', '.join(self._filters())} in the subfolders of {a['file_root']}"

    def _filters(self) -> list[str]:
        f = self.args["file_filters"]
        return list(DEFAULT_FILTERS) if f is None else ([f] if isinstance(f, str) else list(f))

    # -- listing -----------------------------------------------------------------------------
    def _list(self) -> int:
        a = self.args
        if a["file_list"] is not None:
            self._list_file_list(a["file_list"], a["file_root"])
        elif a["files"] is not None:
            self._list_files(a["files"], a["labels"], a["file_root"])
        else:
            self._list_root(a["file_root"])
        return len(self._paths)

    def _list_root(self, root: str) -> None:
        if not os.path.isdir(root):
            raise DataError(f"{self.name}: `file_root` {root} is not a folder (or does not exist)")
        case = self.args["case_sensitive_filter"]
        with os.scandir(root) as it:
            classes = sorted(e.name for e in it if e.is_dir())
        dir_filters = self.args["dir_filters"]
        if dir_filters is not None:
            keep = _matcher([dir_filters] if isinstance(dir_filters, str) else list(dir_filters), case)
            classes = [c for c in classes if keep(c)]
        match = _matcher(self._filters(), case)
        self.classes = classes
        for label, cls in enumerate(classes):
            folder = os.path.join(root, cls)
            with os.scandir(folder) as it:
                names = sorted(e.name for e in it if e.is_file() and match(e.name))
            self._paths += [os.path.join(folder, n) for n in names]
            self._labels += [label] * len(names)

    def _list_file_list(self, list_path: str, root: str | None) -> None:
        why = list_too_large(list_path)
        try:  # names that are not UTF-8 become the bytes on disk (as os.listdir gives them)
            data = b"" if why else bytes(host_io.read_file(list_path).numpy())  # never blocks on a FIFO
            lines = data.decode("utf-8", "surrogateescape").splitlines()
        except OSError as e:
            raise DataError(f"{self.name}: cannot read file_list {list_path}: {e.strerror or e}") from None
        except MemoryError:
            why = "not enough memory to read it"
        if why:
            raise DataError(printable(f"{self.name}: file_list {list_path}: {why}"))
        base = root if root is not None else os.path.dirname(os.path.abspath(list_path))
        for no, line in enumerate(lines, 1):
            if not line.strip():
                continue
            m = _LABEL.match(line)
            source = f"{list_path}, line {no}"
            where = printable(f"{self.name}: file_list {source} ({line.strip()!r})")
            if m is None:
                self.reject(f"{where}: expected 'path label'", source, "expected 'path label'")
                continue
            why = _label_error(m.group(2))
            if why is None and not self.args["allow_outside_root"]:
                why = _outside(m.group(1).strip(), base, "file_root" if root is not None else
                               "the file_list's folder")
            if why is not None:
                self.reject(f"{where}: {why}", source, why)
                continue
            path = os.path.join(base, m.group(1).strip())
            if not os.path.isfile(path):
                self.reject(printable(f"{where}: file {path} does not exist"), path,
                            f"does not exist (file_list line {no})")
                continue
            self._paths.append(path)
            self._labels.append(int(m.group(2).lstrip("0") or "0"))

    def _list_files(self, files: list[str] | str, labels: list[int] | int | None,
                    root: str | None) -> None:
        files = [files] if isinstance(files, str) else list(files)
        if labels is None:
            labels = list(range(len(files)))
        labels = [labels] if isinstance(labels, int) else list(labels)
        if len(labels) != len(files):
            raise ArgumentError(f"{self.name}: `labels` must have one entry per file ({len(files)}), "
                                f"got {len(labels)}")
        for k, label in enumerate(labels):
            if not -INT32_MAX - 1 <= label <= INT32_MAX:
                raise ArgumentError(f"{self.name}: `labels[{k}]` = {label} does not fit the int32 "
                                    "label output")
        for p, label in zip(files, labels):
            path = os.path.join(root, p) if root is not None else p
            if not os.path.isfile(path):
                self.reject(printable(f"{self.name}: file {path} (from `files`) does not exist"), path,
                            "does not exist (from `files`)")
                continue
            self._paths.append(path)
            self._labels.append(label)

    # -- reading ------------------------------------------------------------------------------
    def _load(self, index: int) -> tuple[torch.Tensor, None]:
        return read_file_bytes(self._paths[index], self.name), None

    def _packed_batch(self, ctx: BatchContext, indices: list[int]) -> list[TensorList] | None:
        """The batch's files read into one slab, the GIL released (`host_io`; chunks of 64 files on
        the pool's threads, so cold or network storage is read in parallel), as packed samples: no
        tensor per file. None when a file cannot be read whole: `_load_batch` then says which."""
        if not host_io.available():
            return None
        unique = list(dict.fromkeys(indices))  # padding repeats a sample: read it once
        packed = host_io.read_files_packed([self._paths[i] for i in unique], ctx.map)
        if packed is None:
            return None
        if len(unique) != len(indices):
            pos = {i: k for k, i in enumerate(unique)}
            packed = packed.take([pos[i] for i in indices])
        return [TensorList.from_packed(packed), self._batch_labels(indices, [])]

    def _load_batch(self, ctx: BatchContext, indices: list[int]) -> list[tuple[torch.Tensor, None]] | None:
        """A few C calls read the batch, the GIL released (`host_io`): one per chunk of 64 files on
        the pool's threads, so cold or network storage is read in parallel."""
        if not host_io.available():
            return None
        paths = [self._paths[i] for i in indices]
        chunks = [paths[a:a + 64] for a in range(0, len(paths), 64)]
        got = [r for part in ctx.map(lambda k: host_io.read_files(chunks[k]), len(chunks)) for r in part]
        rows = []
        for i, r in zip(indices, got):
            if isinstance(r, OSError):
                raise DataError(f"{self.name}: cannot read {printable(self._paths[i])}: {r.strerror or r}")
            rows.append((r, None))
        return rows

    def _batch_labels(self, indices: list[int], labels: list[torch.Tensor | None]) -> TensorList:
        # one gather from an array of all labels: a Python list per batch held the GIL ~0.4 ms
        table = self._label_table
        if table is None or len(table) != len(self._labels):
            table = self._label_table = torch.tensor(self._labels, dtype=torch.int32)
        return TensorList(table[torch.tensor(indices, dtype=torch.int64)].view(-1, 1))

    def _source(self, index: int) -> str:
        return printable(self._paths[index])

    def _info(self, index: int) -> str:
        """DALI's source_info(): the path relative to `file_root` when given (as listed)."""
        return relative_name(self._source(index), self.args)

    @property
    def paths(self) -> list[str]:
        """The listed files, in reading order before sharding and shuffling."""
        self._ensure_listed()
        return list(self._paths)


register(OpSchema(
    name="readers.file", impl=FileReader, legacy_names=("FileReader",), devices=("cpu",),
    min_inputs=0, max_inputs=0, num_outputs=2,
    doc="Reads whole files (encoded images, audio...) and their integer labels.",
    args=READER_ARGS + (
        ON_ERROR_ARG,
        Arg("file_root", "str", None, "folder of the data; with neither file_list nor files, "
            "one subfolder per class"),
        Arg("file_list", "str", None, "text file of 'path label' lines"),
        Arg("files", "strs", None, "file paths to read (relative to file_root if given)"),
        Arg("labels", "ints", None, "labels of `files` (default: their positions)"),
        Arg("file_filters", "strs", None, "glob patterns of files to list under file_root "
            "(default: common image and audio extensions)"),
        Arg("dir_filters", "strs", None, "glob patterns of class folders to list under file_root"),
        Arg("case_sensitive_filter", "bool", False, "match file_filters case-sensitively"),
        Arg("allow_outside_root", "bool", False, "read file_list entries outside file_root (or "
            "the list's folder): absolute paths, '..'; by default they are refused"),
    ),
))
