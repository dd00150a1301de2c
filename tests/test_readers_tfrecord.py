"""readers.tfrecord beyond the DALI tables: the framing (CRC-32C) our writer makes, features missing
or of the wrong type, malformed records (errors, never crashes), fsspec URLs, YAML round trips, files
written by the `tfrecord` package read as its own reader reads them. Most tests write TFRecords with
tests/reference/readers_formats.py (framing and Example encoding per TensorFlow's format), which
also writes unpacked lists and other cases the package never writes."""
from __future__ import annotations

import random

import numpy as np
import pytest

import torch_dali.tfrecord as tfrec
from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError, DataError, PipelineError
from torch_dali.pipeline import Pipeline
from tests.reference import readers_formats as W

FEATS = {"img": tfrec.FixedLenFeature((), tfrec.string, ""),
         "label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
         "boxes": tfrec.VarLenFeature([4], tfrec.float32, 0.0)}


def _write(tmp_path, examples, name="d"):
    path, idx = str(tmp_path / f"{name}.tfrecord"), str(tmp_path / f"{name}.idx")
    W.write_tfrecord(path, [W.encode_example(e) for e in examples], idx)
    return path, idx


def _pipe(path, idx, features=FEATS, bs=1, **kw):
    @pipeline_def(batch_size=bs, num_threads=1, device_id=None)
    def p():
        out = fn.readers.tfrecord(path=path, index_path=idx, features=features, name="R", **kw)
        assert isinstance(out, dict) and list(out) == list(features)
        return tuple(out.values())
    pipe = p()
    pipe.build()
    return pipe


def _run(pipe):
    return [[np.asarray(tl.at(i)) for i in range(len(tl))] for tl in pipe.run()]


def test_crc32c_and_framing_are_tensorflows():
    assert W.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert W.masked_crc(b"") == ((0 >> 15 | 0 << 17) + 0xA282EAD8) & 0xFFFFFFFF


def test_missing_features_take_defaults(tmp_path):
    path, idx = _write(tmp_path, [{"img": ("bytes", [b"xy"])}])
    img, label, boxes = [o[0] for o in _run(_pipe(path, idx))]
    assert bytes(img) == b"xy" and label.tolist() == [-1] and boxes.shape == (0, 4)


def test_wrong_type_and_count_are_errors(tmp_path):
    path, idx = _write(tmp_path, [{"img": ("bytes", [b"a"]), "label": ("float", [1.5]),
                                   "boxes": ("float", [1, 2, 3])}])
    with pytest.raises(PipelineError, match="'label' holds float32 values"):
        _pipe(path, idx).run()
    with pytest.raises(PipelineError, match="not a multiple of its partial shape"):
        _pipe(path, idx, {"boxes": FEATS["boxes"]}).run()
    with pytest.raises(PipelineError, match="FixedLenFeature shape \\[2\\] needs 2"):
        _pipe(path, idx, {"boxes": tfrec.FixedLenFeature([2], tfrec.float32, 0.0)}).run()


def test_argument_errors(tmp_path):
    path, idx = _write(tmp_path, [{"img": ("bytes", [b"a"])}])
    with pytest.raises(ArgumentError, match="strings are not supported"):
        _pipe(path, idx, {"img": tfrec.VarLenFeature(tfrec.string, "")})
    with pytest.raises(ArgumentError, match="one index per file"):
        _pipe([path, path], [idx])
    with pytest.raises(TypeError, match=r"`features`\['img'\] has type str, not a feature"):
        _pipe(path, idx, {"img": "not a feature"})  # a TypeError, as in DALI
    with pytest.raises(TypeError, match=r"`features`\['img'\] has type int"):
        _pipe(path, idx, {"img": 10})


def test_bad_index_lines(tmp_path):
    path, idx = _write(tmp_path, [{"img": ("bytes", [b"a"])}])
    with open(idx, "w") as f:
        f.write("0 abc\n")
    with pytest.raises(DataError, match="line 1"):
        _pipe(path, idx)
    with open(idx, "w") as f:
        f.write("0 100000\n")
    with pytest.raises(DataError, match="does not fit the file"):
        _pipe(path, idx)
    with open(idx, "w") as f:  # int() of 4300+ digits raised ValueError (no file, no line)
        f.write("0 " + "9" * 5000 + "\n")
    with pytest.raises(DataError, match="line 1 .*must fit 64 bits"):
        _pipe(path, idx)


