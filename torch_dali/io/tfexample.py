"""`tf.train.Example` protobufs parsed from their wire format, without TensorFlow or protobuf.

Example { Features features = 1 }; Features { map<string, Feature> feature = 1 } (each map entry
a message: key = 1, value = 2); Feature { oneof: BytesList bytes_list = 1, FloatList float_list
= 2, Int64List int64_list = 3 }; each list's values are field 1, packed or not (both are read, as
protobuf parsers must). Repeated messages merge and the last entry of a key wins, as in protobuf.
The wire format itself is read by `protowire`: malformed data is a DataError naming the record.
"""
from __future__ import annotations

import numpy as np

from ..errors import DataError
from . import protowire as pw
from .protowire import fields

BYTES, FLOAT, INT64 = 1, 2, 3
KIND_NAMES = {BYTES: "bytes", FLOAT: "float32", INT64: "int64"}


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


def values(data: bytes | bytearray | memoryview, kind: int, lo: int, hi: int, where: str):
    """A feature's values: a list of bytes (BYTES) or a 1-D NumPy array (FLOAT, INT64)."""
    buf = memoryview(data)
    if kind == BYTES:
        return [bytes(buf[v[0]:v[1]]) for n, wt, v in fields(buf, lo, hi, where) if n == 1 and wt == pw.LEN]
    ok = (pw.LEN, pw.I32) if kind == FLOAT else (pw.LEN, pw.VARINT)
    entries = [(wt, v) for n, wt, v in fields(buf, lo, hi, where) if n == 1 and wt in ok]
    if kind == FLOAT:
        return pw.repeated_fixed(buf, entries, "<f4", where).astype(np.float32, copy=False)
    return pw.repeated_ints(buf, entries, where)
