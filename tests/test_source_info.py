"""`sample.source_info()` on a pipeline's outputs: the reader's name of the sample (as DALI 2.4
lists it, checked against its CPU backend), carried by outputs made from the reader's data, and ""
for the reader's labels and for data that came from no reader."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from torch_dali import fn, pipeline_def


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    for c in "ab":
        (tmp_path / "img" / c).mkdir(parents=True)
        for i in range(2):
            (tmp_path / "img" / c / f"{i}.jpg").write_bytes(b"x%d" % i)
    (tmp_path / "npy" / "s").mkdir(parents=True)
    for i in range(2):
        np.save(tmp_path / "npy" / f"g{i}.npy", np.full(2, i, np.float32))
        np.save(tmp_path / "npy" / "s" / f"f{i}.npy", np.full(2, i, np.float32))
    return tmp_path


def test_reader_outputs_carry_the_listed_names(tree: Path) -> None:
    root, npy = str(tree / "img"), str(tree / "npy")

    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=1)
    def pipe():
        data, labels = fn.readers.file(file_root=root)
        arrays = fn.readers.numpy(file_root=npy)
        listed = fn.readers.numpy(file_root=npy, files=["s/f0.npy", "g1.npy", "g0.npy", "s/f1.npy"])
        return data, labels, arrays * 2, listed, fn.random.coin_flip()

    p = pipe()
    p.build()
    data, labels, doubled, listed, coins = p.run()
    assert [t.source_info() for t in data] == ["a/0.jpg", "a/1.jpg", "b/0.jpg", "b/1.jpg"]
    assert [t.source_info() for t in labels] == [""] * 4  # DALI's labels carry none
    assert [t.source_info() for t in doubled] == ["./g0.npy", "./g1.npy", "s/f0.npy", "s/f1.npy"]
    assert [t.source_info() for t in listed] == ["s/f0.npy", "g1.npy", "g0.npy", "s/f1.npy"]
    assert [t.source_info() for t in coins] == [""] * 4
    nxt = p.run()[0]  # the next batch names its own samples (the epoch wrapped)
    assert [t.source_info() for t in nxt] == ["a/0.jpg", "a/1.jpg", "b/0.jpg", "b/1.jpg"]


def test_files_given_as_full_paths_keep_them(tree: Path) -> None:
    files = sorted(str(p) for p in (tree / "img").rglob("*.jpg"))

    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def pipe():
        data, _ = fn.readers.file(files=files)
        return data

    p = pipe()
    p.build()
    (out,) = p.run()
    assert [t.source_info() for t in out] == files
    assert [t.as_cpu().source_info() for t in out] == files
    assert os.path.isabs(out[0].source_info())


def test_files_given_as_full_paths_under_file_root_keep_them(tree: Path) -> None:
    files = [str(tree / "npy" / "g1.npy"), "s/f0.npy"]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.readers.numpy(file_root=str(tree / "npy"), files=files)

    p = pipe()
    p.build()
    assert [t.source_info() for t in p.run()[0]] == files


def test_a_deep_copy_of_an_output_sample_keeps_class_layout_and_source(tree: Path) -> None:
    import copy

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.readers.numpy(file_root=str(tree / "npy"), files=["g0.npy", "g1.npy"])

    p = pipe()
    p.build()
    sample = p.run()[0][1]
    dup = copy.deepcopy(sample)
    assert type(dup) is type(sample) and dup.layout() == sample.layout()
    assert dup.source_info() == "g1.npy" and np.array_equal(np.asarray(dup), np.asarray(sample))
    assert dup.data_ptr() != sample.data_ptr()


def test_coco_names_the_image_as_its_annotations_list_it(tmp_path: Path) -> None:
    # DALI 2.4 (measured): the file_name as listed, not file_root joined to it; the annotation
    # outputs carry none
    import json
    (tmp_path / "img" / "sub").mkdir(parents=True)
    for n in ("a.jpg", "sub/b.jpg"):
        (tmp_path / "img" / n).write_bytes(b"\xff\xd8xx")
    images = [{"id": i + 1, "file_name": n, "width": 10, "height": 10} for i, n in enumerate(["a.jpg", "sub/b.jpg"])]
    anns = [{"id": i, "image_id": i, "category_id": 1, "bbox": [1, 1, 2, 2], "area": 4, "iscrowd": 0} for i in (1, 2)]
    (tmp_path / "ann.json").write_text(json.dumps({"images": images, "annotations": anns,
                                                    "categories": [{"id": 1, "name": "x"}]}))

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        jpegs, boxes, labels = fn.readers.coco(file_root=str(tmp_path / "img"),
                                               annotations_file=str(tmp_path / "ann.json"))
        return jpegs, boxes, fn.get_property(jpegs, key="source_info")

    p = pipe()
    p.build()
    jpegs, boxes, prop = p.run()
    assert [t.source_info() for t in jpegs] == ["a.jpg", "sub/b.jpg"]
    assert [t.source_info() for t in boxes] == ["", ""]
    assert [bytes(np.asarray(t)).decode() for t in prop] == ["a.jpg", "sub/b.jpg"]


def test_mxnet_names_the_file_and_the_records_offset(tmp_path: Path) -> None:
    # DALI 2.4 (measured): "<file> at index <byte offset of the record in that file>"; labels none
    import struct
    rec, idx = str(tmp_path / "x.rec"), str(tmp_path / "x.idx")
    with open(rec, "wb") as f, open(idx, "w") as fi:
        for k in range(3):
            payload = struct.pack("<IfQQ", 0, float(k), k, 0) + bytes([k]) * (5 + k)
            fi.write(f"{k}\t{f.tell()}\n")
            f.write(struct.pack("<II", 0xCED7230A, len(payload)) + payload + b"\x00" * (-len(payload) % 4))

    @pipeline_def(batch_size=3, num_threads=1, device_id=None)
    def pipe():
        data, labels = fn.readers.mxnet(path=[rec], index_path=[idx])
        return data, labels

    p = pipe()
    p.build()
    data, labels = p.run()
    assert [t.source_info() for t in data] == [f"{rec} at index {o}" for o in (0, 40, 80)]
    assert [t.source_info() for t in labels] == ["", "", ""]


def test_tfrecord_names_the_file_and_the_records_offset(tmp_path: Path) -> None:
    # DALI 2.4 (measured): "<file> at index <byte offset of the record in that file>", on every feature
    import torch_dali.tfrecord as tfrec
    from tests.reference import readers_formats as W
    path = str(tmp_path / "t.tfrecord")
    spans = W.write_tfrecord(path, [W.encode_example({"x": ("int64", [k] * (k + 1))}) for k in range(3)], path + ".idx")

    @pipeline_def(batch_size=3, num_threads=1, device_id=None)
    def pipe():
        out = fn.readers.tfrecord(path=[path], index_path=[path + ".idx"],
                                  features={"x": tfrec.VarLenFeature(tfrec.int64, 0)})
        return out["x"], fn.get_property(out["x"], key="source_info")

    p = pipe()
    p.build()
    x, prop = p.run()
    want = [f"{path} at index {off}" for off, _ in spans]
    assert [off for off, _ in spans] == [0, 30, 61]
    assert [t.source_info() for t in x] == want
    assert [bytes(np.asarray(t)).decode() for t in prop] == want


def test_data_node_property_and_source_info_methods(tree: Path) -> None:
    """DALI 2.4's `DataNode.property(key)` / `.source_info()` in a pipeline definition are
    `fn.get_property` on the node (DALI's test_get_property reads a reader's names this way)."""
    root = str(tree / "img")

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        data, labels = fn.readers.file(file_root=root)
        return data.source_info(), (data + 0).source_info(), data.property("layout"), labels.property("source_info")

    p = pipe()
    p.build()
    info, carried, layout, label_info = p.run()
    names = [bytes(np.asarray(info.at(i))).decode() for i in range(2)]
    assert names == ["a/0.jpg", "a/1.jpg"]  # file_root-relative, as DALI 2.4 names them
    assert [bytes(np.asarray(carried.at(i))).decode() for i in range(2)] == names
    assert [np.asarray(layout.at(i)).size for i in range(2)] == [0, 0]
    assert [np.asarray(label_info.at(i)).size for i in range(2)] == [0, 0]
