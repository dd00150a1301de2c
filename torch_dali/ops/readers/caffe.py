"""`readers.caffe` and `readers.caffe2` (DALI's CaffeReader, Caffe2Reader): records of LMDB databases.

`path` names one or more LMDB folders (each holding `data.mdb`; a path to the `.mdb` file itself,
or an fsspec URL of either, works too). Their records are read in key order, the databases one
after another, as DALI's LMDB loader does; each record's value is a caffe `Datum`
(`torch_dali.io.caffe.datum`) or a caffe2 `TensorProtos` (`caffe.caffe2`).
The database is read by `torch_dali.io.lmdb` (no liblmdb: a corrupt file is a DataError,
never a crash). A record's source is "<path> at key <key>", as DALI names it.

readers.caffe outputs (as DALI 2.4): the image, when `image_available` (an encoded image's bytes,
uint8 (n,), or raw pixels (height, width, channels) when the Datum says `encoded: false`), then
the label, when `label_available` (int32 (1,)). readers.caffe2: the image when `image_available`
(STRING tensors: bytes; BYTE: (H, W, C)), the label unless `label_type=4` (0: one value, 2: all
values; float32 or int32 as stored), `additional_inputs` more tensors (FLOAT, INT32 or INT64, 1-D),
then the box when `bbox` (int32 (4,)). `label_type` 1 and 3 (sparse labels): two label outputs, as
DALI 2.4 declares; a record's indices are checked against `num_labels` (out of range: "Label
index out of bounds"), and then the record is refused, as DALI 2.4 fails on it too (it never
fills the outputs it declares).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

from ...errors import ArgumentError, DataError
from ...io import caffe, lmdb
from ...skips import printable
from ...tensor_list import TensorList
from .._registry import register
from .._schema import REQUIRED, Arg, OpSchema
from ._base import READER_ARGS
from ._multi import MultiOutputReader, as_list, check_uniform
from ._storage import FilePool, is_url, local_path


def data_file(path: str) -> str:
    """The `data.mdb` of an LMDB folder (or the .mdb file given)."""
    if path.endswith(".mdb"):
        return path
    if is_url(path):
        return path.rstrip("/") + "/data.mdb"
    local = local_path(path)
    return local if os.path.isfile(local) else os.path.join(local, "data.mdb")


class LmdbReader(MultiOutputReader):
    """Lists every database's records at build (their byte ranges); reads one value per sample."""

    def _check_args(self) -> None:
        self._paths = as_list(self.args["path"])
        if not self._paths:
            raise ArgumentError(f"{self.name}: `path` must name at least one LMDB folder")
        self._files = [data_file(p) for p in self._paths]
        self._pool = FilePool(self.name, read_ahead=self.args["read_ahead"])
        self._dbs: list[lmdb.Entries] = []
        self._starts = np.zeros(1, np.int64)
        self._check_outputs()

    def _check_outputs(self) -> None:
        """Reader-specific checks of what to output."""

    def _describe_source(self) -> str:
        return f"the LMDB databases {', '.join(self._paths)} hold no records"

    def _list(self) -> int:
        counts = []
        for path, f in zip(self._paths, self._files):
            if not is_url(f) and not os.path.isfile(f):
                raise DataError(f"{self.name}: {printable(path)} is not an LMDB database (no file "
                                f"{printable(f)})")
            where = f"{self.name}: LMDB {printable(path)}"
            entries = lmdb.list_entries(lambda o, n, f=f: self._pool.read(f, o, n), self._pool.size(f), where)
            self._dbs.append(entries)
            counts.append(len(entries.key_offset))
        self._starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        return int(self._starts[-1])

    def _locate(self, index: int) -> tuple[int, int]:
        db = int(np.searchsorted(self._starts, index, side="right")) - 1
        return db, index - int(self._starts[db])

    def _source(self, index: int) -> str:
        db, i = self._locate(index)
        f = self._files[db]
        try:
            key = lmdb.read_key(lambda o, n: self._pool.read(f, o, n), self._dbs[db], i)
            name = key.decode("utf-8", "backslashreplace")
        except DataError:
            name = f"#{i}"
        return printable(f"{self._paths[db]} at key {name}")

    def _value(self, index: int) -> bytearray:
        db, i = self._locate(index)
        f = self._files[db]
        return lmdb.read_value(lambda o, n: self._pool.read(f, o, n), self._dbs[db], i,
                               f"{self.name}: {self._source(index)}")

    def _parse(self, raw: bytearray, where: str) -> list[torch.Tensor]:
        raise NotImplementedError

    def _load(self, index: int) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        outs = self._parse(self._value(index), f"{self.name}: {self._source(index)}")
        return outs[0], tuple(outs[1:])

    def _column(self, k: int, samples: list[torch.Tensor]) -> TensorList:
        check_uniform(self.name, k, samples)
        return TensorList(samples, "")

    def close(self) -> None:
        self._pool.close()


