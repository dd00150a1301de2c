"""DALI's loader arguments on every reader of data files: `lazy_init` (listing errors come at the
first run), `read_ahead` (the OS is asked to read each file ahead), `dont_use_mmap` (accepted; no
reader maps its files), `skip_cached_images` (no decoder cache: nothing skipped), `initial_fill` and shard rotation of
the webdataset stream (shard sets per epoch as DALI 2.4 reads them)."""
from __future__ import annotations

import mmap
import os

import numpy as np
import pytest

import torch_dali.tfrecord as tfrec
from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError, DataError, PipelineError
from torch_dali.io.recordio import write_recordio
from tests.reference import readers_formats as W
from tests.reference import readers_lmdb as R


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """One small data set per reader: {reader: arguments}."""
    d = tmp_path_factory.mktemp("args")
    for i in range(6):
        np.save(d / f"a{i}.npy", np.full((2, 3), i, np.int16))
    W.write_tfrecord(str(d / "t.tfrecord"), [W.encode_example({"x": ("int64", [i])}) for i in range(6)],
                     str(d / "t.idx"))
    W.write_tar(str(d / "w.tar"), [(f"s{i}.cls", str(i).encode()) for i in range(6)])
    write_recordio(d / "m.rec", d / "m.idx", [(float(i), bytes([i]) * 3) for i in range(6)])
    out = {
        "numpy": {"file_root": str(d)},
        "tfrecord": {"path": str(d / "t.tfrecord"), "index_path": str(d / "t.idx"),
                     "features": {"x": tfrec.FixedLenFeature([1], tfrec.int64, 0)}},
        "webdataset": {"paths": [str(d / "w.tar")], "ext": ["cls"]},
        "mxnet": {"path": str(d / "m.rec"), "index_path": str(d / "m.idx")},
    }
    try:
        R.write_lmdb(str(d / "lm"), [(b"%d" % i, R.datum(bytes([i]), i, True)) for i in range(6)])
        out["caffe"] = {"path": str(d / "lm")}
    except ImportError:
        pass
    return out


def _pipe(reader, bs=2, seed=1, **kw):
    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=seed)
    def p():
        out = getattr(fn.readers, reader)(name="R", **kw)
        if isinstance(out, dict):
            return tuple(out.values())
        return tuple(out) if isinstance(out, (list, tuple)) else out
    pipe = p()
    pipe.build()
    return pipe


def _first_output(pipe, batches=3):
    """The first output's samples as bytes; the pipeline is then shut down (no batch is being
    prefetched while a test counts calls)."""
    got = []
    for _ in range(batches):
        tl = pipe.run()[0]
        got += [np.asarray(tl.at(i)).tobytes() for i in range(len(tl))]
    pipe.shutdown()
    return got


FILE_READERS = ["numpy", "tfrecord", "webdataset", "caffe"]


def _args(data, reader):
    if reader not in data:
        pytest.skip(f"{reader}'s data needs a package that is not installed")
    return data[reader]


@pytest.mark.parametrize("reader", FILE_READERS)
def test_lazy_init_lists_at_the_first_run(data, reader, tmp_path):
    args = dict(_args(data, reader))
    broken = tmp_path / "broken"  # a data file that cannot be listed: garbage where the reader looks
    broken.mkdir()
    if reader == "numpy":
        args = {"file_root": str(broken)}  # an empty folder: "the dataset is empty" when listed
    elif reader == "tfrecord":
        (broken / "t.idx").write_text("0 abc\n")
        args["index_path"] = str(broken / "t.idx")
    elif reader == "webdataset":
        (broken / "w.tar").write_bytes(b"\0garbage" * 100)
        args["paths"] = [str(broken / "w.tar")]
    else:
        (broken / "data.mdb").write_bytes(b"garbage" * 300)
        args["path"] = str(broken)
    with pytest.raises(DataError):
        _pipe(reader, **args)
    pipe = _pipe(reader, lazy_init=True, **args)  # builds: nothing is listed yet
    with pytest.raises((DataError, PipelineError)):
        pipe.run()
    assert _first_output(_pipe(reader, lazy_init=True, **_args(data, reader))) == \
        _first_output(_pipe(reader, **_args(data, reader)))


