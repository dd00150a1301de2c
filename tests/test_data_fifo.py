"""Data paths that are FIFOs (or replaced by one after listing) are errors, never a blocking open():
every read of a file a config or data folder names. Run in a child process with a timeout: before
the fix the on_error="skip" path hung for ever."""
from __future__ import annotations

import os
import tempfile

from torch_dali import fn, pipeline_def
from torch_dali.errors import DataError, PipelineError
from torch_dali.io import host_io
from torch_dali.ops.readers._storage import read_file_bytes
from torch_dali.io.recordio import RecordFile, read_index, write_recordio
from torch_dali.skips import skipped

try:
    from tests._isolate import Died, run_isolated
    from tests.corruption import image
except ImportError:
    from _isolate import Died, run_isolated  # type: ignore[no-redef]
    from corruption import image  # type: ignore[no-redef]


def _pipe(**reader):
    @pipeline_def(batch_size=2, num_threads=2, device_id=None, exec_async=False, exec_pipelined=False)
    def p():
        data, _ = fn.readers.file(name="R", **reader)
        return (fn.decoders.image(data, on_error=reader.get("on_error", "raise")),)
    return p()


def _run(what: str) -> str:
    """Child side: one read of a FIFO; the error it gave (or what it read)."""
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "f.jpg")
        os.mkfifo(fifo)
        try:
            if what == "read_file_bytes":
                read_file_bytes(fifo, "FileReader")
            elif what == "read_file":
                host_io.read_file(fifo)
            elif what == "read_files":
                return str(host_io.read_files([fifo])[0])
            elif what == "file_list":
                _pipe(file_list=fifo).build()
            elif what == "video_file_list":
                @pipeline_def(batch_size=1, num_threads=1, device_id=None)
                def video():
                    return tuple(fn.experimental.readers.video(file_list=fifo, sequence_length=2))
                v = video()
                v.build()
                v.run()
            elif what == "idx":
                read_index(fifo)
            elif what == "rec":
                RecordFile(fifo)
            elif what.startswith("replaced"):  # listed as a file, a FIFO when read
                os.makedirs(os.path.join(d, "c"))
                for k in range(3):
                    with open(os.path.join(d, "c", f"{k}.jpg"), "wb") as f:
                        f.write(image(k))
                pipe = _pipe(file_root=d, on_error=what.split("-")[1])
                pipe.build()
                os.unlink(os.path.join(d, "c", "1.jpg"))
                os.mkfifo(os.path.join(d, "c", "1.jpg"))
                try:
                    pipe.run()
                    return "skipped: " + "; ".join(s.reason for s in skipped(pipe))
                finally:
                    pipe.shutdown()
            return "read"
        except (DataError, PipelineError, OSError) as e:
            return f"{type(e).__name__}: {e}"


def test_fifos_are_errors_not_hangs():
    whats = ["read_file_bytes", "read_file", "read_files", "file_list", "video_file_list", "idx", "rec",
             "replaced-raise", "replaced-skip"]
    for what, got in zip(whats, run_isolated("tests.test_data_fifo:_run", whats, timeout=20)):
        assert not isinstance(got, Died), (what, got)
        assert "not a regular file (a FIFO, socket or device)" in got, (what, got)
    assert got.startswith("skipped: ")


def test_python_reader_refuses_a_fifo_too(tmp_path, monkeypatch):
    """Without the C reader: the same error from the Python one (a FIFO with a writer attached
    would not block it anyway, so no child process is needed)."""
    monkeypatch.setattr(host_io.LIB, "lib", None)
    monkeypatch.setattr(host_io.LIB, "tried", True)
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # keeps a blocking open() from hanging here
    try:
        got = host_io.read_files([str(fifo)])[0]
        assert isinstance(got, OSError) and "not a regular file" in got.strerror
    finally:
        os.close(writer)


def test_records_and_index_still_read(tmp_path):
    rec, idx = tmp_path / "x.rec", tmp_path / "x.idx"
    write_recordio(rec, idx, [(1.0, b"abc"), (2.0, b"de")])
    with RecordFile(rec) as f:
        assert [len(f.record(off)) for _, off in read_index(idx, f.size)] == [27, 26]
