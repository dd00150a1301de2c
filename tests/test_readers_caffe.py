"""readers.caffe / readers.caffe2 beyond the DALI tables: LMDBs from the lmdb package read back as
lmdb reads them (overflow pages, several transactions, deleted keys), corrupt databases and records
(DataErrors naming the database and key, never a crash), argument errors, fsspec URLs."""
from __future__ import annotations

import os
import random
import shutil

import numpy as np
import pytest

from torch_dali import Pipeline, fn, pipeline_def
from torch_dali.errors import ArgumentError, DataError, PipelineError
from torch_dali.io import caffe as C
from torch_dali.io import lmdb as L
from tests.reference import readers_lmdb as R

lmdb = pytest.importorskip("lmdb")


def _pipe(bs=1, reader="caffe", **kw):
    @pipeline_def(batch_size=bs, num_threads=1, device_id=None)
    def p():
        out = getattr(fn.readers, reader)(name="R", **kw)
        return tuple(out) if isinstance(out, (list, tuple)) else out
    pipe = p()
    pipe.build()
    return pipe


def _run(pipe):
    return [[np.asarray(tl.at(i)) for i in range(len(tl))] for tl in pipe.run()]


def _entries(path):
    raw = open(os.path.join(path, "data.mdb"), "rb").read()
    return raw, L.list_entries(lambda o, n: raw[o:o + n], len(raw), "t")


def test_every_record_as_lmdb_reads_it(tmp_path):
    """Keys and values of a database written over several transactions (puts, overwrites and
    deletes; values from 0 bytes to several pages) equal an lmdb cursor's, in its order."""
    path = str(tmp_path / "db")
    env = lmdb.open(path, map_size=1 << 26)
    rng = random.Random(5)
    for _ in range(4):
        with env.begin(write=True) as txn:
            for _ in range(250):
                k = b"%04d" % rng.randrange(900)
                if rng.random() < 0.25:
                    txn.delete(k)
                else:
                    txn.put(k, os.urandom(rng.choice([0, 7, 300, 2100, 9000])))
    with env.begin() as txn:
        want = list(txn.cursor())
    env.close()
    raw, e = _entries(path)
    read = lambda o, n: raw[o:o + n]  # noqa: E731
    assert e.big.any() and not e.big.all()
    got = [(L.read_key(read, e, i), bytes(L.read_value(read, e, i, "t"))) for i in range(len(want))]
    assert len(e.key_offset) == len(want) and got == want


def test_caffe_pipeline_outputs(tmp_path):
    path = str(tmp_path / "c")
    R.write_lmdb(path, [(b"b", R.datum(b"\xff\xd8two", 2, True)), (b"a", R.datum(b"one", 1)),
                        (b"c", R.datum(b"", None, True))])
    img, lab = _run(_pipe(3, path=path))
    assert [bytes(x) for x in img] == [b"one", b"\xff\xd8two", b""]  # key order
    assert [x.tolist() for x in lab] == [[1], [2], []]
    assert lab[0].dtype == np.int32
    reader = _pipe(1, path=path).reader("R")
    assert reader.source(1) == f"{path} at key b"


def test_corrupt_databases_are_data_errors(tmp_path):
    path = str(tmp_path / "c")
    R.write_lmdb(path, [(b"%03d" % i, R.datum(bytes(50 + 40 * i), i, True)) for i in range(200)])
    good = open(os.path.join(path, "data.mdb"), "rb").read()
    bad = str(tmp_path / "bad")
    os.makedirs(bad)

    def expect(data: bytes, match: str) -> None:
        with open(os.path.join(bad, "data.mdb"), "wb") as f:
            f.write(data)
        with pytest.raises((DataError, PipelineError), match=match) as info:
            pipe = _pipe(4, path=bad)
            for _ in range(60):
                pipe.run()
        assert "bad" in str(info.value)

    expect(b"not an lmdb" * 300, "not an LMDB database")
    expect(good[:5000], "corrupt LMDB|past the end|truncated")
    page = 4096
    meta = max((0, page), key=lambda m: int.from_bytes(good[m + 144:m + 152], "little"))  # newest txn
    root = int.from_bytes(good[meta + 128:meta + 136], "little")
    first = root * page + int.from_bytes(good[root * page + 16:root * page + 18], "little")
    cyc = bytearray(good)  # the root's first child is the root itself
    cyc[first:first + 6] = (root & 0xFFFF).to_bytes(2, "little") + (root >> 16).to_bytes(2, "little") + b"\0\0"
    expect(bytes(cyc), "corrupt LMDB.*(reached twice|leaf page was expected)")
    second = root * page + int.from_bytes(good[root * page + 18:root * page + 20], "little")
    twice = bytearray(good)  # two children are one page: without the visited set a forged tree
    twice[second:second + 6] = good[first:first + 6]  # of such pages costs fan-out ** depth reads
    expect(bytes(twice), "reached twice")
    ptr = bytearray(good)
    ptr[root * page + 16:root * page + 18] = (page - 2).to_bytes(2, "little")  # a pointer off the page
    expect(bytes(ptr), "corrupt LMDB.*pointer outside")
    with pytest.raises(DataError, match="is not an LMDB database"):
        _pipe(path=str(tmp_path / "missing"))


