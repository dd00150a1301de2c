"""`readers.tfrecord` (DALI's TFRecordReader): `tf.train.Example` records, one output per feature.

`path` lists the TFRecord files and `index_path` one index per file in DALI's `tfrecord2idx`
format ("offset size" a line, records read in the index's order). `fn.readers.tfrecord` returns
a dict {feature name: output}, in the order of `features` (`torch_dali.tfrecord` makes them).
Files may be fsspec URLs. The records are parsed here from the protobuf wire format
(`torch_dali.io.tfexample`); no TensorFlow. CRCs are not checked (DALI does not either);
the framing's length and every protobuf length are.

Outputs as DALI 2.4: int64 -> int64, float32 -> float32, string -> the bytes of the first value
as uint8 (1-D). `FixedLenFeature(shape)` gives that shape (`[]`: a scalar) and needs exactly its
number of values; `VarLenFeature` gives all values (1-D), or with a partial shape P the shape
(n / prod(P), *P). Where DALI 2.4 outputs uninitialised memory (a feature missing from a record,
fewer values than a fixed shape, a feature of another type) this reader follows TensorFlow
instead: a missing fixed-length feature is its default value (repeated to the shape), a missing
variable-length one is empty, and a count or type that does not match is an error naming the
record and the feature.
"""
from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
import torch

from ...errors import ArgumentError, ArgumentTypeError, DataError
from ...io import tfexample as tfx
from ...skips import printable
from ...tensor_list import TensorList
from ...tfrecord import Feature
from .._registry import register
from .._schema import REQUIRED, Arg, OpSchema
from ._base import READER_ARGS
from ._multi import MultiOutputReader, as_list
from ._storage import FilePool, is_url, local_path, read_small, url_exists

_KINDS = {"int64": tfx.INT64, "float32": tfx.FLOAT, "string": tfx.BYTES}
_HEADER = 12  # uint64 length + uint32 masked CRC of it; a record ends with a uint32 CRC


def _check_features(v: Any) -> str | None:
    if not isinstance(v, dict) or not v:
        return "a non-empty dict {name: tfrecord.FixedLenFeature(...) or VarLenFeature(...)}"
    for name, f in v.items():
        if not isinstance(name, str):
            return "a dict whose keys are feature names (strings)"
        if not isinstance(f, (Feature, dict)):  # a dict: the form YAML reads back, checked below
            # a TypeError, as in DALI
            raise ArgumentTypeError(
                f"TFRecordReader: `features`[{name!r}] has type {type(f).__name__}, not a feature; make it with "
                "tfrecord.FixedLenFeature or tfrecord.VarLenFeature")
        try:
            feat = Feature.from_plain(f, name)
        except ValueError as e:
            return str(e)
        if feat["type"] == "string" and (not feat.fixed_length or math.prod(feat.shape) > 1):
            return f"a dict of supported features ('{name}': tensors of strings are not supported; " \
                   "a string feature is FixedLenFeature([], string, ...) or shape [1])"
    return None


