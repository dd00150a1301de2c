"""Small writers of the formats the readers read, for tests and for the DALI reference generator
(stdlib and NumPy only: no torch_dali, no TensorFlow).

* TFRecord: each record is a little-endian uint64 length, the masked CRC-32C of those 8 bytes, the
  payload, the masked CRC-32C of the payload; a payload is a `tf.train.Example` protobuf, encoded
  here by hand. The index is DALI's `tfrecord2idx` format: "offset size" per record, one a line.
* webdataset: a POSIX tar whose consecutive files sharing a basename form a sample; the index is
  DALI's `wds2idx` format v1.2: "v1.2 <samples>", then one line per sample of
  "<ext> <data offset> <size> <name>" groups.
"""
from __future__ import annotations

import io
import json
import os
import struct
import tarfile
from typing import Any, Iterable, Sequence

import numpy as np

# TFRecord's CRC-32C, one implementation with the synthetic DALI_extra's
from conformance.extra_standin.records import crc32c, masked_crc  # noqa: F401

# -- protobuf wire format ---------------------------------------------------------------------------

def _varint(v: int) -> bytes:
    v &= (1 << 64) - 1  # negative int64s are 10-byte two's complement varints
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def encode_feature(kind: str, values: Any, packed: bool = True) -> bytes:
    """A `tf.train.Feature`: kind "bytes" (a list of bytes), "float" or "int64" (lists of numbers)."""
    if kind == "bytes":
        inner = b"".join(_field(1, bytes(v)) for v in values)
        return _field(1, inner)
    if kind == "float":
        vals = np.asarray(values, "<f4")
        inner = (_field(1, vals.tobytes()) if packed else
                 b"".join(_varint(1 << 3 | 5) + struct.pack("<f", v) for v in vals))
        return _field(2, inner)
    if kind == "int64":
        vals = [int(v) for v in values]
        inner = (_field(1, b"".join(_varint(v) for v in vals)) if packed else
                 b"".join(_varint(1 << 3 | 0) + _varint(v) for v in vals))
        return _field(3, inner)
    raise ValueError(kind)


def encode_example(features: dict[str, tuple[str, Any]], packed: bool = True) -> bytes:
    """A `tf.train.Example` from {name: (kind, values)}."""
    entries = b"".join(_field(1, _field(1, k.encode()) + _field(2, encode_feature(kind, v, packed)))
                       for k, (kind, v) in features.items())
    return _field(1, entries)


def write_tfrecord(path: str, payloads: Iterable[bytes], index_path: str | None = None) -> list[tuple[int, int]]:
    """Frames `payloads` as TFRecords; writes DALI's index beside when `index_path` is given."""
    spans = []
    with open(path, "wb") as f:
        for p in payloads:
            start = f.tell()
            head = struct.pack("<Q", len(p))
            f.write(head + struct.pack("<I", masked_crc(head)) + p + struct.pack("<I", masked_crc(p)))
            spans.append((start, f.tell() - start))
    if index_path is not None:
        with open(index_path, "w") as f:
            f.writelines(f"{a} {n}\n" for a, n in spans)
    return spans


# -- webdataset tars -------------------------------------------------------------------------------

def write_tar(path: str, members: Sequence[tuple[str, bytes]], dirs: Sequence[str] = ()) -> None:
    """A tar of `members` (name, data) in order, with directory entries `dirs` first; fixed
    metadata, so the bytes depend only on the arguments."""
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tf:
        for d in dirs:
            info = tarfile.TarInfo(d)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
            tf.addfile(info)
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tf.addfile(info, io.BytesIO(data))


def wds_index(path: str, index_path: str) -> int:
    """DALI's v1.2 index of a tar (regular files, grouped by basename as wds2idx groups them)."""
    groups: list[list[tuple[str, int, int, str]]] = []
    last = None
    with tarfile.open(path) as tf:
        for m in tf:
            if not m.isreg():
                continue
            name = m.name
            dot = name.find(".", name.rfind("/") + 1)
            base, ext = name[:dot], name[dot + 1:]  # as wds2idx: no dot gives (name[:-1], name)
            if not base or base.endswith("/"):
                continue
            entry = (ext, m.offset_data, m.size, name)
            if base != last:
                groups.append([entry])
                last = base
            else:
                groups[-1].append(entry)
    with open(index_path, "w") as f:
        f.write(f"v1.2 {len(groups)}\n")
        for g in groups:
            f.write(" ".join(f"{e} {o} {s} {n}" for e, o, s, n in g) + "\n")
    return len(groups)


# -- COCO -----------------------------------------------------------------------------------------

def write_coco(path: str, images: list[dict], annotations: list[dict], categories: list[dict]) -> None:
    with open(path, "w") as f:
        json.dump({"images": images, "annotations": annotations, "categories": categories}, f)


def ensure_dir(path: str) -> str:
    os.makedirs(path, exist_ok=True)
    return path
