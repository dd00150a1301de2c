"""Data files that shrink while a reader has them open (another process truncates them): DataErrors
naming the file or record (or counted skips), never SIGBUS. Readers used to memory-map them: a
record handed out as a view of the map, or a range copied out of it just after the size check,
killed the interpreter when touched past the new end. Runs in child processes."""
from __future__ import annotations

import os
import tempfile

import numpy as np

from torch_dali import fn, pipeline_def
from torch_dali.errors import DataError, PipelineError
from torch_dali.io.recordio import RecordFile, read_index, write_recordio
from torch_dali.skips import skipped

try:
    from tests._isolate import Died, run_isolated
except ImportError:
    from _isolate import Died, run_isolated  # type: ignore[no-redef]

RECORDS, PAYLOAD = 6, 9000  # several pages: a cut leaves whole mapped pages past the end


def _write(folder: str) -> tuple[str, str, list[int]]:
    rec, idx = os.path.join(folder, "x.rec"), os.path.join(folder, "x.idx")
    rng = np.random.default_rng(0)
    write_recordio(rec, idx, [(float(k), rng.bytes(PAYLOAD)) for k in range(RECORDS)])
    return rec, idx, [off for _, off in read_index(idx)]


def _read_after_shrink(req: list) -> list[str]:
    """Child side: opens the file, cuts it to `cut` bytes (a record offset + 100, or 0), then
    reads every record; what each read gave, as text."""
    cut = req
    with tempfile.TemporaryDirectory() as d:
        rec, _, offsets = _write(d)
        f = RecordFile(rec)
        os.truncate(rec, 0 if cut is None else offsets[cut] + 100)
        out = []
        for off in offsets:
            try:
                r = f.record(off, f"record at {off}")
                out.append(f"ok {bytes(r)[-1]}")  # touch the last byte (the SIGBUS)
            except DataError as e:
                out.append(f"DataError: {e}")
        f.close()
        return out


def test_record_file_shrunk_while_open_raises_data_errors():
    reqs = [3, None]
    for cut, got in zip(reqs, run_isolated("tests.test_data_recordio:_read_after_shrink", reqs)):
        assert not isinstance(got, Died), (cut, got)
        good = 0 if cut is None else cut
        assert all(g.startswith("ok") for g in got[:good]), got
        assert all(g.startswith("DataError: record at") and "runs past its end" in g and
                   "the file shrank while being read (54192 bytes when opened" in g
                   for g in got[good:]), got


def _reader_after_shrink(req: list) -> list[str]:
    """Child side: readers.mxnet (mapped or not, raise or skip) over a file cut inside record 3
    after the pipeline was built; the records read or the error."""
    dont_use_mmap, on_error = req
    with tempfile.TemporaryDirectory() as d:
        rec, idx, offsets = _write(d)

        @pipeline_def(batch_size=2, num_threads=2, device_id=None, exec_async=False,
                      exec_pipelined=False)
        def p():
            data, labels = fn.readers.mxnet(path=rec, index_path=idx, dont_use_mmap=dont_use_mmap,
                                            on_error=on_error, name="R")
            return data, labels
        pipe = p()
        pipe.build()
        os.truncate(rec, offsets[3] + 100)
        out = []
        try:
            for _ in range(3):
                data, labels = pipe.run()
                out += [f"{int(float(labels.at(i)[0]))}:{int(data.at(i)[-1])}" for i in range(len(data))]
        except PipelineError as e:
            out.append(f"PipelineError: {e}")
        out += [f"skipped {s.source}: {s.reason}" for s in skipped(pipe)]
        pipe.shutdown()
        return out


def test_mxnet_reader_on_a_shrunk_file():
    reqs = [[m, e] for m in (False, True) for e in ("raise", "skip")]
    for (no_mmap, on_error), got in zip(reqs, run_isolated("tests.test_data_recordio:_reader_after_shrink", reqs)):
        assert not isinstance(got, Died), (no_mmap, on_error, got)
        labels = [g.split(":")[0] for g in got if g[0].isdigit()]
        if on_error == "raise":
            assert labels == ["0", "1"], got  # batch 2 (records 2, 3) fails
            assert "MXNetReader" in got[-1] and "record 3 at byte" in got[-1] and "shrank" in got[-1], got
        else:
            assert labels == ["0", "1", "2", "0", "1", "2"], got  # 3, 4, 5 left out; batches full
            skips = [g for g in got if g.startswith("skipped")]
            assert [s.split(": ")[0].rsplit(" ", 1)[1] for s in skips] == ["3", "4", "5"], got
            assert all("shrank while being read" in s for s in skips), got


