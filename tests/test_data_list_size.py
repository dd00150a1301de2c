"""List and index files (file_list, .idx, manifests) are read whole: one over MAX_LIST_BYTES is a
DataError naming it, before any memory is taken. Before, a sparse 1.2 GB list under a 2 GB
address-space cap gave an error with an empty message or a bare MemoryError, and without a cap a
sparse file of 20 GB took all of memory. Run in a child process whose address space is capped."""
from __future__ import annotations

import os
import resource
import tempfile

from torch_dali import fn, pipeline_def
from torch_dali import tfrecord as tfrec
from torch_dali.errors import TorchDaliError
from torch_dali.io.bounded_file import MAX_LIST_BYTES

try:
    from tests._isolate import Died, run_isolated
except ImportError:
    from _isolate import Died, run_isolated  # type: ignore[no-redef]

READERS = ["file", "numpy", "nemo_asr", "tfrecord", "webdataset", "mxnet", "video"]


def _cap_memory(extra: int) -> None:
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) << 10 for line in f if line.startswith("VmSize"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + extra, vm + extra))


def _huge_list(req: list) -> str:
    """Child side: the reader with its list or index file a sparse file just over the limit; the
    error's text."""
    reader, = req
    with tempfile.TemporaryDirectory() as d:
        big = os.path.join(d, "big.list")
        with open(big, "wb") as f:
            f.truncate(MAX_LIST_BYTES + 4096)
        data = os.path.join(d, "data.bin")
        with open(data, "wb") as f:
            f.write(b"\0" * 64)

        @pipeline_def(batch_size=1, num_threads=1, device_id=None, exec_async=False, exec_pipelined=False)
        def p():
            if reader == "file":
                return fn.readers.file(file_list=big)[0]
            if reader == "numpy":
                return fn.readers.numpy(file_list=big)
            if reader == "nemo_asr":
                return fn.readers.nemo_asr(manifest_filepaths=[big])[0]
            if reader == "tfrecord":
                return fn.readers.tfrecord(path=data, index_path=big,
                                           features={"x": tfrec.FixedLenFeature([], tfrec.int64, 0)})["x"]
            if reader == "webdataset":
                return fn.readers.webdataset(paths=data, index_paths=big, ext="bin")
            if reader == "mxnet":
                return fn.readers.mxnet(path=data, index_path=big)[0]
            return fn.experimental.readers.video(file_list=big, sequence_length=2)
        pipe = p()
        _cap_memory(1 << 30)  # a read of the whole file would not fit
        try:
            pipe.build()
            pipe.run()
            return "read"
        except TorchDaliError as e:
            return f"{type(e).__name__}: {e}"
        except MemoryError:
            return "MemoryError"


def test_a_list_or_index_file_over_the_limit_is_refused_naming_it():
    reqs = [[r] for r in READERS]
    for (reader,), got in zip(reqs, run_isolated("tests.test_data_list_size:_huge_list", reqs, timeout=120)):
        assert not isinstance(got, Died), (reader, got)
        assert "big.list" in got and f"more than a list or index file may hold ({MAX_LIST_BYTES})" in got, (reader, got)