class CaffeReader(LmdbReader):
    def _check_outputs(self) -> None:
        if not (self.args["image_available"] or self.args["label_available"]):
            raise ArgumentError(f"{self.name}: `image_available` and `label_available` are both "
                                "False: the reader would have no output")

    def _parse(self, raw: bytearray, where: str) -> list[torch.Tensor]:
        return caffe.datum(raw, where, self.args["image_available"], self.args["label_available"])


class Caffe2Reader(LmdbReader):
    def _check_outputs(self) -> None:
        a = self.args
        if a["label_type"] not in range(5):
            raise ArgumentError(f"{self.name}: `label_type` must be 0 (single label), 1 (sparse), 2 (dense "
                                f"labels), 3 (weighted sparse) or 4 (no label), got {a['label_type']}")
        if a["additional_inputs"] < 0:
            raise ArgumentError(f"{self.name}: `additional_inputs` must be >= 0, got {a['additional_inputs']}")
        if _caffe2_outputs(a) == 0:
            raise ArgumentError(f"{self.name}: with image_available=False, label_type=4, no "
                                "additional_inputs and no bbox the reader would have no output")

    def _parse(self, raw: bytearray, where: str) -> list[torch.Tensor]:
        a = self.args
        return caffe.caffe2(raw, where, a["image_available"], a["label_type"], a["additional_inputs"], a["bbox"],
                            a["num_labels"])


def _caffe2_outputs(a: dict[str, Any]) -> int:
    return (int(a.get("image_available", True)) + caffe.label_outputs(a.get("label_type", 0))
            + int(a.get("additional_inputs", 0)) + int(a.get("bbox", False)))


_PATH = Arg("path", "strs", REQUIRED, "LMDB folders (or their data.mdb; local paths or fsspec URLs)")

register(OpSchema(
    name="readers.caffe", impl=CaffeReader, legacy_names=("CaffeReader",), devices=("cpu",),
    min_inputs=0, max_inputs=0,
    num_outputs=lambda a: max(1, int(a.get("image_available", True)) + int(a.get("label_available", True))),
    doc="Reads (image, label) pairs of caffe Datum records from LMDB databases.",
    args=READER_ARGS + (
        _PATH,
        Arg("image_available", "bool", True, "the records hold images (first output)"),
        Arg("label_available", "bool", True, "the records hold labels (an int32 output)"),
    ),
))

register(OpSchema(
    name="readers.caffe2", impl=Caffe2Reader, legacy_names=("Caffe2Reader",), devices=("cpu",),
    min_inputs=0, max_inputs=0, num_outputs=lambda a: max(1, _caffe2_outputs(a)),
    doc="Reads caffe2 TensorProtos records (image, label, more tensors, box) from LMDB databases.",
    args=READER_ARGS + (
        _PATH,
        Arg("image_available", "bool", True, "the first tensor of each record is an image"),
        Arg("label_type", "int", 0, "0: one label value, 2: a dense label vector, 4: no label; 1 and 3 "
            "(sparse labels) have two label outputs, as in DALI, and their indices are checked against "
            "num_labels, but records with them are refused at run time as DALI 2.4 cannot give them out"),
        Arg("num_labels", "int", 1, "number of classes (used by the sparse label types only)"),
        Arg("additional_inputs", "int", 0, "tensors after the label, each its own output"),
        Arg("bbox", "bool", False, "the last tensor is a box (int32, 4 values)"),
    ),
))