@pytest.mark.parametrize("reader", FILE_READERS + ["mxnet"])
def test_read_ahead_asks_the_os(data, reader, monkeypatch):
    args = _args(data, reader)
    calls: list[int] = []
    real = os.posix_fadvise

    def spy(fd, offset, length, advice):
        calls.append(advice)
        return real(fd, offset, length, advice)
    monkeypatch.setattr(os, "posix_fadvise", spy)
    plain = _first_output(_pipe(reader, **args))
    assert calls == []
    ahead = _first_output(_pipe(reader, read_ahead=True, **args))
    assert calls and set(calls) == {os.POSIX_FADV_WILLNEED}
    assert ahead == plain


@pytest.mark.parametrize("reader", FILE_READERS + ["mxnet"])
def test_no_reader_maps_its_files(data, reader, monkeypatch):
    """A mapped file truncated by another process is SIGBUS (tests/test_data_recordio.py): data
    files are read with pread whatever `dont_use_mmap` says."""
    args = _args(data, reader)
    maps: list[int] = []
    real = mmap.mmap

    def spy(*a, **k):
        maps.append(1)
        return real(*a, **k)
    monkeypatch.setattr(mmap, "mmap", spy)
    plain = _first_output(_pipe(reader, **args))
    assert _first_output(_pipe(reader, dont_use_mmap=True, **args)) == plain
    assert maps == []


@pytest.mark.parametrize("reader", FILE_READERS + ["mxnet"])
def test_skip_cached_images_skips_nothing_without_a_cache(data, reader):
    args = _args(data, reader)
    assert _first_output(_pipe(reader, skip_cached_images=True, **args)) == _first_output(_pipe(reader, **args))


@pytest.mark.parametrize("reader", ["numpy", "tfrecord", "caffe"])
def test_initial_fill_does_not_change_a_permutation(data, reader):
    args = _args(data, reader)
    a = _first_output(_pipe(reader, random_shuffle=True, initial_fill=2, **args), 6)
    b = _first_output(_pipe(reader, random_shuffle=True, initial_fill=4096, **args), 6)
    assert a == b and sorted(a[:6]) == sorted(_first_output(_pipe(reader, **args), 3))


@pytest.mark.parametrize("reader", FILE_READERS + ["mxnet"])
def test_initial_fill_below_one_counts_only_with_random_shuffle(data, reader):
    """DALI 2.4 (readers.file, numpy, mxnet measured): initial_fill 0 or -5 is ignored without
    random_shuffle (shuffle_after_epoch too); with it the process dies (SIGFPE): refused here."""
    args = _args(data, reader)
    plain = _first_output(_pipe(reader, **args))
    for fill in (0, -5):
        assert _first_output(_pipe(reader, initial_fill=fill, **args)) == plain
        assert len(_first_output(_pipe(reader, initial_fill=fill, shuffle_after_epoch=True, **args))) == 6
        with pytest.raises(ArgumentError, match="initial_fill"):
            _pipe(reader, initial_fill=fill, random_shuffle=True, **args)


def test_webdataset_shuffled_shards_rotate_as_dalis(tmp_path):
    """DALI 2.4, 10 samples in 2 shards, random_shuffle, initial_fill=3, batches of 5 from shard 0:
    {0..4}, {5..9}, {0..4}, {5..9} without stick_to_shard; {0..4} each epoch with it."""
    W.write_tar(str(tmp_path / "a.tar"), [(f"s{i:02d}.cls", str(i).encode()) for i in range(10)])
    for stick, want in ((False, [range(5), range(5, 10)] * 2), (True, [range(5)] * 4)):
        pipe = _pipe("webdataset", bs=5, paths=[str(tmp_path / "a.tar")], ext=["cls"], num_shards=2,
                     shard_id=0, random_shuffle=True, stick_to_shard=stick, initial_fill=3)
        for w in want:
            tl = pipe.run()[0]
            assert sorted(int(np.asarray(tl.at(i)).tobytes()) for i in range(5)) == list(w)
