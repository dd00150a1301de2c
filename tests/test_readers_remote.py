"""Remote storage: every file reader reads fsspec URLs (here fsspec's in-memory filesystem) exactly as
it reads the same files on disk; local paths never need fsspec; a URL without fsspec (or without a
backend for its scheme) is a DataError saying what to install."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import torch_dali.tfrecord as tfrec
from torch_dali import fn, pipeline_def
from torch_dali.errors import DataError
from tests.reference import readers_formats as W
from tests.reference import readers_lmdb as R

fsspec = pytest.importorskip("fsspec")


def _pipe(reader, bs=4, **kw):
    @pipeline_def(batch_size=bs, num_threads=2, device_id=None, seed=9)
    def p():
        out = getattr(fn.readers, reader)(name="R", **kw)
        if isinstance(out, dict):
            return tuple(out.values())
        return tuple(out) if isinstance(out, (list, tuple)) else out
    pipe = p()
    pipe.build()
    return pipe


def _batches(pipe, n=3):
    got = []
    for _ in range(n):
        got.append([[np.asarray(tl.at(i)) for i in range(len(tl))] for tl in pipe.run()])
    pipe.shutdown()
    return got


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for col_x, col_y in zip(x, y):
            for s, t in zip(col_x, col_y):
                assert s.dtype == t.dtype
                np.testing.assert_array_equal(s, t)


@pytest.fixture()
def mem(tmp_path):
    """A local folder and its copy under memory://<unique>/ (files and subfolders)."""
    fs = fsspec.filesystem("memory")
    base = f"/td{os.getpid()}_{tmp_path.name}"

    def upload() -> str:
        for dirpath, _, names in os.walk(tmp_path):
            for name in names:
                rel = os.path.relpath(os.path.join(dirpath, name), tmp_path)
                with open(os.path.join(dirpath, name), "rb") as f:
                    fs.pipe(f"{base}/{rel}", f.read())
        return f"memory://{base}"
    yield tmp_path, upload
    fs.rm(base, recursive=True)


def test_numpy_file_root_files_and_file_list(mem):
    root, upload = mem
    rng = np.random.default_rng(1)
    (root / "sub").mkdir()
    for k in range(5):
        np.save(root / ("sub" if k % 2 else ".") / f"a{k}.npy", rng.integers(0, 99, (3, k + 1)).astype(np.int16))
    (root / "list.txt").write_text("sub/a3.npy\na0.npy\n")
    url = upload()
    _same(_batches(_pipe("numpy", file_root=str(root))), _batches(_pipe("numpy", file_root=url)))
    _same(_batches(_pipe("numpy", bs=2, file_root=str(root), files=["sub/a1.npy", "a4.npy"]), 1),
          _batches(_pipe("numpy", bs=2, file_root=url, files=["sub/a1.npy", "a4.npy"]), 1))
    _same(_batches(_pipe("numpy", bs=2, file_list=str(root / "list.txt")), 1),
          _batches(_pipe("numpy", bs=2, file_list=url + "/list.txt"), 1))
    roi = dict(roi_start=[1, 0], roi_end=[3, 1])
    _same(_batches(_pipe("numpy", file_root=str(root), **roi)), _batches(_pipe("numpy", file_root=url, **roi)))
    with pytest.raises(DataError, match="does not exist"):
        _pipe("numpy", file_root=url, files=["nope.npy"])
    (root / "bad.txt").write_text("../../elsewhere/x.npy\n")
    with pytest.raises(DataError, match="outside"):
        _pipe("numpy", file_list=upload() + "/bad.txt")


def test_tfrecord_webdataset_caffe(mem):
    root, upload = mem
    W.write_tfrecord(str(root / "t.tfrecord"), [W.encode_example({"x": ("int64", [i, -i])}) for i in range(7)],
                     str(root / "t.idx"))
    W.write_tar(str(root / "w.tar"), [(f"s{i}.{e}", bytes([i]) * (i + 1)) for i in range(7) for e in ("a", "b")])
    lmdb_ok = True
    try:
        R.write_lmdb(str(root / "lm"), [(b"%d" % i, R.datum(bytes([i]) * 300 * i, i, True)) for i in range(7)])
    except ImportError:
        lmdb_ok = False
    url = upload()
    feats = {"x": tfrec.VarLenFeature(tfrec.int64, 0)}
    _same(_batches(_pipe("tfrecord", path=str(root / "t.tfrecord"), index_path=str(root / "t.idx"), features=feats)),
          _batches(_pipe("tfrecord", path=url + "/t.tfrecord", index_path=url + "/t.idx", features=feats)))
    _same(_batches(_pipe("webdataset", paths=[str(root / "w.tar")], ext=["a", "b"], random_shuffle=True, initial_fill=3)),
          _batches(_pipe("webdataset", paths=[url + "/w.tar"], ext=["a", "b"], random_shuffle=True, initial_fill=3)))
    if lmdb_ok:
        _same(_batches(_pipe("caffe", path=str(root / "lm"))), _batches(_pipe("caffe", path=url + "/lm")))


def test_local_paths_never_import_fsspec(tmp_path, monkeypatch):
    np.save(tmp_path / "a.npy", np.arange(3))
    monkeypatch.setitem(sys.modules, "fsspec", None)  # `import fsspec` now fails
    got = _batches(_pipe("numpy", bs=1, file_root=f"file://{tmp_path}"), 1)
    np.testing.assert_array_equal(got[0][0][0], np.arange(3))
    with pytest.raises(DataError, match="needs fsspec"):
        _pipe("numpy", bs=1, files=["memory://x/a.npy"])


def test_unknown_scheme_is_a_data_error():
    with pytest.raises(DataError, match="nosuchscheme://"):
        _pipe("webdataset", paths=["nosuchscheme://bucket/a.tar"], ext=["a"])
