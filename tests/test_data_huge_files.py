"""A data file whose size cannot be allocated (a sparse file of 1 TiB: `truncate -s 1T`) is an
error naming it, or a skip, never the allocator's RuntimeError: the batched readers allocated one
slab for the batch's stat sizes and torch's "DefaultCPUAllocator: can't allocate memory" came out
of readers.file naming no file. The child caps its address space, so the allocation fails on any
machine (with overcommit on it could succeed and read a terabyte of zeros)."""
from __future__ import annotations

import os
import resource
import tempfile

from torch_dali import fn, pipeline_def
from torch_dali.errors import DataError, PipelineError
from torch_dali.io import host_io
from torch_dali.skips import skipped

try:
    from tests._isolate import Died, run_isolated
except ImportError:
    from _isolate import Died, run_isolated  # type: ignore[no-redef]

HUGE = 1 << 40


def _run(what: str) -> str:
    """Child side: reads a folder holding a 1 TiB sparse file; the error it gave (or what it read)."""
    cap = 64 << 30
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "c"))
        for k in range(3):
            with open(os.path.join(d, "c", f"{k}.bin"), "wb") as f:
                f.write(b"x" * (k + 1))
                if k == 1:
                    f.truncate(HUGE)
        big = os.path.join(d, "c", "1.bin")
        try:
            if what == "read_file":
                host_io.read_file(big)
            elif what == "read_files":
                return "; ".join(str(r) if isinstance(r, OSError) else f"{len(r)} bytes"
                                 for r in host_io.read_files([os.path.join(d, "c", "0.bin"), big]))
            elif what == "packed":
                return repr(host_io.read_files_packed([big]))
            else:
                @pipeline_def(batch_size=3, num_threads=2, device_id=None)
                def p():
                    data, _ = fn.readers.file(file_root=d, file_filters="*.bin", on_error=what)
                    return data
                pipe = p()
                pipe.build()
                try:
                    (data,) = pipe.run()
                    return (f"sizes {sorted(data.at(i).shape[0] for i in range(len(data)))}; skipped: "
                            + "; ".join(s.reason for s in skipped(pipe)))
                finally:
                    pipe.shutdown()
            return "read"
        except (DataError, PipelineError, OSError) as e:
            return f"{type(e).__name__}: {e}"


def test_a_file_too_large_to_allocate_is_named():
    whats = ["read_file", "read_files", "packed", "raise", "skip"]
    got = dict(zip(whats, run_isolated("tests.test_data_huge_files:_run", whats, timeout=60)))
    for what, text in got.items():
        assert not isinstance(text, Died), (what, text)
    says = f"Cannot allocate memory for its {HUGE} bytes"
    assert got["read_file"].startswith("OSError") and says in got["read_file"] and "1.bin" in got["read_file"]
    assert got["read_files"].startswith("1 bytes; ") and says in got["read_files"], got["read_files"]
    assert got["packed"] == "None"  # the general path then names the file
    assert "DataError" in got["raise"] and says in got["raise"] and "1.bin" in got["raise"], got["raise"]
    assert got["skip"].startswith("sizes [1, 1, 3]; skipped: ") and says in got["skip"], got["skip"]


def _run_ranged(req: list) -> str:
    """Child side: a reader whose index (or .npy header) names a byte range of HUGE bytes inside a
    sparse file of that size; the error it gave. Mapping the whole file fails under the cap too."""
    what, mapped = req
    resource.setrlimit(resource.RLIMIT_AS, (64 << 30, 64 << 30))
    from torch_dali import tfrecord as tfrec
    with tempfile.TemporaryDirectory() as d:
        big = os.path.join(d, "big.bin")
        with open(big, "wb") as f:
            f.truncate(HUGE + 1024)
        idx = os.path.join(d, "big.idx")
        with open(idx, "w") as f:
            f.write({"tfrecord": f"0 {HUGE}\n", "webdataset": f"v1.2 1\nbin 0 {HUGE} s.bin\n"}.get(what, ""))
        if what == "numpy":
            head = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % HUGE
            head = head.ljust(117) + "\n"
            with open(big, "r+b") as f:
                f.write(b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head.encode())

        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def p():
            kw = {"dont_use_mmap": not mapped}
            if what == "tfrecord":
                return tuple(fn.readers.tfrecord(path=big, index_path=idx, features={
                    "x": tfrec.FixedLenFeature([], tfrec.int64, 0)}, **kw).values())
            if what == "webdataset":
                return fn.readers.webdataset(paths=big, index_paths=idx, ext="bin", **kw)
            return fn.readers.numpy(files=[big], **kw)
        pipe = p()
        try:
            pipe.build()
            pipe.run()
            return "read"
        except (DataError, PipelineError) as e:
            return f"{type(e).__name__}: {e}"
        finally:
            pipe.shutdown()


def test_a_byte_range_too_large_to_allocate_is_named():
    """readers.tfrecord, webdataset and numpy read byte ranges their index or header gives: one of
    1 TiB (inside a sparse file, so it passes the size check) was the allocator's MemoryError, or
    mmap's "[Errno 12] Cannot allocate memory" for the whole file, naming no file."""
    reqs = [[w, m] for w in ("tfrecord", "webdataset", "numpy") for m in (True, False)]
    for req, text in zip(reqs, run_isolated("tests.test_data_huge_files:_run_ranged", reqs, timeout=60)):
        assert not isinstance(text, Died), (req, text)
        assert "DataError" in text and "big.bin" in text, (req, text)
        assert f"cannot allocate memory for the {HUGE} bytes" in text, (req, text)


def _run_recordio(_: object) -> str:
    """Child side: readers.mxnet (mapped) on a 1 TiB sparse .rec whose first record is small."""
    import struct
    resource.setrlimit(resource.RLIMIT_AS, (64 << 30, 64 << 30))
    with tempfile.TemporaryDirectory() as d:
        rec, idx = os.path.join(d, "a.rec"), os.path.join(d, "a.idx")
        payload = struct.pack("<IfQQ", 0, 1.0, 0, 0) + b"xyz!"  # IRHeader (flag 0, label 1), 4 bytes
        with open(rec, "wb") as f:
            f.write(struct.pack("<II", 0xCED7230A, len(payload)) + payload)
            f.truncate(HUGE)
        with open(idx, "w") as f:
            f.write("0\t0\n")

        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def p():
            return fn.readers.mxnet(path=rec, index_path=idx)
        pipe = p()
        try:
            data, label = pipe.run()
            return f"{bytes(data.at(0))!r} {float(label.at(0)[0])}"
        except Exception as e:  # noqa: BLE001 - the answer is what it raised
            return f"{type(e).__name__}: {e}"
        finally:
            pipe.shutdown()


def test_a_recordio_file_larger_than_the_address_space_is_read():
    """Mapping a whole .rec file that exceeds the address space left (ulimit -v) failed the build
    with "[Errno 12] Cannot allocate memory", naming no file; the reader now reads it with pread."""
    (got,) = run_isolated("tests.test_data_huge_files:_run_recordio", [0], timeout=60)
    assert got == "b'xyz!' 1.0", got