def test_random_page_corruption_never_escapes(tmp_path):
    """Bytes of page headers and record pointers changed at random (the edits that crashed liblmdb):
    listing and reading every record give values or DataErrors, nothing else."""
    path = str(tmp_path / "c")
    R.write_lmdb(path, [(b"%03d" % i, R.datum(bytes(30 + 61 * i), i, True)) for i in range(120)])
    good = open(os.path.join(path, "data.mdb"), "rb").read()
    rng = random.Random(11)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(300):
        b = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(b) // 4096) * 4096 + rng.randrange(48)
            b[pos] = rng.randrange(256)
        read = _reader(bytes(b))
        try:
            e = L.list_entries(read, len(b), "t")
            for i in range(len(e.key_offset)):
                C.datum(L.read_value(read, e, i, "t"), "t", True, True)
            outcomes["ok"] += 1
        except DataError:
            outcomes["error"] += 1
    assert outcomes["error"] > 20 and outcomes["ok"] > 20, outcomes


def _reader(data: bytes):
    def read(offset: int, n: int) -> bytes:
        if offset + n > len(data):  # what the reader's files raise for a range past the end
            raise DataError(f"t: reading {n} bytes at byte {offset}: past the end")
        return data[offset:offset + n]
    return read


def test_bad_records_name_the_key(tmp_path):
    path = str(tmp_path / "c")
    R.write_lmdb(path, [(b"k1", R.datum(b"xyz", 1, False, (1, 2, 2))), (b"k2", b"\x0a\xff\xff")])
    with pytest.raises(PipelineError, match="at key k1.*raw pixels.*needs 4"):
        _pipe(path=path).run()
    pipe = _pipe(path=path, image_available=False)
    pipe.run()
    with pytest.raises(PipelineError, match="at key k2.*malformed"):
        pipe.run()
    R.write_lmdb(path, [(b"a", R.datum(b"enc", 1, True)), (b"b", R.datum(b"r", 1, False, (1, 1, 1)))])
    with pytest.raises(PipelineError, match="Inconsistent data in output 0"):
        _pipe(2, path=path).run()


def test_caffe2_records(tmp_path):
    path = str(tmp_path / "c2")
    R.write_lmdb(path, [
        (b"0", R.protos(R.tensor(R.STRING, strings=[b"jpg"]), R.tensor(R.FLOAT, floats=[0.5, 2]))),
        (b"1", R.protos(R.tensor(R.BYTE, dims=[2, 1, 3], raw=bytes(6)), R.tensor(R.INT32, int32s=[7]))),
        (b"2", R.protos(R.tensor(R.STRING, strings=[b"j"]))),
    ])
    img, lab = _run(_pipe(1, "caffe2", path=path, label_type=2))
    assert bytes(img[0]) == b"jpg" and lab[0].tolist() == [0.5, 2.0]
    pipe = _pipe(1, "caffe2", path=path)
    with pytest.raises(PipelineError, match="at key 0.*one label value, the record has 2"):
        pipe.run()
    pipe = _pipe(1, "caffe2", path=path, label_type=4, shard_id=1, num_shards=3)
    assert _run(pipe)[0][0].shape == (2, 1, 3)
    pipe = _pipe(1, "caffe2", path=path, shard_id=2, num_shards=3)
    with pytest.raises(PipelineError, match="at key 2.*holds 1 tensors.*need 2"):
        pipe.run()


