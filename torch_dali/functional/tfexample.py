"""`tf.train.Example` protobufs parsed from their wire format, without TensorFlow or protobuf.

Example { Features features = 1 }; Features { map<string, Feature> feature = 1 } (each map entry
a message: key = 1, value = 2); Feature { oneof: BytesList bytes_list = 1, FloatList float_list
= 2, Int64List int64_list = 3 }; each list's values are field 1, packed or not (both are read, as
protobuf parsers must). Repeated messages merge and the last entry of a key wins, as in protobuf.
Every length is checked against the bytes that hold it: malformed data is a DataError naming the
record, never an over-read or an unbounded loop (each step consumes at least one byte).
"""
from __future__ import annotations

import struct

import numpy as np

from ..errors import DataError

BYTES, FLOAT, INT64 = 1, 2, 3
KIND_NAMES = {BYTES: "bytes", FLOAT: "float32", INT64: "int64"}


def _varint(buf: memoryview, pos: int, end: int, where: str) -> tuple[int, int]:
    result, shift = 0, 0
    while True:
        if pos >= end or shift > 63:
            raise DataError(f"{where}: malformed protobuf (a varint runs past its field)")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & ((1 << 64) - 1), pos
        shift += 7


def fields(buf: memoryview, start: int, end: int, where: str):
    """(field number, wire type, value) for each field in buf[start:end]: the value is an int for
    varints and fixed-width fields, a (start, end) span for length-delimited ones."""
    pos = start
    while pos < end:
        key, pos = _varint(buf, pos, end, where)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, pos = _varint(buf, pos, end, where)
            yield num, wt, v
        elif wt == 2:
            n, pos = _varint(buf, pos, end, where)
            if n > end - pos:
                raise DataError(f"{where}: malformed protobuf (a field of {n} bytes runs past its message)")
            yield num, wt, (pos, pos + n)
            pos += n
        elif wt in (1, 5):
            w = 8 if wt == 1 else 4
            if pos + w > end:
                raise DataError(f"{where}: malformed protobuf (a fixed-width field is cut off)")
            yield num, wt, (pos, pos + w)
            pos += w
        else:
            raise DataError(f"{where}: malformed protobuf (wire type {wt}); not a tf.train.Example")


def feature_spans(data: bytes | bytearray | memoryview, where: str) -> dict[str, tuple[int, int, int]]:
    """{name: (kind, start, end)} of every feature of an Example: the span of its value list."""
    buf = memoryview(data)
    out: dict[str, tuple[int, int, int]] = {}
    for num, wt, span in fields(buf, 0, len(buf), where):
        if num != 1 or wt != 2:
            continue
        for fnum, fwt, entry in fields(buf, span[0], span[1], where):
            if fnum != 1 or fwt != 2:
                continue
            key, value = None, None
            for enum_, ewt, ev in fields(buf, entry[0], entry[1], where):
                if enum_ == 1 and ewt == 2:
                    key = bytes(buf[ev[0]:ev[1]])
                elif enum_ == 2 and ewt == 2:
                    value = ev
            if key is None:
                continue
            try:
                name = key.decode("utf-8")
            except UnicodeDecodeError:
                raise DataError(f"{where}: a feature name is not UTF-8 ({key[:40]!r})") from None
            kind, lo, hi = 0, 0, 0
            if value is not None:
                for knum, kwt, kv in fields(buf, value[0], value[1], where):
                    if knum in KIND_NAMES and kwt == 2:
                        kind, lo, hi = knum, kv[0], kv[1]
            out[name] = (kind, lo, hi)
    return out


def _packed_varints(raw: np.ndarray, where: str) -> np.ndarray:
    """int64 values of a run of varints, decoded with a few NumPy operations."""
    if raw.size == 0:
        return np.zeros(0, np.int64)
    ends = np.flatnonzero(raw < 0x80)
    if ends.size == 0 or ends[-1] != raw.size - 1:
        raise DataError(f"{where}: malformed protobuf (a packed int64 list ends inside a varint)")
    starts = np.concatenate(([0], ends[:-1] + 1))
    if (ends - starts).max() > 9:
        raise DataError(f"{where}: malformed protobuf (a varint longer than 10 bytes)")
    group = np.repeat(np.arange(ends.size), ends - starts + 1)
    shift = (np.arange(raw.size) - starts[group]).astype(np.uint64) * np.uint64(7)
    parts = (raw & 0x7F).astype(np.uint64) << shift
    return np.add.reduceat(parts, starts).view(np.int64)


def values(data: bytes | bytearray | memoryview, kind: int, lo: int, hi: int, where: str):
    """A feature's values: a list of bytes (BYTES) or a 1-D NumPy array (FLOAT, INT64)."""
    buf = memoryview(data)
    if kind == BYTES:
        return [bytes(buf[v[0]:v[1]]) for n, wt, v in fields(buf, lo, hi, where) if n == 1 and wt == 2]
    parts: list[np.ndarray] = []
    for num, wt, v in fields(buf, lo, hi, where):
        if num != 1:
            continue
        if kind == FLOAT:
            if wt == 2:
                if (v[1] - v[0]) % 4:
                    raise DataError(f"{where}: malformed protobuf (a packed float list of "
                                    f"{v[1] - v[0]} bytes)")
                parts.append(np.frombuffer(buf[v[0]:v[1]], "<f4"))
            elif wt == 5:
                parts.append(np.array(struct.unpack_from("<f", buf, v[0]), "<f4"))
        else:
            if wt == 2:
                parts.append(_packed_varints(np.frombuffer(buf[v[0]:v[1]], np.uint8), where))
            elif wt == 0:
                parts.append(np.array([v], np.uint64).view(np.int64))
    dtype = np.float32 if kind == FLOAT else np.int64
    if not parts:
        return np.zeros(0, dtype)
    return np.concatenate(parts).astype(dtype, copy=False)