def _touch_after_shrink(req: list) -> list[str]:
    """Child side: readers.mxnet (the default pipeline: async, prefetching) reads batch 1, another
    process cuts the file to 0 bytes, then batch 1's samples are read (they were views of the
    file's map: SIGBUS) and the epoch goes on (records past the end: the error naming one)."""
    dont_use_mmap, = req
    with tempfile.TemporaryDirectory() as d:
        rec, idx, _ = _write(d)

        @pipeline_def(batch_size=2, num_threads=2, device_id=None)
        def p():
            return fn.readers.mxnet(path=rec, index_path=idx, dont_use_mmap=dont_use_mmap, name="R")
        pipe = p()
        pipe.build()
        data, _ = pipe.run()
        os.truncate(rec, 0)
        out = [f"{int(data.at(i)[-1])}" for i in range(len(data))]
        try:
            for _ in range(3):
                pipe.run()
            out.append("read on")  # batches already prefetched come first
        except PipelineError as e:
            out.append(f"PipelineError: {e}")
        pipe.shutdown()
        return out


def test_mxnet_samples_stay_readable_after_the_file_is_cut():
    reqs = [[False], [True]]
    for req, got in zip(reqs, run_isolated("tests.test_data_recordio:_touch_after_shrink", reqs)):
        assert not isinstance(got, Died), (req, got)  # SIGBUS with the map (dont_use_mmap=False)
        assert got[:2] == ["176", "175"], got  # the last bytes of records 0 and 1
        assert got[2].startswith("PipelineError") and "MXNetReader" in got[2] and "shrank" in got[2], got


def _cut_between_check_and_read(req: list) -> str:
    """Child side: readers.tfrecord / readers.numpy, and a file cut to 0 bytes by "another process"
    right after the size check (os.fstat) of a range read, once batch 1 was read: the window in
    which a copy out of a map was SIGBUS. The error, or "read"."""
    reader, = req
    import struct
    import sys

    from torch_dali import tfrecord as tfrec
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x.tfrecord" if reader == "tfrecord" else "x.npy")
        if reader == "tfrecord":  # 64 records of one int64 feature each, ~20 kB apart
            ex = bytes.fromhex("0a0e0a0c0a01781207") + b"\x1a\x05\x0a\x03\x01\x02\x03"
            pad = b"\x12" + bytes([0x80, 0xa0, 0x01]) + bytes(20480)  # an unknown field: skipped
            body = ex + pad
            with open(path, "wb") as f, open(path + ".idx", "w") as ix:
                for _ in range(64):
                    ix.write(f"{f.tell()} {len(body) + 16}\n")
                    f.write(struct.pack("<Q", len(body)) + bytes(4) + body + bytes(4))
        else:
            np.save(path, np.arange(1 << 18, dtype=np.int64))

        @pipeline_def(batch_size=2, num_threads=1, device_id=None, exec_async=False, exec_pipelined=False)
        def p():
            if reader == "tfrecord":
                return fn.readers.tfrecord(path=path, index_path=path + ".idx",
                                           features={"x": tfrec.FixedLenFeature([3], tfrec.int64, 0)})["x"]
            return fn.readers.numpy(files=[path])
        pipe = p()
        pipe.build()
        pipe.run()
        ino, real = os.stat(path).st_ino, os.fstat

        def fstat(fd: int) -> os.stat_result:
            st = real(fd)
            if st.st_ino == ino and sys._getframe(1).f_code.co_name == "read":
                os.truncate(path, 0)
            return st
        os.fstat = fstat
        try:
            pipe.run()
            return "read"
        except PipelineError as e:
            return f"PipelineError: {e}"
        finally:
            os.fstat = real


def test_a_file_cut_after_the_size_check_is_an_error_naming_it():
    reqs = [["tfrecord"], ["numpy"]]
    for (reader,), got in zip(reqs, run_isolated("tests.test_data_recordio:_cut_between_check_and_read", reqs)):
        assert not isinstance(got, Died), (reader, got)  # SIGBUS with the map
        name = "x.tfrecord" if reader == "tfrecord" else "x.npy"
        assert got.startswith("PipelineError") and f"{name}: reading" in got and "shrank while being read" in got, got
