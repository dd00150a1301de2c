"""Packed samples: readers.mxnet and readers.file hand their data over as parts of one buffer (no
tensor per sample), and every way of reading such a batch gives the bytes the per-sample paths give."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali._native import build as _cbuild
from torch_dali.io import host_io as H
from torch_dali.io.recordio import write_recordio
from torch_dali.packed import PackedSamples
from torch_dali.tensor_list import TensorList, TensorListCPU, plain, user_view

C_SKIP = _cbuild.skip_reason(H.LIB)
needs_c = pytest.mark.skipif(bool(C_SKIP), reason=f"host_io unavailable: {C_SKIP}")


def _packed() -> tuple[PackedSamples, list[bytes]]:
    parts = [b"first", b"", b"the third one", b"4"]
    buf = bytearray(b"..")
    offs = []
    for p in parts:
        offs.append(len(buf))
        buf += p + b"--"
    order = [2, 0, 1, 3, 2]  # any order, a repeat
    packed = PackedSamples.make(torch.frombuffer(buf, dtype=torch.uint8), [offs[i] for i in order],
                                [len(parts[i]) for i in order])
    return packed, [parts[i] for i in order]


def test_a_packed_batch_reads_as_its_parts():
    packed, want = _packed()
    tl = TensorList.from_packed(packed)
    assert len(tl) == 5 and tl.packed is packed
    assert tl.shape() == [(len(w),) for w in want]
    assert tl.ndim() == 1 and str(tl.dtype).endswith("UINT8") and tl.device.type == "cpu"
    assert tl.packed is packed  # none of these made the views
    assert [bytes(t.numpy()) for t in tl] == want
    assert tl.packed is None  # the samples are what the batch holds now
    assert [bytes(t.numpy()) for t in tl.samples] == want


@pytest.mark.parametrize("wrap", [user_view, plain, TensorListCPU])
def test_the_user_s_classes_of_a_packed_batch_hold_its_bytes(wrap):
    packed, want = _packed()
    out = wrap(TensorList.from_packed(packed))
    assert len(out) == 5
    assert [bytes(np.asarray(out.at(i))) for i in range(5)] == want


def test_a_packed_batch_s_handle_and_reinterpret_see_the_samples():
    packed, want = _packed()
    tl = TensorList.from_packed(packed)
    handle = tl.fresh_handle()
    assert [bytes(t.numpy()) for t in handle] == want and tl.samples is handle
    same = TensorList.from_packed(PackedSamples.make(torch.arange(8, dtype=torch.uint8), [0, 4], [4, 4]))
    same.reinterpret(torch.int8)
    assert [t.dtype for t in same] == [torch.int8] * 2
    assert same.as_tensor().shape == (2, 4)


def test_packed_parts_must_lie_in_their_buffer():
    buf = torch.zeros(10, dtype=torch.uint8)
    with pytest.raises(ValueError, match="outside"):
        PackedSamples.make(buf, [8], [3])
    with pytest.raises(ValueError, match="outside"):
        PackedSamples.make(buf, [-1], [1])
    with pytest.raises(ValueError, match="offsets"):
        PackedSamples.make(buf, [0, 1], [1])
    with pytest.raises(ValueError, match="1-D"):
        PackedSamples.make(torch.zeros(4, 4, dtype=torch.uint8)[:, 0], [0], [1])
    assert len(PackedSamples.make(buf, [], [])) == 0


# -- readers ------------------------------------------------------------------------------------

def _rec(tmp: Path, n: int = 23) -> Path:
    rng = np.random.default_rng(3)
    items = [(float(i), rng.integers(0, 256, int(rng.integers(0, 300)), dtype=np.uint8).tobytes()) for i in range(n)]
    rec = tmp / "d.rec"
    write_recordio(rec, tmp / "d.idx", items)
    return rec


def _run(make, iters: int) -> tuple[list[list[bytes]], list[list[float]], list[bool]]:
    pipe = make()
    pipe.build()
    data, labels, packed = [], [], []
    for _ in range(iters):
        d, lab = pipe.run()
        packed.append(False)
        data.append([bytes(np.asarray(d.at(i))) for i in range(len(d))])
        labels.append([float(np.asarray(lab.at(i)).reshape(-1)[0]) for i in range(len(lab))])
    return data, labels, packed


def _mxnet_pipe(rec: Path, **kw):
    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=5)
    def p():
        return fn.readers.mxnet(path=[str(rec)], index_path=[str(rec)[:-4] + ".idx"], random_shuffle=True,
                                pad_last_batch=True, name="r", **kw)
    return p


def test_mxnet_packed_batches_equal_the_per_record_reads(tmp_path, monkeypatch):
    """Records come packed; with the batched read declined each is read by itself: same bytes,
    labels and order over several epochs (shuffled, the last batch padded with a repeat)."""
    from torch_dali.io.recordio import RecordFile
    rec = _rec(tmp_path)
    packed_run = _run(_mxnet_pipe(rec), 10)
    monkeypatch.setattr(RecordFile, "simple_records", lambda self, offsets: None)
    plain_run = _run(_mxnet_pipe(rec), 10)
    assert packed_run[:2] == plain_run[:2]


def test_the_mxnet_reader_hands_packed_samples_to_its_consumer(tmp_path):
    from torch_dali.ops._operator import BatchContext
    from torch_dali.ops.readers.mxnet import MXNetReader
    rec = _rec(tmp_path)
    pipe = _mxnet_pipe(rec)()
    pipe.build()
    op = next(o for o in pipe.executor.plan.ops.values() if isinstance(o, MXNetReader))
    data, labels = op.run_batch(BatchContext(op.node, 0, 8, torch.device("cpu"), None), [], {})
    assert data.packed is not None and len(data) == 8
    assert labels.dense is not None and labels.dense.shape == (8, 1)
    for i in range(8):
        want = op._load(op._last_indices[i])[0]  # noqa: SLF001 - the per-record path, as reference
        assert torch.equal(data.packed[i], want)


def _file_pipe(root: Path):
    @pipeline_def(batch_size=6, num_threads=2, device_id=None, seed=2)
    def p():
        return fn.readers.file(file_root=str(root), random_shuffle=True, pad_last_batch=True, name="r")
    return p


def _tree(tmp: Path) -> Path:
    rng = np.random.default_rng(1)
    for c in range(3):
        d = tmp / "root" / f"c{c}"
        d.mkdir(parents=True)
        for i in range(5):
            (d / f"{i}.jpg").write_bytes(rng.integers(0, 256, int(rng.integers(0, 200)), dtype=np.uint8).tobytes())
    return tmp / "root"


@needs_c
def test_file_reader_packed_batches_equal_the_per_file_reads(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    packed_run = _run(_file_pipe(root), 7)
    monkeypatch.setattr(H, "read_files_packed", lambda paths, run=None: None)  # the general path
    plain_run = _run(_file_pipe(root), 7)
    assert packed_run[:2] == plain_run[:2]


@needs_c
def test_read_files_packed_reads_whole_files_or_gives_up(tmp_path):
    root = _tree(tmp_path)
    files = sorted(root.rglob("*.jpg")) * 30  # more than one chunk of 64
    packed = H.read_files_packed(files)
    assert [bytes(packed[i].numpy()) for i in range(len(files))] == [f.read_bytes() for f in files]
    calls = []
    H.read_files_packed(files, lambda f, k: calls.append(k) or [f(i) for i in range(k)])
    assert calls == [8, 8]  # stat, then read, in chunks on the pool
    for bad in (tmp_path / "missing", root / "c0", "with\0nul"):  # read_files then names the problem
        assert H.read_files_packed(files[:3] + [bad]) is None
    assert H.read_files_packed([]) is None


@needs_c
def test_a_file_reader_error_still_names_the_file(tmp_path):
    root = _tree(tmp_path)
    victim = root / "c1" / "2.jpg"
    pipe = _file_pipe(root)()
    pipe.build()
    victim.unlink()  # gone after the listing: the packed read gives up, the per-file read names it
    with pytest.raises(Exception, match="2.jpg"):
        for _ in range(4):
            pipe.run()


@needs_c
def test_the_header_table_of_packed_samples_is_the_list_s(tmp_path):
    from torch_dali.sample_data import make_image_folder
    make_image_folder(tmp_path / "img", images_per_class=3)
    files = sorted((tmp_path / "img").rglob("*.jp*g")) + sorted((tmp_path / "img").rglob("*.png"))
    packed = H.read_files_packed(files + files[:2])
    table = H.image_info_table(packed)
    assert table is not None and table[:, 0].tolist().count(0) >= len(files)
    assert np.array_equal(table, H.image_info_table(packed.views()))
