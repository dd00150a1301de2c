"""io.bounded_file: whole small files read from untrusted paths (COCO annotations, preprocessed
COCO folders, pipeline documents) cost their own size, never the cap's."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from torch_dali.errors import DataError, SerializationError
from torch_dali.io import bounded_file as B
from torch_dali.io import coco
from torch_dali.serialization import document

ROOT = Path(__file__).resolve().parents[1]


def test_reads_a_file_and_refuses_past_the_cap(tmp_path):
    f = tmp_path / "a.bin"
    f.write_bytes(b"0123456789")
    assert B.read_regular_file(f, 10) == b"0123456789"
    with pytest.raises(B.FileTooLarge) as e:
        B.read_regular_file(f, 9)
    assert e.value.size == 10
    with pytest.raises(FileNotFoundError):
        B.read_regular_file(tmp_path / "missing", 10)
    with pytest.raises(B.NotRegularFile):
        B.read_regular_file(tmp_path, 10)


def test_a_file_that_grew_after_fstat_is_read_on_to_the_cap(tmp_path, monkeypatch):
    f = tmp_path / "a.bin"
    f.write_bytes(bytes(range(200)))
    real = os.fstat

    def smaller(fd):  # the size fstat saw before the file grew to 200 bytes
        st = real(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 3,
                               st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(B, "_STEP", 16)
    monkeypatch.setattr(B.os, "fstat", smaller)
    assert B.read_regular_file(f, 500) == bytes(range(200))
    with pytest.raises(B.FileTooLarge) as e:
        B.read_regular_file(f, 100)
    assert e.value.size == 101


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "annotations.json"
    os.mkfifo(fifo)
    done: list[BaseException | None] = []

    def read() -> None:
        try:
            coco.load_json(str(fifo))
            done.append(None)
        except BaseException as e:  # noqa: BLE001 - checked below, on the test's thread
            done.append(e)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    assert done, "reading a FIFO hung"
    assert isinstance(done[0], DataError) and "not a regular file" in str(done[0]), done
    with pytest.raises(SerializationError, match="not a regular file"):
        document.read_file(fifo)


def test_callers_name_the_file_and_the_cap(tmp_path):
    j = tmp_path / "ann.json"
    j.write_text('{"images": []}')
    assert coco.load_json(str(j)) == {"images": []}
    with pytest.raises(DataError, match=r"ann.json is 14 bytes, more than the 10"):
        coco.load_json(str(j), max_bytes=10)


def test_small_files_read_under_a_tight_address_space_limit(tmp_path):
    """A read of n bytes allocates n up front: reading "at most the cap" cost 4 GiB per preprocessed
    COCO file and 1 GiB per annotation file, a MemoryError under an address-space limit (small
    machines, `ulimit -v`). A child limits its own address space to what it uses plus 512 MiB."""
    ann = tmp_path / "ann.json"
    ann.write_text('{"images": [], "annotations": [], "categories": []}')
    pre = ROOT / "tests" / "reference" / "coco_preprocessed" / "pixelwise"
    code = textwrap.dedent(f"""
        import resource
        from torch_dali.io import coco, coco_preprocessed
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (512 << 20), resource.RLIM_INFINITY))
        print(len(coco_preprocessed.load({str(pre)!r}, False, True, False)), coco.load_json({str(ann)!r})["images"])
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split()[-1] == "[]" and int(r.stdout.split()[0]) > 0


def test_a_range_past_the_end_is_refused_before_its_buffer_is_made(tmp_path):
    """Readers read byte ranges an index names (TFRecord, WebDataset, LMDB): a range claiming 1 TiB
    of a 10-byte file is a DataError naming the file, not a 1 TiB allocation (MemoryError, or the
    machine's memory when the claim is a few GiB)."""
    from torch_dali.ops.readers._storage import ByteFile
    f = tmp_path / "shard.tfrecord"
    f.write_bytes(b"0123456789")
    bf = ByteFile(str(f), "readers.tfrecord")
    assert bytes(bf.read(2, 8)) == b"23456789"
    for offset, n in ((0, 1 << 40), (8, 3), (11, 1)):
        with pytest.raises(DataError, match="shard.tfrecord: reading"):
            bf.read(offset, n)
    bf.close()
