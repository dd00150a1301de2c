"""The protobuf wire format, read without protobuf: the fields of a message and packed lists.

Shared by the tfrecord (`tf.train.Example`) and caffe (`Datum`, caffe2 `TensorProtos`) parsers.
Every length is checked against the bytes that hold it: malformed data is a DataError naming the
record (`where`), never an over-read or an unbounded loop (each step consumes at least one byte).
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from ..errors import DataError

VARINT, I64, LEN, I32 = 0, 1, 2, 5

Field = tuple[int, int, "int | tuple[int, int]"]


def varint(buf: memoryview, pos: int, end: int, where: str) -> tuple[int, int]:
    """(value as an unsigned 64-bit int, position after it)."""
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


def fields(buf: memoryview, start: int, end: int, where: str) -> Iterator[Field]:
    """(field number, wire type, value) for each field in buf[start:end]: the value is an int for
    varints, a (start, end) span for length-delimited and fixed-width fields."""
    pos = start
    while pos < end:
        key, pos = varint(buf, pos, end, where)
        num, wt = key >> 3, key & 7
        if wt == VARINT:
            v, pos = varint(buf, pos, end, where)
            yield num, wt, v
        elif wt == LEN:
            n, pos = varint(buf, pos, end, where)
            if n > end - pos:
                raise DataError(f"{where}: malformed protobuf (a field of {n} bytes runs past its message)")
            yield num, wt, (pos, pos + n)
            pos += n
        elif wt in (I64, I32):
            w = 8 if wt == I64 else 4
            if pos + w > end:
                raise DataError(f"{where}: malformed protobuf (a fixed-width field is cut off)")
            yield num, wt, (pos, pos + w)
            pos += w
        else:
            raise DataError(f"{where}: malformed protobuf (wire type {wt})")


def packed_varints(raw: np.ndarray, where: str) -> np.ndarray:
    """The values of a run of varints (uint8 array) as int64, decoded with a few NumPy operations."""
    if raw.size == 0:
        return np.zeros(0, np.int64)
    ends = np.flatnonzero(raw < 0x80)
    if ends.size == 0 or ends[-1] != raw.size - 1:
        raise DataError(f"{where}: malformed protobuf (a packed integer list ends inside a varint)")
    starts = np.concatenate(([0], ends[:-1] + 1))
    if (ends - starts).max() > 9:
        raise DataError(f"{where}: malformed protobuf (a varint longer than 10 bytes)")
    group = np.repeat(np.arange(ends.size), ends - starts + 1)
    shift = (np.arange(raw.size) - starts[group]).astype(np.uint64) * np.uint64(7)
    parts = (raw & 0x7F).astype(np.uint64) << shift
    return np.add.reduceat(parts, starts).view(np.int64)


def repeated_ints(buf: memoryview, entries: list[tuple[int, "int | tuple[int, int]"]], where: str) -> np.ndarray:
    """A repeated integer field from its (wire type, value) occurrences, packed or not, as int64."""
    parts: list[np.ndarray] = []
    for wt, v in entries:
        if wt == LEN:
            a, b = v  # type: ignore[misc]
            parts.append(packed_varints(np.frombuffer(buf[a:b], np.uint8), where))
        elif wt == VARINT:
            parts.append(np.array([v], np.uint64).view(np.int64))
        else:
            raise DataError(f"{where}: malformed protobuf (an integer list with wire type {wt})")
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def repeated_fixed(buf: memoryview, entries: list[tuple[int, "int | tuple[int, int]"]], dtype: str,
                   where: str) -> np.ndarray:
    """A repeated float ("<f4") or double ("<f8") field from its occurrences, packed or not."""
    size = np.dtype(dtype).itemsize
    wire = I32 if size == 4 else I64
    parts: list[np.ndarray] = []
    for wt, v in entries:
        if wt not in (LEN, wire):
            raise DataError(f"{where}: malformed protobuf (a {np.dtype(dtype).name} list with wire type {wt})")
        a, b = v  # type: ignore[misc]
        if (b - a) % size:
            raise DataError(f"{where}: malformed protobuf (a packed {np.dtype(dtype).name} list of {b - a} bytes)")
        parts.append(np.frombuffer(buf[a:b], dtype))
    return np.concatenate(parts) if parts else np.zeros(0, dtype)


def int32(v: int) -> int:
    """A varint read as protobuf's int32 (the low 32 bits, signed), as parsers do."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v

