"""db/lmdb (caffe Datum records, encoded JPEGs and labels), db/c2lmdb (caffe2 TensorProtos: the JPEG
as a string tensor and an int32 label) and db/c2lmdb_no_label (the JPEG only), written by
lmdb_write (no liblmdb)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import lmdb_write, synth
from .records import _field, _varint

N_RECORDS = 128
STRING, INT32 = 4, 2  # caffe2 TensorProto.DataType


def _int(num: int, v: int) -> bytes:
    return _varint(num << 3) + _varint(v)


def datum(jpeg: bytes, label: int) -> bytes:
    """caffe's Datum: channels 1, height 2, width 3, data 4, label 5, encoded 7."""
    return _field(4, jpeg) + _int(5, label) + _int(7, 1)


def tensor_protos(jpeg: bytes, label: int | None) -> bytes:
    """caffe2's TensorProtos (field 1, repeated TensorProto: dims 1, data_type 2, int32_data 4
    packed, string_data 6)."""
    img = _int(1, 1) + _int(2, STRING) + _field(6, jpeg)
    out = _field(1, img)
    if label is not None:
        out += _field(1, _int(1, 1) + _int(2, INT32) + _field(4, _varint(label)))
    return out


def make(root: Path) -> None:
    rng = np.random.default_rng(707)
    samples = []
    for _ in range(N_RECORDS):
        # at least 224x224: DALI's caffe tests crop 224x224 windows
        w, h = int(rng.integers(224, 300)), int(rng.integers(224, 300))
        samples.append((synth.jpeg(rng, w, h), int(rng.integers(0, 1000))))
    lmdb_write.write(root / "db" / "lmdb",
                     [(f"{i:08d}".encode(), datum(j, lab)) for i, (j, lab) in enumerate(samples)])
    lmdb_write.write(root / "db" / "c2lmdb",
                     [(f"{i:08d}".encode(), tensor_protos(j, lab)) for i, (j, lab) in enumerate(samples)])
    lmdb_write.write(root / "db" / "c2lmdb_no_label",
                     [(f"{i:08d}".encode(), tensor_protos(j, None)) for i, (j, _) in enumerate(samples)])
