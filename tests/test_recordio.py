"""MXNet RecordIO: golden bytes written by hand from the format, round trips, corrupt files."""
from __future__ import annotations

import random
import struct

import numpy as np
import pytest

from torch_dali.errors import DataError
from torch_dali.io.recordio import (MAGIC, RecordFile, RecordIOWriter, build_index, encode_record,
                                 iter_records, pack, read_index, unpack, write_recordio)

M = bytes.fromhex("0a23d7ce")  # the magic word 0xced7230a, little-endian

# Hand-assembled from the format (frame = magic, length word with the flag in bits 29-31, payload,
# zero padding to 4 bytes; record = IRHeader <IfQQ, float32 labels when flag > 0, payload).
GOLDEN_REC = bytes.fromhex(
    # record 0: label 3.0 in the header, payload b"abc": 24 + 3 = 27 bytes, one byte of padding
    "0a23d7ce" "1b000000"
    "00000000" "00004040" "0000000000000000" "0000000000000000" "616263" "00"
    # record 1: label 1.0, id 1, payload b"wxyz" MAGIC b"q"; the magic sits at byte 28 of the
    # record: first part flag 1 with 28 bytes, the magic dropped, last part flag 3 with 1 byte
    "0a23d7ce" "1c000020"
    "00000000" "0000803f" "0100000000000000" "0000000000000000" "7778797a"
    "0a23d7ce" "01000060" "71" "000000"
    # record 2: labels [1.0, 2.0] (flag 2, header label 0), id 2, payload b"hi": 34 bytes, pad 2
    "0a23d7ce" "22000000"
    "02000000" "00000000" "0200000000000000" "0000000000000000" "0000803f" "00000040" "6869" "0000"
)
GOLDEN_IDX = "0\t0\n1\t36\n2\t84\n"
GOLDEN_ITEMS = [(3.0, b"abc"), (1.0, b"wxyz" + M + b"q"), ([1.0, 2.0], b"hi")]


def test_magic_constant():
    assert struct.pack("<I", MAGIC) == M


def test_writer_matches_golden_bytes(tmp_path):
    rec, idx = tmp_path / "g.rec", tmp_path / "g.idx"
    assert write_recordio(rec, idx, GOLDEN_ITEMS) == 3
    assert rec.read_bytes() == GOLDEN_REC
    assert idx.read_text() == GOLDEN_IDX


def test_reader_parses_golden_bytes(tmp_path):
    rec, idx = tmp_path / "g.rec", tmp_path / "g.idx"
    rec.write_bytes(GOLDEN_REC)
    idx.write_text(GOLDEN_IDX)
    entries = read_index(idx, len(GOLDEN_REC))
    assert entries == [("0", 0), ("1", 36), ("2", 84)]
    with RecordFile(rec) as f:
        got = []
        for _, off in entries:
            header, labels, start = unpack(f.record(off))
            got.append((header, labels.tolist(), bytes(f.record(off))[start:]))
    assert got[0][0].flag == 0 and got[0][1] == [3.0] and got[0][2] == b"abc"
    assert got[1][0].id == 1 and got[1][1] == [1.0] and got[1][2] == b"wxyz" + M + b"q"
    assert got[2][0].flag == 2 and got[2][1] == [1.0, 2.0] and got[2][2] == b"hi"
    assert [off for off, _ in iter_records(rec)] == [0, 36, 84]


def test_split_rules():
    # a magic word that is not 4-aligned in the record is left alone
    body = b"x" + M + b"yyy"
    assert encode_record(body) == M + struct.pack("<I", 8) + body
    # a 4-aligned magic at the very end leaves an empty last part (flag 3, length 0)
    assert encode_record(b"abcd" + M) == (M + struct.pack("<I", (1 << 29) | 4) + b"abcd"
                                          + M + struct.pack("<I", 3 << 29))
    # consecutive magic words: first, middle (empty) and last parts
    assert encode_record(M + M) == (M + struct.pack("<I", 1 << 29) + M + struct.pack("<I", 2 << 29)
                                    + M + struct.pack("<I", 3 << 29))
    # a 4-aligned magic in the unaligned tail (bytes past len//4*4) is not split: it cannot exist,
    # but a partial one must not be
    assert encode_record(b"abcd\x0a\x23") == M + struct.pack("<I", 6) + b"abcd\x0a\x23\0\0"


