"""Record formats: TFRecord files of tf.train.Example protos (with the index DALI's tfrecord2idx
writes: 'offset size' per line) and MXNet RecordIO (.rec of image records and its .idx), the
db/tfrecord and db/recordio sets."""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from . import synth


def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), TFRecord's checksum (tests/reference/readers_formats uses it too)."""
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    """TFRecord's masked form of the CRC."""
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while v > 0x7F:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _field(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _feature(values: Sequence) -> bytes:
    if values and isinstance(values[0], bytes):
        return _field(1, b"".join(_field(1, v) for v in values))
    if any(isinstance(v, float) for v in values):
        return _field(2, _field(1, struct.pack(f"<{len(values)}f", *values)))
    return _field(3, _field(1, b"".join(_varint(int(v)) for v in values)))


def example(features: dict[str, Sequence]) -> bytes:
    """A tf.train.Example: bytes values become a bytes_list, floats a float_list, ints an int64_list."""
    entries = b"".join(_field(1, _field(1, k.encode()) + _field(2, _feature(v))) for k, v in features.items())
    return _field(1, entries)


def write_tfrecord(path: Path, index: Path, examples: Iterable[dict[str, Sequence]]) -> None:
    out, lines = bytearray(), []
    for ex in examples:
        data = example(ex)
        head = struct.pack("<Q", len(data))
        rec = head + struct.pack("<I", masked_crc(head)) + data + struct.pack("<I", masked_crc(data))
        lines.append(f"{len(out)} {len(rec)}\n")
        out += rec
    path.write_bytes(bytes(out))
    index.write_text("".join(lines))


RECORDIO_MAGIC = 0xCED7230A


def write_recordio(path: Path, index: Path, samples: Iterable[tuple[Sequence[float], bytes]]) -> None:
    """MXNet image records: IRHeader (flag, label, id, id2), then `flag` float labels when there is
    more than one, then the encoded image; each record 4-byte aligned; the index is 'key offset'."""
    out, lines = bytearray(), []
    for i, (labels, img) in enumerate(samples):
        if len(labels) == 1:
            head = struct.pack("<IfQQ", 0, labels[0], i, 0)
        else:
            head = struct.pack("<IfQQ", len(labels), 0.0, i, 0) + struct.pack(f"<{len(labels)}f", *labels)
        payload = head + img
        lines.append(f"{i}\t{len(out)}\n")
        out += struct.pack("<II", RECORDIO_MAGIC, len(payload)) + payload
        out += b"\0" * (-len(payload) % 4)
    path.write_bytes(bytes(out))
    index.write_text("".join(lines))


N_TFRECORD = 64
N_RECORDIO = 64
# test_get_property.py checks the source_info of the first 8 records: "<path> at index <offset>";
# the first 7 records' images are padded so the records start at these offsets (DALI_extra's)
TFRECORD_OFFSETS = (0, 171504, 553687, 651500, 820966, 1142396, 1380096, 1532947)


def _sized(ex: dict, size: int) -> dict:
    """`ex` with its JPEG padded so that its framed record is `size` bytes (a protobuf length may
    step over a value: then the class text grows by one and the search runs again)."""
    img = ex["image/encoded"][0]
    for _ in range(4):
        extra = 0
        for _ in range(8):
            cur = len(example(dict(ex, **{"image/encoded": [synth.pad_jpeg(img, extra)]}))) + 16
            if cur == size:
                return dict(ex, **{"image/encoded": [synth.pad_jpeg(img, extra)]})
            extra = max(4, extra + size - cur)
        ex = dict(ex, **{"image/class/text": [ex["image/class/text"][0] + b" "]})
    raise ValueError(f"cannot size a record to {size} bytes")


def make(root: Path) -> None:
    rng = np.random.default_rng(303)
    folder = root / "db" / "tfrecord"
    folder.mkdir(parents=True, exist_ok=True)
    examples = []
    for i in range(N_TFRECORD):
        w, h = int(rng.integers(64, 160)), int(rng.integers(64, 160))
        label = int(rng.integers(1, 1001))
        n = int(rng.integers(1, 4))
        lo = rng.uniform(0, 0.5, (n, 2))
        hi = lo + rng.uniform(0.1, 0.5, (n, 2))
        examples.append({"image/encoded": [synth.jpeg(rng, w, h)], "image/height": [h], "image/width": [w],
                         "image/class/label": [label], "image/class/text": [f"class {label}".encode()],
                         "image/object/bbox/xmin": [float(v) for v in lo[:, 0]],
                         "image/object/bbox/ymin": [float(v) for v in lo[:, 1]],
                         "image/object/bbox/xmax": [float(v) for v in hi[:, 0]],
                         "image/object/bbox/ymax": [float(v) for v in hi[:, 1]],
                         "image/object/class/label": [int(v) for v in rng.integers(1, 1001, n)]})
    for i in range(len(TFRECORD_OFFSETS) - 1):
        examples[i] = _sized(examples[i], TFRECORD_OFFSETS[i + 1] - TFRECORD_OFFSETS[i])
    write_tfrecord(folder / "train", folder / "train.idx", examples)

    rng = np.random.default_rng(404)
    folder = root / "db" / "recordio"
    folder.mkdir(parents=True, exist_ok=True)
    samples = []
    for _ in range(N_RECORDIO):
        w, h = int(rng.integers(64, 160)), int(rng.integers(64, 160))
        samples.append(([float(rng.integers(0, 1000))], synth.jpeg(rng, w, h)))
    write_recordio(folder / "train.rec", folder / "train.idx", samples)
