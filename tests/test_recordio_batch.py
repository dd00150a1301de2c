"""readers.mxnet's batched read (two batched preads: headers, then payloads) gives exactly what reading
record by record gives, and leaves every unusual record to the per-record path."""
from __future__ import annotations

import struct

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.io.recordio import MAGIC, RecordFile, write_recordio


def _items(n: int, seed: int = 0, multi_label_at: int | None = None, magic_at: int | None = None):
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        payload = rng.integers(0, 256, int(rng.integers(1, 300)), dtype=np.uint8).tobytes()
        if magic_at == i:  # a payload holding the magic at a 4-aligned spot: written in two frames
            payload = b"abcd" + struct.pack("<I", MAGIC) + payload
        label = [float(i), 2.0] if multi_label_at == i else float(i % 7)
        items.append((label, payload))
    return items


def _read(rec, idx, batched: bool, monkeypatch, batch: int = 8):
    if not batched:  # every record through `RecordFile.record`
        monkeypatch.setattr(RecordFile, "simple_records", lambda self, offsets: None)

    @pipeline_def(batch_size=batch, num_threads=2, device_id=None, seed=3)
    def p():
        return fn.readers.mxnet(path=[rec], index_path=[idx], random_shuffle=True, name="Reader")
    pipe = p()
    pipe.build()
    out = []
    for _ in range(5):
        data, labels = pipe.run()
        out.append(([t.clone() for t in data], [t.clone() for t in labels]))
    return out


@pytest.mark.parametrize("odd", [{}, {"multi_label_at": 5}, {"magic_at": 3}])
def test_batched_read_equals_per_record_read(tmp_path, odd, monkeypatch):
    rec, idx = tmp_path / "d.rec", tmp_path / "d.idx"
    write_recordio(rec, idx, _items(29, **odd))
    fast, slow = _read(str(rec), str(idx), True, monkeypatch), _read(str(rec), str(idx), False, monkeypatch)
    for (fd, fl), (sd, sl) in zip(fast, slow):
        assert len(fd) == len(sd)
        for a, b in zip(fd, sd):
            assert torch.equal(a, b)
        for a, b in zip(fl, sl):
            assert torch.equal(a, b)


def test_simple_records_declines_what_it_cannot_read(tmp_path):
    rec, idx = tmp_path / "d.rec", tmp_path / "d.idx"
    write_recordio(rec, idx, _items(6, multi_label_at=2))
    offsets = [int(line.split()[1]) for line in idx.read_text().splitlines()]
    with RecordFile(rec) as f:
        _, starts, sizes, labels = f.simple_records(np.array(offsets[:2] + offsets[3:]))
        assert labels.tolist() == [0.0, 1.0, 3.0, 4.0, 5.0]
        assert f.simple_records(np.array(offsets)) is None  # two labels in record 2
        assert f.simple_records(np.array([offsets[1] + 1])) is None  # not a frame
        assert f.simple_records(np.array([f.size - 4])) is None  # past the end


def test_the_batched_read_without_the_c_library_reads_the_same(tmp_path, monkeypatch):
    """`host_io.pread_ranges` in Python (no compiler) gives the C call's bytes and counts, short
    where the file ends."""
    from torch_dali.io import host_io
    rec, idx = tmp_path / "d.rec", tmp_path / "d.idx"
    write_recordio(rec, idx, _items(12, seed=4))
    offsets = np.array([int(line.split()[1]) for line in idx.read_text().splitlines()][::-1])
    with RecordFile(rec) as f:
        c_read = f.simple_records(offsets)
        size = f.size
    monkeypatch.setattr(host_io, "_load", lambda: None)
    with RecordFile(rec) as f:
        py_read = f.simple_records(offsets)
        buf = torch.zeros(8, dtype=torch.uint8)
        got = host_io.pread_ranges(f._fd, np.array([0, size - 3]), np.array([4, 4]), buf, np.array([0, 4]))
    assert torch.equal(c_read[0], py_read[0]) and all(np.array_equal(a, b) for a, b in zip(c_read[1:], py_read[1:]))
    assert got.tolist() == [4, 3] and bytes(buf[:4].numpy()) == rec.read_bytes()[:4]
