"""Dynamic mode (`ndd`) as DALI's documentation examples use it. Expected values were measured with
DALI 2.4's CPU backend."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import torch_dali.experimental.dynamic as ndd
import torch_dali.tfrecord as tfrec
from torch_dali import fn, pipeline_def
from torch_dali.sample_data import make_image_folder
from tests.reference import readers_formats as W


def test_path_objects_are_string_arguments(tmp_path):
    # DALI 2.4 takes pathlib.Path wherever an argument is a string or a list of strings
    make_image_folder(tmp_path, images_per_class=1)
    names = sorted(p.relative_to(tmp_path) for p in tmp_path.glob("*/*.jpg"))

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        a, _ = fn.readers.file(file_root=tmp_path)
        b, _ = fn.readers.file(file_root=str(tmp_path), files=names[:2])
        return a, b

    p = pipe()
    p.build()
    a, b = p.run()
    assert len(a) == 2 and np.asarray(b.at(0)).size > 0
    jpegs, labels = next(ndd.readers.File(file_root=tmp_path).next_epoch(batch_size=3))
    assert jpegs.batch_size == 3 and np.asarray(labels.select(0)).tolist() == [0]


def test_tfrecord_reader_gives_a_dict_per_batch(tmp_path):
    path, idx = tmp_path / "d.tfrecord", tmp_path / "d.idx"
    W.write_tfrecord(str(path), [W.encode_example({"img": ("bytes", [b"ab" * (k + 1)]),
                                                   "label": ("int64", [k])}) for k in range(3)], str(idx))
    reader = ndd.readers.TFRecord(path=str(path), index_path=Path(idx), features={
        "img": tfrec.FixedLenFeature((), tfrec.string, ""),
        "label": tfrec.FixedLenFeature([1], tfrec.int64, -1)})
    batches = list(reader.next_epoch(batch_size=2))
    assert [list(b) for b in batches] == [["img", "label"]] * 2  # as in DALI: the features' names
    assert [np.asarray(t).tolist() for t in batches[0]["label"].tensors] == [[0], [1]]
    assert bytes(np.asarray(batches[0]["img"].select(1))) == b"abab"
    sample = next(ndd.readers.TFRecord(path=str(path), index_path=str(idx), features={
        "label": tfrec.FixedLenFeature([1], tfrec.int64, -1)}).next_epoch())
    assert isinstance(sample, dict) and np.asarray(sample["label"]).tolist() == [0]


def test_coin_flip_output_types_are_dalis():
    # DALI 2.4: bool, uint8 and int32 coin flips; any other dtype fails the op (RuntimeError)
    from torch_dali import types
    assert [ndd.random.coin_flip(dtype=t).dtype for t in (types.BOOL, types.UINT8, types.INT32)] == [
        ndd.bool, ndd.uint8, ndd.int32]
    for t in (types.FLOAT, types.INT64):
        try:
            ndd.random.coin_flip(probability=0.5, dtype=t)
        except RuntimeError as e:
            assert "not supported" in str(e)
        else:
            raise AssertionError(f"coin_flip(dtype={t}) was taken")


def test_a_reader_with_one_output_gives_1_tuples(tmp_path):
    # DALI 2.4: `for (batch,) in ndd.readers.Numpy(...).next_epoch(batch_size=4)`, and 1-tuples of
    # Tensors one sample at a time
    for k in range(3):
        np.save(tmp_path / f"{k}.npy", np.full((2, 3), k, dtype=np.int16))
    batches = list(ndd.readers.Numpy(file_root=tmp_path).next_epoch(batch_size=2))
    assert all(isinstance(b, tuple) and len(b) == 1 for b in batches)
    (first,) = batches[0]
    assert first.batch_size == 2 and [int(np.asarray(t)[0, 0]) for t in first.tensors] == [0, 1]
    samples = list(ndd.readers.Numpy(file_root=tmp_path, roi_start=[0, 1], roi_end=[2, 3]).next_epoch())
    assert [len(s) for s in samples] == [1, 1, 1] and samples[2][0].shape == (2, 2)


def test_calling_a_reader_gives_the_streams_next_sample(tmp_path):
    # DALI 2.4: `encoded, label = reader()` gives one sample's Tensors, the stream running on across
    # epochs (labels 0, 1, 1, 0, 1 for files a/0, b/0, b/1); calling and next_epoch() do not mix
    for d, n in (("a", 1), ("b", 2)):
        (tmp_path / d).mkdir()
        for k in range(n):
            (tmp_path / d / f"{k}.wav").write_bytes(bytes([k, 7]))
    r = ndd.readers.File(file_root=tmp_path)
    outs = [r() for _ in range(5)]
    assert all(isinstance(o, tuple) and len(o) == 2 for o in outs)
    assert [int(np.asarray(lbl)[0]) for _, lbl in outs] == [0, 1, 1, 0, 1]
    assert isinstance(outs[0][0], ndd.Tensor) and bytes(np.asarray(outs[2][0])) == bytes([1, 7])
    try:
        next(r.next_epoch())
    except RuntimeError:
        pass
    else:
        raise AssertionError("next_epoch() after reader() was taken")