def _default(feat: Feature, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    d = feat.default_value
    vals = np.asarray(d if isinstance(d, (list, tuple)) else [d],
                      dtype=np.int64 if dtype == torch.int64 else np.float32)
    n = math.prod(shape)
    if vals.size not in (1, n):
        raise DataError(f"the default value of {feat!r} has {vals.size} values, the shape needs {n}")
    return torch.from_numpy(np.broadcast_to(vals, (n,)).copy()).reshape(shape)


class TFRecordReader(MultiOutputReader):
    """Reads the indexes at build; each sample is one record read with pread (or through fsspec)."""

    def _check_args(self) -> None:
        self._paths = as_list(self.args["path"])
        self._idx = as_list(self.args["index_path"])
        if not self._paths:
            raise ArgumentError(f"{self.name}: `path` must name at least one TFRecord file")
        if len(self._idx) != len(self._paths):
            raise ArgumentError(f"{self.name}: `index_path` must name one index per file of `path` "
                                f"({len(self._paths)}), got {len(self._idx)}")
        self._features = [(k, Feature.from_plain(f, k)) for k, f in self.args["features"].items()]
        self._entries: list[tuple[int, int, int]] = []  # (file, offset, size)
        self._pool = FilePool(self.name, read_ahead=self.args["read_ahead"])

    def _describe_source(self) -> str:
        return f"the index files {', '.join(self._idx)} list no records"

    def _list(self) -> int:
        for k, (path, idx) in enumerate(zip(self._paths, self._idx)):
            if not (url_exists(path, self.name) if is_url(path) else _is_file(path)):
                raise DataError(f"{self.name}: TFRecord file {printable(path)} does not exist")
            size = self._pool.size(path)
            text = read_small(idx, f"{self.name}: index").decode("utf-8", "replace")
            for no, line in enumerate(text.splitlines(), 1):
                parts = line.split()
                if not parts:
                    continue
                where = f"{self.name}: index {printable(idx)}, line {no} ({line.strip()[:60]!r})"
                if len(parts) < 2 or not all(p.isascii() and p.isdigit() for p in parts[:2]):
                    raise DataError(f"{where}: expected 'offset size' (two non-negative integers)")
                digits = [p.lstrip("0") or "0" for p in parts[:2]]
                if max(len(d) for d in digits) > 19:  # int() of 4300+ digits raises ValueError
                    raise DataError(f"{where}: the offset and size must fit 64 bits")
                off, n = int(digits[0]), int(digits[1])
                if n < _HEADER + 4 or off + n > size:
                    raise DataError(f"{where}: a record of {n} bytes at byte {off} does not fit the file "
                                    f"{printable(path)} ({size} bytes; a record has at least 16)")
                self._entries.append((k, off, n))
        return len(self._entries)

    def _source(self, index: int) -> str:
        k, off, _ = self._entries[index]
        return f"{printable(self._paths[k])} at byte {off}"

    source_info_outputs = None  # every feature carries the record's name, as in DALI

    def _info(self, index: int) -> str:
        """DALI 2.4's name of a record (measured): its file and the record's byte offset in it."""
        k, off, _ = self._entries[index]
        return f"{printable(self._paths[k])} at index {off}"

    def _load(self, index: int) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        k, off, n = self._entries[index]
        where = f"{self.name}: {self._source(index)}"
        raw = self._pool.read(self._paths[k], off, n)
        length = struct.unpack_from("<Q", raw, 0)[0]
        if length + _HEADER + 4 > n:
            raise DataError(f"{where}: the record says {length} bytes, more than its index entry "
                            f"({n} bytes with framing); the index does not match the file")
        payload = memoryview(raw)[_HEADER:_HEADER + length]
        spans = tfx.feature_spans(payload, where)
        outs = tuple(self._output(payload, spans, name, feat, where) for name, feat in self._features)
        return outs[0], outs[1:]

    def _output(self, payload: memoryview, spans: dict[str, tuple[int, int, int]], name: str,
                feat: Feature, where: str) -> torch.Tensor:
        want = _KINDS[feat["type"]]
        dtype = {tfx.INT64: torch.int64, tfx.FLOAT: torch.float32, tfx.BYTES: torch.uint8}[want]
        got = spans.get(name)
        if got is None:
            if not feat.fixed_length:
                return torch.zeros((0,) + (feat.partial_shape or ()), dtype=dtype)
            if want == tfx.BYTES:
                d = feat.default_value
                data = d.encode() if isinstance(d, str) else bytes(d or b"")
                return torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.zeros(0, dtype=torch.uint8)
            return _default(feat, feat.shape, dtype)
        kind, lo, hi = got
        if kind not in (want, 0):
            raise DataError(f"{where}: feature '{name}' holds {tfx.KIND_NAMES[kind]} values, the reader "
                            f"was asked for {feat['type']}")
        if want == tfx.BYTES:
            vals = tfx.values(payload, kind, lo, hi, where) if kind else []
            data = vals[0] if vals else b""
            return torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.zeros(0, dtype=torch.uint8)
        arr = tfx.values(payload, want, lo, hi, where) if kind else np.zeros(0)
        t = torch.from_numpy(np.ascontiguousarray(arr)).to(dtype)
        if feat.fixed_length:
            if t.numel() != math.prod(feat.shape):
                raise DataError(f"{where}: feature '{name}' has {t.numel()} values, its FixedLenFeature "
                                f"shape {list(feat.shape)} needs {math.prod(feat.shape)}")
            return t.reshape(feat.shape)
        inner = feat.partial_shape
        if inner:
            m = math.prod(inner)
            if m <= 0 or t.numel() % m:
                raise DataError(f"{where}: feature '{name}' has {t.numel()} values, not a multiple of its "
                                f"partial shape {list(inner)}")
            return t.reshape((t.numel() // m,) + tuple(inner))
        return t

    def _column(self, k: int, samples: list[torch.Tensor]) -> TensorList:
        return TensorList(samples, "")

    def close(self) -> None:
        self._pool.close()

    @staticmethod
    def graph_outputs(args: dict[str, Any], outputs: tuple[Any, ...]) -> dict[str, Any]:
        """What `fn.readers.tfrecord` returns: {feature name: output}, as DALI's."""
        return dict(zip(args["features"], outputs))


def _is_file(path: str) -> bool:
    import os
    return os.path.isfile(local_path(path))


register(OpSchema(
    name="readers.tfrecord", impl=TFRecordReader, legacy_names=("TFRecordReader", "tfrecord_reader"),
    devices=("cpu",), min_inputs=0, max_inputs=0, class_name_override="TFRecord",
    num_outputs=lambda a: len(a["features"]) if isinstance(a.get("features"), dict) else 1,
    doc="Reads tf.train.Example records of TFRecord files (with DALI's index files); one output "
        "per feature.",
    args=READER_ARGS + (
        Arg("path", "strs", REQUIRED, "TFRecord files (local paths or fsspec URLs)"),
        Arg("index_path", "strs", REQUIRED, "index files, one per TFRecord file (tfrecord2idx format)"),
        Arg("features", "any", REQUIRED, "{name: tfrecord.FixedLenFeature / VarLenFeature}",
            check=_check_features),
        Arg("use_o_direct", "bool", False, "accepted; no effect"),
    ),
))
