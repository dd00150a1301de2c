"""`readers.numpy` (DALI's NumpyReader): arrays saved with `numpy.save`, whole or a region of each.

Listing as DALI 2.4: `file_root` with `file_filter` (a case-sensitive glob on the file name,
default "*.npy") lists the files directly in `file_root`, then those in each direct subfolder
(sorted; no deeper); `files` (relative to `file_root` when given) and `file_list` (one path per
line, relative to `file_root`, else to the list's folder) keep their order. A `file_list` entry
outside its folder is refused unless `allow_outside_root=True` (an addition, as readers.file).

Output: the array with its dtype and logical shape (Fortran-order files come out in C order), no
layout. The `roi_*` / `rel_roi_*` arguments (constants or per-sample inputs) cut a region with
DALI's slice rules (`torch_dali.functional.roi`); only the region is copied out of the file.
Files are read with pread whatever `dont_use_mmap` says (`_storage.ByteFile`). Headers are read
once per file and kept (`cache_header_information` is DALI's name for that; here always on).
`use_o_direct` and `register_buffers` are accepted with no effect.
"""
from __future__ import annotations

from typing import Any

import torch

from ...errors import ArgumentError, DataError
from ...functional import roi
from ...io import npy
from ...skips import printable
from ...tensor_list import TensorList
from .._operator import BatchContext
from .._registry import register
from .._schema import Arg, OpSchema, one_of
from ._base import READER_ARGS
from .source_names import relative_name
from ._multi import NamedFilesReader, check_uniform, named_files_args
from ._storage import ByteFile

_ROI_ARGS = ("roi_start", "rel_roi_start", "roi_end", "rel_roi_end", "roi_shape", "rel_roi_shape")


class NumpyReader(NamedFilesReader):
    """Lists the files at build; reads each sample's header once, then its data (or region)."""
    default_filter = "*.npy"

    def _check_args(self) -> None:
        a = self.args
        if a["files"] is not None and a["file_list"] is not None:
            raise ArgumentError(f"{self.name}: `files` and `file_list` cannot be used together")
        if a["files"] is None and a["file_list"] is None and a["file_root"] is None:
            raise ArgumentError(f"{self.name}: `file_root` is required when neither `files` nor "
                                "`file_list` is given")
        self._paths: list[str] = []
        self._headers: dict[int, npy.NpyHeader] = {}
        self._const_roi = {k: a.get(k) for k in _ROI_ARGS + ("roi_axes", "out_of_bounds_policy")}

    def _info(self, index: int) -> str:
        """DALI's source_info(): the path relative to `file_root` when given; a file listed
        directly in `file_root` (no files/file_list) as "./name"."""
        name = relative_name(self._source(index), self.args)
        walked = self.args["files"] is None and self.args["file_list"] is None
        return f"./{name}" if walked and "/" not in name and name != self._source(index) else name

    # -- reading ------------------------------------------------------------------------------
    def _read(self, index: int, roi_args: dict[str, Any] | None) -> torch.Tensor:
        path = self._paths[index]
        where = f"{self.name}: {printable(path)}"
        f = ByteFile(path, self.name, read_ahead=self.args["read_ahead"])
        try:
            h = self._headers.get(index)
            if h is None:
                h = self._headers[index] = npy.read_header(f.read, f.size, where)
            elif h.data_offset + h.nbytes > f.size:
                raise DataError(f"{where}: the file shrank since its header was read (it has "
                                f"{f.size} bytes, the data needs {h.data_offset + h.nbytes})")
            win = roi.window(h.shape, roi_args, where) if roi_args and roi.given(roi_args) else None
            if win is not None and h.shape and not h.fortran_order:
                # only the rows of the outermost axis the region touches are read
                a = min(max(win[0][0], 0), h.shape[0])
                e = max(a, min(win[0][1], h.shape[0]))
                row = h.nbytes // h.shape[0] if h.shape[0] else 0
                part = npy.NpyHeader(h.dtype, (e - a,) + h.shape[1:], False, 0)
                view = npy.as_array(part, f.read(h.data_offset + a * row, (e - a) * row))
                win = [(win[0][0] - a, win[0][1] - a)] + win[1:]
            else:
                view = npy.as_array(h, f.read(h.data_offset, h.nbytes))
        finally:
            f.close()
        if win is None:
            return view if view.is_contiguous() else view.contiguous()
        return roi.cut(view, win, float(self.args["fill_value"]))

    def _load(self, index: int) -> tuple[torch.Tensor, tuple[()]]:
        return self._read(index, self._const_roi), ()

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        if not args:  # constant ROI (or none): the base's path, padding read once
            return super().run_batch(ctx, inputs, args)
        self._ensure_listed()
        indices = self._next_indices(ctx.batch_size)

        def one(k: int) -> torch.Tensor:
            per = dict(self._const_roi)
            per.update({name: vals[k] for name, vals in args.items()})
            return self._read(indices[k], per)
        self.last_sources = [self._source(i) for i in indices]
        self._last_indices = indices
        return [self._column(0, ctx.map(one, len(indices)))]

    def _column(self, k: int, samples: list[torch.Tensor]) -> TensorList:
        check_uniform(self.name, k, samples)
        return TensorList(samples, "")

    @property
    def paths(self) -> list[str]:
        self._ensure_listed()
        return list(self._paths)


_NUMPY_ARGS = (
    *named_files_args("*.npy"),
    Arg("cache_header_information", "bool", False, "accepted; headers are always kept per file"),
    Arg("use_o_direct", "bool", False, "accepted; no effect"),
    Arg("register_buffers", "bool", True, "accepted; no effect (GPU Direct Storage)"),
    Arg("fill_value", "float", 0.0, "value of the region outside the array (out_of_bounds_policy='pad')"),
    Arg("out_of_bounds_policy", "str", "error", "a region leaving the array: 'error', 'pad' or "
        "'trim_to_shape'", check=one_of(*roi.POLICIES)),
    Arg("roi_axes", "ints", [], "axes the ROI arguments refer to (default: all)"),
    Arg("roi_start", "ints", None, "ROI start, absolute", tensor=True),
    Arg("rel_roi_start", "floats", None, "ROI start, relative to the extent", tensor=True),
    Arg("roi_end", "ints", None, "ROI end (exclusive), absolute", tensor=True),
    Arg("rel_roi_end", "floats", None, "ROI end, relative to the extent", tensor=True),
    Arg("roi_shape", "ints", None, "ROI shape, absolute", tensor=True),
    Arg("rel_roi_shape", "floats", None, "ROI shape, relative to the extent", tensor=True),
)

register(OpSchema(
    name="readers.numpy", impl=NumpyReader, devices=("cpu", "gpu"),
    legacy_names=("NumpyReader", "numpy_reader"), min_inputs=0, max_inputs=0, num_outputs=1,
    doc="Reads NumPy .npy arrays (numpy.save's format), whole or a region of each.",
    args=READER_ARGS + _NUMPY_ARGS,
))
