"""A `.rec` that shrinks while it is open: DataErrors naming the record, never SIGBUS (the file is
memory-mapped by default). Runs in a child process: before the fix this killed the interpreter."""
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
    use_mmap, cut = req
    with tempfile.TemporaryDirectory() as d:
        rec, _, offsets = _write(d)
        f = RecordFile(rec, use_mmap)
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
    reqs = [[m, cut] for m in (True, False) for cut in (3, None)]
    for (use_mmap, cut), got in zip(reqs, run_isolated("tests.test_data_recordio:_read_after_shrink", reqs)):
        assert not isinstance(got, Died), (use_mmap, cut, got)
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