def as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def test_caffe2_sparse_labels_have_two_outputs_and_checked_indices(tmp_path):
    """As DALI 2.4: label_type 1 and 3 declare two label outputs; an index >= num_labels is
    DALI's "Label index out of bounds"; an in-range record is refused (DALI fails on it too)."""
    def db(name, indices):
        path = str(tmp_path / name)
        n = len(indices)
        R.write_lmdb(path, [(b"0", R.protos(R.tensor(R.INT32, dims=[n], int32s=indices),
                                            R.tensor(R.FLOAT, dims=[n], floats=[1.0] * n)))])
        return path

    bad, good = db("bad", [999]), db("good", [1, 3])
    for label_type in (1, 3):
        kw = dict(image_available=False, label_type=label_type, num_labels=10)
        with pytest.raises(PipelineError, match="at key 0: Label index out of bounds.*999.*num_labels is 10"):
            _pipe(1, "caffe2", path=bad, **kw).run()
        with pytest.raises(PipelineError, match=r"at key 0: label_type \d \(sparse labels\) cannot be read"):
            _pipe(1, "caffe2", path=good, **kw).run()
    path = good
    with Pipeline(1, 1, None):
        for kw, n in (({"label_type": 1}, 2), ({"label_type": 3, "bbox": True}, 3), ({"label_type": 2}, 1)):
            assert len(as_list(fn.readers.caffe2(path=path, image_available=False, **kw))) == n, kw


def test_caffe2_image_size_mismatch_names_the_sizes(tmp_path):
    path = str(tmp_path / "c2i")
    R.write_lmdb(path, [(b"0", R.protos(R.tensor(R.BYTE, dims=[2, 2, 1], raw=bytes(3)),
                                        R.tensor(R.INT32, dims=[1], int32s=[0])))])
    with pytest.raises(PipelineError, match="Image data size mismatch: the image tensor holds 3 bytes"):
        _pipe(1, "caffe2", path=path).run()


def test_argument_errors(tmp_path):
    path = str(tmp_path / "c")
    R.write_lmdb(path, [(b"a", R.datum(b"x", 1, True))])
    with pytest.raises(ArgumentError, match="no output"):
        _pipe(path=path, image_available=False, label_available=False)
    with pytest.raises(ArgumentError, match="no output"):
        _pipe(reader="caffe2", path=path, image_available=False, label_type=4)
    dup = str(tmp_path / "dup")
    env = lmdb.open(dup, max_dbs=2, map_size=1 << 22)
    named = env.open_db(b"sub")
    with env.begin(write=True) as txn:
        txn.put(b"k", b"v", db=named)
    env.close()
    with pytest.raises(DataError, match="sub-databases"):
        _pipe(path=dup)


def test_fsspec_memory_urls(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    path = str(tmp_path / "c")
    R.write_lmdb(path, [(b"%02d" % i, R.datum(bytes([i]) * (100 * i), i, True)) for i in range(60)])
    fs = fsspec.filesystem("memory")
    fs.pipe("/lmdb/c/data.mdb", open(os.path.join(path, "data.mdb"), "rb").read())
    local, remote = _run(_pipe(60, path=path)), _run(_pipe(60, path="memory://lmdb/c"))
    for a, b in zip(local, remote):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    shutil.rmtree(path)


def test_caffe2_byte_data_of_the_wrong_wire_type_is_a_data_error():
    """A BYTE image whose byte_data (field 5) is written as a number, not bytes (found by the caffe
    fuzz target: a TypeError escaped before the wire type was checked)."""
    tensor = bytes([0x08, 2, 0x08, 2, 0x08, 1, 0x10, C.BYTE, 0x28, 7])  # dims 2, 2, 1; BYTE; field 5 = 7
    record = bytes([0x0A, len(tensor)]) + tensor
    with pytest.raises(DataError, match="byte_data"):
        C.caffe2(record, "db key 'k'", True, C.NO_LABEL, 0, False)
