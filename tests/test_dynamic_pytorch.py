"""`ndd.pytorch.nodes` (torchdata nodes of the dynamic mode): the batches, dicts, tensors and
errors DALI 2.4's nodes gave for the same five files (measured 2026-12-05 with torchdata 0.11)."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import torch_dali.experimental.dynamic as ndd

HAS_TORCHDATA = importlib.util.find_spec("torchdata") is not None
needs_torchdata = pytest.mark.skipif(not HAS_TORCHDATA, reason="torchdata is not installed")
from _file_trees import root  # noqa: F401 (a fixture)


def test_nodes_need_torchdata():
    if not HAS_TORCHDATA:
        assert ndd.pytorch.__all__ == []
        with pytest.raises(AttributeError, match="torchdata"):
            ndd.pytorch.nodes
    else:
        assert ndd.pytorch.__all__ == ["nodes"]
        assert ndd.pytorch.nodes.__all__ == ["Reader", "DictMapper", "ToTorch"]


def _epochs(node, n=1):
    out = []
    for _ in range(n):
        node.reset()
        ep = []
        while True:
            try:
                ep.append(node.next())
            except StopIteration:
                break
        out.append(ep)
    return out


def _plain(d):
    return {k: [np.asarray(t).tolist() for t in v] if isinstance(v, ndd.Batch) else np.asarray(v).tolist()
            for k, v in d.items()}


def _lengths(b):
    return ndd.batch([np.int32(t.shape[0]) for t in b.tensors])


@needs_torchdata
def test_reader_node(root):
    import torchdata.nodes as tn
    N = ndd.pytorch.nodes
    node = N.Reader(ndd.readers.File, batch_size=2, file_root=root)
    assert isinstance(node, tn.BaseNode)
    epochs = [[_plain(d) for d in ep] for ep in _epochs(node, 2)]
    assert epochs == [  # DALI 2.4: full batches, the next epoch goes on where the last batch stopped
        [{"data": [[97, 98], [99, 100, 101]], "label": [[0], [0]]},
         {"data": [[102], [103, 104, 105, 106]], "label": [[1], [1]]},
         {"data": [[107, 108], [97, 98]], "label": [[1], [0]]}],
        [{"data": [[99, 100, 101], [102]], "label": [[0], [1]]},
         {"data": [[103, 104, 105, 106], [107, 108]], "label": [[1], [1]]},
         {"data": [[97, 98], [99, 100, 101]], "label": [[0], [0]]}]]
    samples = _epochs(N.Reader(ndd.readers.File, batch_size=None, file_root=root))[0]
    assert all(isinstance(v, ndd.Tensor) for d in samples for v in d.values())
    assert [_plain(d)["data"] for d in samples] == [[97, 98], [99, 100, 101], [102], [103, 104, 105, 106], [107, 108]]
    named = _epochs(N.Reader(ndd.readers.File, batch_size=5, file_root=root, output_names=["x", "y"]))[0]
    assert [list(d) for d in named] == [["x", "y"]] and _plain(named[0])["y"] == [[0], [0], [1], [1], [1]]
    meta = N.Reader(ndd.readers.File, batch_size=2, file_root=root, pad_last_batch=True, num_shards=2).get_metadata()
    assert meta == {"epoch_size": 5, "epoch_size_padded": 6, "number_of_shards": 2, "shard_id": 0,
                    "pad_last_batch": 1, "stick_to_shard": 0}
    assert node.get_state() == {}


@needs_torchdata
def test_reader_node_errors(root):
    N = ndd.pytorch.nodes
    with pytest.raises(ValueError):  # one name for two outputs
        N.Reader(ndd.readers.File, batch_size=5, file_root=root, output_names=["x"])
    with pytest.raises(TypeError):  # batch_size is a required keyword
        N.Reader(ndd.readers.File, file_root=root)
    with pytest.raises(RuntimeError):
        N.Reader(ndd.readers.File, batch_size=2, file_root=root).next()
    with pytest.raises(NotImplementedError):
        N.Reader(ndd.readers.File, batch_size=2, file_root=root).reset({"a": 1})
    with pytest.raises(TypeError):
        N.ToTorch(N.Reader(ndd.readers.File, batch_size=2, file_root=root), output_stream="x")


def test_reader_max_batch_size(root):
    # DALI 2.4 names a reader's first argument max_batch_size: next_epoch's default and its limit
    r = ndd.readers.File(max_batch_size=3, file_root=root)
    assert r._infer_num_outputs() == 2
    assert [[len(x.tensors) for x in b] for b in r.next_epoch()] == [[3, 3], [3, 3]]
    with pytest.raises(ValueError):
        next(iter(ndd.readers.File(max_batch_size=2, file_root=root).next_epoch(batch_size=4)))
    if not HAS_TORCHDATA:
        return
    got = [_plain(d) for d in _epochs(ndd.pytorch.nodes.Reader(ndd.readers.File, batch_size=2, max_batch_size=3,
                                                               file_root=root))[0]]
    assert [d["data"] for d in got] == [[[97, 98], [99, 100, 101]], [[102], [103, 104, 105, 106]], [[107, 108], [97, 98]]]


@needs_torchdata
def test_mapper_and_torch_nodes(root):
    import torchdata.nodes as tn
    N = ndd.pytorch.nodes
    mapped = _epochs(N.DictMapper(N.Reader(ndd.readers.File, batch_size=2, file_root=root), _lengths))[0]
    assert [_plain(d)["data"] for d in mapped] == [[2, 3], [1, 4], [2, 2]]
    labels = _epochs(N.DictMapper(N.Reader(ndd.readers.File, batch_size=2, file_root=root), lambda b: b + 10,
                                  key="label"))[0]
    assert [_plain(d)["label"] for d in labels] == [[[10], [10]], [[11], [11]], [[11], [10]]]
    node = N.ToTorch(N.DictMapper(N.Reader(ndd.readers.File, batch_size=2, file_root=root), _lengths))
    got = [[(str(t.dtype), t.tolist()) for t in x] for x in tn.Loader(node)]
    assert got == [[("torch.int32", [2, 3]), ("torch.int32", [[0], [0]])],
                   [("torch.int32", [1, 4]), ("torch.int32", [[1], [1]])],
                   [("torch.int32", [2, 2]), ("torch.int32", [[1], [0]])]]
    loader = tn.Loader(tn.Prefetcher(N.ToTorch(N.DictMapper(N.Reader(ndd.readers.File, batch_size=2, file_root=root),
                                                            _lengths)), prefetch_factor=2))
    assert [[[t.tolist() for t in x] for x in loader] for _ in range(2)] == [
        [[[2, 3], [[0], [0]]], [[1, 4], [[1], [1]]], [[2, 2], [[1], [0]]]],
        [[[3, 1], [[0], [1]]], [[4, 2], [[1], [1]]], [[2, 3], [[0], [0]]]]]
    samples = _epochs(N.ToTorch(N.Reader(ndd.readers.File, batch_size=None, file_root=root)))[0]
    assert [(str(a.dtype), a.tolist(), b.tolist()) for a, b in samples][:2] == [
        ("torch.uint8", [97, 98], [0]), ("torch.uint8", [99, 100, 101], [0])]
    with pytest.raises((ValueError, RuntimeError)):  # samples of different shapes are not one tensor
        _epochs(N.ToTorch(N.Reader(ndd.readers.File, batch_size=2, file_root=root)))


@needs_torchdata
def test_doc_usage_pattern_on_photos(tmp_path):
    # DALI's torchdata page: Reader -> DictMapper(decode, resize, normalize) -> ToTorch ->
    # Prefetcher -> Loader, on the package's 8 photos; sha256 of each batch's bytes from DALI 2.4
    import hashlib
    import shutil
    from pathlib import Path

    import torchdata.nodes as tn

    photos = Path(ndd.__file__).resolve().parents[2] / "data" / "photos"
    (tmp_path / "x").mkdir()
    for p in sorted(photos.glob("*.jpg")):
        shutil.copy(p, tmp_path / "x" / p.name)

    def process(jpegs):
        imgs = ndd.resize(ndd.decoders.image(jpegs), size=[64, 64])
        return ndd.crop_mirror_normalize(imgs, mean=[128.0] * 3, std=[64.0] * 3, dtype=ndd.float32)

    N = ndd.pytorch.nodes
    reader = N.Reader(ndd.readers.File, batch_size=4, file_root=str(tmp_path))
    loader = tn.Loader(tn.Prefetcher(N.ToTorch(N.DictMapper(source=reader, map_fn=process)), prefetch_factor=2))
    got = [(tuple(x.shape), hashlib.sha256(x.numpy().tobytes()).hexdigest()[:16], y.flatten().tolist())
           for x, y in loader]
    assert got == [((4, 3, 64, 64), "f6af17b4f3308bbf", [0, 0, 0, 0]),
                   ((4, 3, 64, 64), "e3c6155133aa06b3", [0, 0, 0, 0])]
