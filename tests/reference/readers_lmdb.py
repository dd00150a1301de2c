"""Caffe and caffe2 LMDB databases for the readers' tests and the DALI reference generator: records
encoded here by hand (caffe's `Datum`, caffe2's `TensorProtos`, field numbers of their .proto
files) and stored with the `lmdb` package (liblmdb, the tool caffe itself writes with). Stdlib,
NumPy and lmdb only; no torch_dali."""
from __future__ import annotations

import os
import shutil
import struct
from typing import Iterable, Sequence

import numpy as np

# caffe2 TensorProto.DataType
FLOAT, INT32, BYTE, STRING, INT64 = 1, 2, 3, 4, 10


def _varint(v: int) -> bytes:
    v &= (1 << 64) - 1  # negative ints are 10-byte two's complement varints
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if not v:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def _len(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _int(num: int, v: int) -> bytes:
    return _varint(num << 3) + _varint(v)


def datum(data: bytes | None = None, label: int | None = None, encoded: bool | None = None,
          shape: Sequence[int] | None = None, float_data: Sequence[float] = ()) -> bytes:
    """A caffe Datum: `shape` is (channels, height, width)."""
    out = b""
    if shape is not None:
        out += b"".join(_int(k + 1, v) for k, v in enumerate(shape))
    if data is not None:
        out += _len(4, data)
    if label is not None:
        out += _int(5, label)
    if float_data:
        out += _len(6, struct.pack(f"<{len(float_data)}f", *float_data))
    if encoded is not None:
        out += _int(7, int(encoded))
    return out


def tensor(data_type: int | None = None, dims: Sequence[int] = (), floats: Sequence[float] | None = None,
           int32s: Sequence[int] | None = None, raw: bytes | None = None, strings: Sequence[bytes] = (),
           int64s: Sequence[int] | None = None, packed: bool = True) -> bytes:
    """A caffe2 TensorProto (`packed=False` writes int32 values one field each, as parsers accept)."""
    out = b"".join(_int(1, d) for d in dims)
    if data_type is not None:
        out += _int(2, data_type)
    if floats is not None:
        out += _len(3, struct.pack(f"<{len(floats)}f", *floats))
    if int32s is not None:
        out += (_len(4, b"".join(_varint(v) for v in int32s)) if packed
                else b"".join(_int(4, v) for v in int32s))
    if raw is not None:
        out += _len(5, raw)
    out += b"".join(_len(6, s) for s in strings)
    if int64s is not None:
        out += _len(10, b"".join(_varint(v) for v in int64s))
    return out


def protos(*tensors: bytes) -> bytes:
    return b"".join(_len(1, t) for t in tensors)


def write_lmdb(path: str, records: Iterable[tuple[bytes, bytes]], map_size: int = 1 << 26) -> None:
    """An LMDB folder at `path` holding `records` (key, value), written in one transaction."""
    import lmdb
    shutil.rmtree(path, ignore_errors=True)
    env = lmdb.open(path, map_size=map_size)
    with env.begin(write=True) as txn:
        for k, v in records:
            txn.put(k, v)
    env.close()


def _blob(rng: np.random.Generator, n: int) -> bytes:
    """n bytes that compress well (the stored tables stay small) but differ per record."""
    return (np.arange(n, dtype=np.int64) * int(rng.integers(1, 7)) + int(rng.integers(0, 255))).astype(np.uint8).tobytes()


def build(root: str) -> None:
    """The reference databases (skipped when `lmdb` is not installed: their cases skip too)."""
    try:
        import lmdb  # noqa: F401
    except ImportError:
        return
    rng = np.random.default_rng(1515)
    d = os.path.join(root, "lmdb")
    os.makedirs(d, exist_ok=True)
    # 100 encoded images: keys written out of order (LMDB keeps them sorted); sizes from a few
    # bytes to past a page (overflow pages), enough records for branch pages
    recs = []
    for i in rng.permutation(100):
        n = int(rng.choice([3, 40, 900, 5000])) + int(i)
        recs.append((b"img%05d" % i, datum(_blob(rng, n), int(rng.integers(-5, 1000)), True if i % 3 else None)))
    write_lmdb(os.path.join(d, "caffe_a"), recs)
    write_lmdb(os.path.join(d, "caffe_b"), [(b"k%d" % i, datum(_blob(rng, 20 + i), i, True)) for i in range(9)])
    raw = []
    for i in range(11):
        c, h, w = int(rng.choice([1, 3])), int(rng.integers(1, 9)), int(rng.integers(1, 9))
        raw.append((b"raw%03d" % i, datum(_blob(rng, c * h * w), 7 * i, False, (c, h, w), [0.5] * (i % 2))))
    write_lmdb(os.path.join(d, "caffe_raw"), raw)
    c2 = []
    for i in range(23):
        img = tensor(STRING, strings=[_blob(rng, 10 + 300 * (i % 4))])
        c2.append((b"%04d" % i, protos(img, tensor(INT32, int32s=[int(rng.integers(-3, 50))], packed=i % 2 == 0),
                                       tensor(FLOAT, floats=rng.random(1 + i % 3).astype(np.float32).tolist()),
                                       tensor(INT64, int64s=[2 ** 40 + i, -i]),
                                       tensor(INT32, int32s=rng.integers(0, 100, 4).tolist()))))
    write_lmdb(os.path.join(d, "caffe2_a"), c2)
    dense = []
    for i in range(12):
        dims = [int(rng.integers(1, 6)), int(rng.integers(1, 6))] + ([3] if i % 2 else [])
        pix = _blob(rng, int(np.prod(dims)))
        dense.append((b"d%02d" % i, protos(tensor(BYTE, dims=dims, raw=pix),
                                           tensor(None, floats=rng.random(5).astype(np.float32).tolist()))))
    write_lmdb(os.path.join(d, "caffe2_dense"), dense)