def test_pack_matches_mxnet_rules():
    assert pack(5, b"p")[:24] == struct.pack("<IfQQ", 0, 5.0, 0, 0)
    # a one-value sequence still sets flag 1 and stores the value after the header
    assert pack([5.0], b"p", id=9) == struct.pack("<IfQQ", 1, 0.0, 9, 0) + struct.pack("<f", 5.0) + b"p"


def _random_items(n: int, seed: int) -> list[tuple[object, bytes]]:
    rng = random.Random(seed)
    items: list[tuple[object, bytes]] = []
    for i in range(n):
        parts = [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 9))) for _ in range(4)]
        payload = b"".join(p + (M if rng.random() < 0.6 else b"") for p in parts)
        label = float(i) if i % 3 else [float(i), -1.5, 0.25][: 1 + i % 2 + 1]
        items.append((label, payload))
    items.append((7.0, b""))  # empty payload
    items.append((8.0, M * 5))
    return items


def test_round_trip(tmp_path):
    items = _random_items(60, seed=1)
    rec, idx = tmp_path / "r.rec", tmp_path / "r.idx"
    write_recordio(rec, idx, items)
    entries = read_index(idx)
    assert len(entries) == len(items)
    with RecordFile(rec) as f:
        for (label, payload), (key, off) in zip(items, entries):
            record = f.record(off)
            header, labels, start = unpack(record)
            assert bytes(record)[start:] == payload
            want = [label] if isinstance(label, float) else label
            np.testing.assert_array_equal(labels, np.asarray(want, dtype=np.float32))
            assert header.id == int(key)
    idx2 = tmp_path / "rebuilt.idx"
    assert build_index(rec, idx2) == len(items)
    assert idx2.read_text() == idx.read_text()


def test_writer_explicit_keys(tmp_path):
    with RecordIOWriter(tmp_path / "k.rec", tmp_path / "k.idx") as w:
        w.write(1.0, b"a", key=10)
        w.write([2.0, 3.0], b"bb", key=20)
    assert read_index(tmp_path / "k.idx") == [("10", 0), ("20", 36)]


# -- corrupt files ------------------------------------------------------------------------------

def _golden(tmp_path, data: bytes = GOLDEN_REC):
    rec = tmp_path / "c.rec"
    rec.write_bytes(data)
    return rec


def test_bad_magic(tmp_path):
    rec = _golden(tmp_path, b"\xff" + GOLDEN_REC[1:])
    with RecordFile(rec) as f, pytest.raises(DataError, match=r"c\.rec.*bad magic 0x"):
        f.record(0, f"{rec}, record 0")
    with RecordFile(rec) as f, pytest.raises(DataError, match="bad magic"):
        f.record(4)  # an .idx offset that points into the middle of a record


def test_length_past_end(tmp_path):
    rec = _golden(tmp_path, GOLDEN_REC[:20])
    with RecordFile(rec) as f, pytest.raises(DataError, match=r"record 0.*length 27.*past the end"):
        f.record(0, f"{rec}, record 0")


def test_truncated_frame_header(tmp_path):
    # record 1's first part ends at byte 72, where its second frame header is missing
    rec = _golden(tmp_path, GOLDEN_REC[:72])
    with RecordFile(rec) as f, pytest.raises(DataError, match="truncated"):
        f.record(36, f"{rec}, record 1")
    with pytest.raises(DataError, match="truncated"):
        list(iter_records(rec))


def test_index_offset_beyond_file(tmp_path):
    idx = tmp_path / "c.idx"
    idx.write_text("0\t0\n1\t5000\n")
    with pytest.raises(DataError, match=r"c\.idx, line 2: offset 5000 is beyond the end"):
        read_index(idx, len(GOLDEN_REC))
    idx.write_text("0\tzero\n")
    with pytest.raises(DataError, match="line 1"):
        read_index(idx)
    idx.write_text("0\t0\n1\t" + "9" * 5000 + "\n")  # int() of 4300+ digits raised ValueError
    with pytest.raises(DataError, match=r"c\.idx, line 2: offset of 5000 digits does not fit 64 bits"):
        read_index(idx, len(GOLDEN_REC))
    idx.write_text("0\t" + "0" * 5000 + "\n")
    assert read_index(idx, len(GOLDEN_REC)) == [("0", 0)]
    with pytest.raises(DataError, match="cannot be read"):
        read_index(tmp_path / "missing.idx")


def test_labels_running_past_record(tmp_path):
    bad = struct.pack("<IfQQ", 4, 0.0, 0, 0) + b"\0" * 4  # announces 4 labels, holds 1
    with pytest.raises(DataError, match="announces 4 labels"):
        unpack(bad, "r.rec, record 0")