def test_mutated_records_are_errors_or_values(tmp_path):
    """Random byte flips inside records: each read gives outputs or a DataError naming the record
    (never another exception, a hang or a crash)."""
    ex = [{"img": ("bytes", [bytes(range(20))]), "label": ("int64", [5]), "boxes": ("float", [0.5] * 8)}]
    payload = W.encode_example(ex[0])
    rng = random.Random(4)
    for trial in range(150):
        raw = bytearray(payload)
        for _ in range(rng.randint(1, 4)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        path, idx = str(tmp_path / "m.tfrecord"), str(tmp_path / "m.idx")
        W.write_tfrecord(path, [bytes(raw)], idx)  # rewritten: the last trial's pipeline is shut down
        pipe = _pipe(path, idx)
        try:
            _run(pipe)
        except PipelineError as e:
            assert "DataError" in str(e) and "m.tfrecord at byte 0" in str(e), (trial, str(e))
        finally:
            pipe.shutdown()


def test_files_written_by_the_tfrecord_package(tmp_path):
    pytest.importorskip("tfrecord")
    from tfrecord import TFRecordWriter
    from tfrecord.reader import tfrecord_loader
    from tfrecord.tools.tfrecord2idx import create_index
    path, idx = str(tmp_path / "p.tfrecord"), str(tmp_path / "p.idx")
    rng = np.random.default_rng(3)
    w = TFRecordWriter(path)
    for i in range(9):
        w.write({"img": (bytes(rng.integers(0, 255, 3 + i, dtype=np.uint8)), "byte"),
                 "label": (int(rng.integers(-9, 9)), "int"),
                 "boxes": (rng.random(4 * (i % 3)).astype(np.float32).tolist(), "float")})
    w.close()
    create_index(path, idx)
    # their loader read front to back (given the index it starts at the last record: a quirk of 1.14.6)
    theirs = list(tfrecord_loader(path, None, description={"img": "byte", "label": "int", "boxes": "float"}))
    img, label, boxes = _run(_pipe(path, idx, bs=9))
    for i, t in enumerate(theirs):
        assert bytes(img[i]) == bytes(t["img"])
        assert label[i].tolist() == t["label"].tolist()
        np.testing.assert_array_equal(boxes[i].ravel(), t["boxes"])


def test_fsspec_memory_urls(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    ex = [{"img": ("bytes", [b"r%d" % i]), "label": ("int64", [i])} for i in range(3)]
    path, idx = _write(tmp_path, ex)
    fs = fsspec.filesystem("memory")
    fs.pipe("/tfr/d.tfrecord", open(path, "rb").read())
    fs.pipe("/tfr/d.idx", open(idx, "rb").read())
    local = _run(_pipe(path, idx, bs=3))
    remote = _run(_pipe("memory://tfr/d.tfrecord", "memory://tfr/d.idx", bs=3))
    for a, b in zip(local, remote):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_yaml_round_trip(tmp_path):
    ex = [{"img": ("bytes", [b"q"]), "label": ("int64", [3]), "boxes": ("float", [1, 2, 3, 4])}] * 2
    path, idx = _write(tmp_path, ex)
    pipe = _pipe(path, idx, bs=2)
    text = pipe.serialize()
    assert "VarLen" not in text and "fixed_length" in text  # plain values, no Python objects
    again = Pipeline.deserialize(serialized_pipeline=text)
    again.build()
    for a, b in zip(_run(pipe), _run(again)):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_truncated_file(tmp_path):
    ex = [{"img": ("bytes", [bytes(30)]), "label": ("int64", [i])} for i in range(4)]
    path, idx = _write(tmp_path, ex)
    raw = open(path, "rb").read()
    for n in (0, 10, len(raw) // 2, len(raw) - 1):
        with open(path, "wb") as f:
            f.write(raw[:n])
        with pytest.raises(DataError, match="does not fit the file"):
            _pipe(path, idx)
