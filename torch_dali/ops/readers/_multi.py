"""What the numpy, tfrecord, webdataset, coco and caffe readers share beyond `ReaderBase`: any
number of outputs per sample, and DALI's ways of naming files (`file_root` trees, `files`,
`file_list`).

`ReaderBase` hands each sample's `_load` result to `_assemble` as (data, label). A reader here
returns (first output, the tuple of the others) from `_load`, so the base's bookkeeping (shards,
padding, skipping samples a consumer refuses) carries every output along unchanged.
"""
from __future__ import annotations

import fnmatch
import os
import posixpath
from typing import Any, Sequence

import torch

from ...errors import ArgumentError, DataError
from ...skips import printable
from ...tensor_list import TensorList
from .._operator import BatchContext
from .._schema import Arg
from ._base import ReaderBase
from .source_names import relative_name
from ._storage import is_file, is_url, join, list_folder, local_path, read_small


def named_files_args(default_filter: str) -> tuple[Arg, ...]:
    """The arguments that name a NamedFilesReader's files, its glob's default differing per format."""
    return (
        Arg("file_root", "str", None, "folder of the files (with neither files nor file_list: listed "
            "with file_filter, one level of subfolders)"),
        Arg("file_filter", "str", default_filter, "glob pattern of the file names listed under file_root"),
        Arg("files", "strs", None, "file paths to read (relative to file_root if given)"),
        Arg("file_list", "str", None, "text file with one path per line"),
        Arg("allow_outside_root", "bool", False, "read file_list entries outside its folder"),
    )

class MultiOutputReader(ReaderBase):
    """A reader whose samples have several fields. `_load(i)` returns (field 0, (fields 1..)) and
    `_columns` turns a batch of such rows into one TensorList per output."""

    def _columns(self, indices: list[int], rows: list[tuple[Any, ...]]) -> list[TensorList]:
        fields = [[r[0] for r in rows]] + [list(c) for c in zip(*(r[1] for r in rows))]
        return [self._column(k, f) for k, f in enumerate(fields)]

    def _column(self, k: int, samples: list[torch.Tensor]) -> TensorList:
        return TensorList(samples, self.output_layout(k) or "")

    def _assemble(self, indices: list[int], rows: list[tuple[Any, ...]]) -> list[TensorList]:
        return self._columns(indices, rows)

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        if self.skip or self._checks:  # the base's refill path returns two outputs: rebuild them all
            self._ensure_listed()
            picked = self._next_good(ctx)
            indices = [p[0] for p in picked]
            self.last_sources = [self._source(i) for i in indices]
            self._last_indices = indices
            return self._assemble(indices, [(p[1], p[2]) for p in picked])
        return super().run_batch(ctx, inputs, args)


def check_uniform(what: str, output: int, samples: list[torch.Tensor]) -> None:
    """A batch's samples of one output must share a type and a number of dimensions (as DALI's
    TensorLists); a record that differs is a DataError saying which."""
    if not samples:
        return
    d0, n0 = samples[0].dtype, samples[0].dim()
    for i, s in enumerate(samples):
        if s.dtype != d0 or s.dim() != n0:
            raise DataError(
                f"{what}: Inconsistent data in output {output}: sample {i} of the batch is {s.dim()}D "
                f"{str(s.dtype).replace('torch.', '')}, sample 0 is {n0}D "
                f"{str(d0).replace('torch.', '')}; a batch must have one type and one number of "
                "dimensions")


# -- naming files as DALI's numpy reader does ---------------------------------------------------------

def list_tree(root: str, pattern: str, what: str) -> list[str]:
    """Files under `root` (a folder or a folder URL) whose names match the glob `pattern`
    (case-sensitively): those directly in `root` first, then those in each direct subfolder
    (sorted by name; hidden ones too), names sorted within a folder; no deeper. DALI 2.4's numpy
    reader lists this way."""
    files, dirs = list_folder(root, what)
    match = lambda p: fnmatch.fnmatchcase(os.path.basename(p.rstrip("/")), pattern)  # noqa: E731
    out = [f for f in files if match(f)]
    for d in dirs:
        out += [f for f in list_folder(d, what)[0] if match(f)]
    return out


