"""io.file.read, checked against DALI 2.4's CPU backend (run once in /work/dali-venv; its results
are written out below, the files being made the same way here): a relative and an absolute path
give the file's bytes (1-D uint8, layout ''); an int8 path and one ending with NUL bytes are read
as the text before the NUL; DALI refuses int32 paths and fails on a missing file, a folder or an
empty path (RuntimeError, as here). An empty file reads as empty here (DALI 2.4: empty with
dont_use_mmap, an error otherwise); a 2-D path is refused here (DALI reads its first row's length)."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from torch_dali import fn, ops, pipeline_def

TEXT = b"hello world"


def enc(s: str) -> np.ndarray:
    return np.frombuffer(s.encode(), np.uint8).copy()


def run(paths: list[np.ndarray], **kw) -> tuple[list[bytes], list[torch.Tensor], str]:
    @pipeline_def(batch_size=len(paths), num_threads=1, device_id=None)
    def pipe():
        return fn.io.file.read(fn.external_source(source=lambda: [torch.from_numpy(p) for p in paths],
                                                  batch=True), **kw)

    p = pipe()
    p.build()
    (out,) = p.run()
    return [t.numpy().tobytes() for t in out], list(out), out.layout()


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_bytes(TEXT)
    (tmp_path / "empty.bin").write_bytes(b"")
    blob = bytes(range(256)) * 40
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "blob.bin").write_bytes(blob)
    return tmp_path, blob


def test_reads_like_dali(files):
    root, blob = files
    got, tensors, layout = run([enc("a.txt"), enc(os.path.abspath("a.txt")), enc("sub/blob.bin"),
                                np.append(enc("a.txt"), [0, 0]).astype(np.uint8)])
    assert got == [TEXT, TEXT, blob, TEXT]
    assert layout == "" and all(t.dtype == torch.uint8 and t.dim() == 1 for t in tensors)
    assert run([enc("a.txt").view(np.int8)])[0] == [TEXT]  # a batch's paths share one type
    for kw in ({"dont_use_mmap": True}, {"use_o_direct": True}):
        assert run([enc("a.txt")], **kw)[0] == [TEXT]
    assert run([enc("empty.bin")], dont_use_mmap=True)[0] == [b""]
    assert ops.io.file.Read is not None


@pytest.mark.parametrize("path", ["nope.txt", ".", "", "sub"])
def test_unreadable_paths_fail(files, path):
    with pytest.raises(RuntimeError):
        run([enc(path)])


@pytest.mark.parametrize("bad", [enc("a.txt").astype(np.int32), enc("a.txt").reshape(1, -1),
                                 enc("a.txt").astype(np.float32)])
def test_refuses_non_byte_paths(files, bad):
    with pytest.raises(RuntimeError):
        run([bad])