def outside(entry: str, base: str) -> bool:
    """Whether a listed path leaves `base` (an absolute path or URL elsewhere, or `..` climbing out)."""
    if is_url(base) or is_url(entry):
        if is_url(entry):
            return not entry.startswith(base.rstrip("/") + "/")
        return entry.startswith("/") or posixpath.normpath(entry).split("/")[0] == ".."
    root = os.path.normpath(os.path.abspath(base))
    path = os.path.normpath(os.path.join(root, entry))
    return os.path.commonpath([root, path]) != root


def read_list_file(list_path: str, root: str | None, allow_outside: bool, what: str) -> list[str]:
    """The paths named by a text file, one per line (blank lines skipped), joined to `root` (else to
    the list's folder). A list is data: entries outside that folder are refused unless
    `allow_outside` (DALI reads them). The list and the paths may be URLs."""
    raw = read_small(list_path, f"{what}: file_list")
    if root is not None:
        base = root
    elif is_url(list_path):
        base = list_path.rsplit("/", 1)[0]
    else:
        base = os.path.dirname(os.path.abspath(local_path(list_path)))
    out = []
    for no, line in enumerate(raw.decode("utf-8", "surrogateescape").splitlines(), 1):
        entry = line.strip()
        if not entry:
            continue
        if not allow_outside and outside(entry, base):
            raise DataError(printable(
                f"{what}: file_list {list_path}, line {no}: {entry!r} is outside "
                f"{'file_root' if root is not None else 'the list’s folder'} (entries are read only "
                "inside it; allow_outside_root=True reads them anyway)"))
        out.append(join(base, entry))
    return out


def name_files(args: dict[str, Any], what: str, default_filter: str) -> list[str]:
    """The files a reader with DALI's `file_root` / `files` / `file_list` / `file_filter` reads;
    any of them may be URLs (read through fsspec)."""
    root, files, file_list = args["file_root"], args["files"], args["file_list"]
    if files is not None and file_list is not None:
        raise ArgumentError(f"{what}: `files` and `file_list` cannot be used together")
    if files is None and file_list is None and root is None:
        raise ArgumentError(f"{what}: give `file_root`, `files` or `file_list`")
    if file_list is not None:
        paths = read_list_file(file_list, root, args.get("allow_outside_root", False), what)
    elif files is not None:
        names = [files] if isinstance(files, str) else list(files)
        paths = [join(root, f) if root is not None else f for f in names]
    else:
        return list_tree(root, args.get("file_filter") or default_filter, what)
    for p in paths:
        if not is_file(p, what):
            raise DataError(printable(f"{what}: file {p} does not exist (or is not a file)"))
    return paths


def as_list(v: str | Sequence[str] | None) -> list[str]:
    if v is None:
        return []
    return [v] if isinstance(v, str) else list(v)


class NamedFilesReader(MultiOutputReader):
    """A reader of the files DALI's `file_root` / `files` / `file_list` / `file_filter` name
    (`name_files`), `file_filter` defaulting to `default_filter`; its paths are `self._paths`."""

    default_filter = "*"
    _paths: list[str]

    def _describe_source(self) -> str:
        a = self.args
        if a["file_list"] is not None:
            return f"file_list {a['file_list']} has no entries"
        if a["files"] is not None:
            return "`files` is empty"
        return f"no files matching {a['file_filter']!r} in {a['file_root']} or its subfolders"

    def _list(self) -> int:
        self._paths = name_files(self.args, self.name, self.default_filter)
        return len(self._paths)

    def _source(self, index: int) -> str:
        return printable(self._paths[index])

    def _info(self, index: int) -> str:
        return relative_name(self._source(index), self.args)
