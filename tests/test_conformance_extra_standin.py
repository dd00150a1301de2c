"""The data sets of the DALI_extra stand-in (conformance/extra_standin): generated, at the paths and
in the formats DALI's tests read, and readable by torch_dali's readers (the LMDB writer's trees, deep
ones included, walked by torch_dali.io.lmdb)."""
from __future__ import annotations

import json
import struct
import tarfile
from pathlib import Path

import numpy as np
import pytest

from conformance.extra_standin import caffe_dbs, data_sets, lmdb_write, more_data, records, wds
from torch_dali import fn, pipeline_def, types
from torch_dali import tfrecord as tfrec
from torch_dali.io import lmdb as L

PROMISED = [
    "db/coco/images/car-race-438467_1280.jpg", "db/coco/instances.json", "db/coco/file_list.txt",
    "db/coco_pixelwise/instances.json", "db/coco_pixelwise/instances_rle_counts.json",
    "db/coco_dummy/instances.json", "db/coco_dummy/small_coco.tfrecord", "db/coco_dummy/small_coco_index.idx",
    "db/tfrecord/train", "db/tfrecord/train.idx", "db/recordio/train.rec", "db/recordio/train.idx",
    "db/lmdb/data.mdb", "db/c2lmdb/data.mdb", "db/c2lmdb_no_label/data.mdb",
    *(f"db/webdataset/MNIST/{n}.tar" for n in ("devel-0", "devel-1", "devel-2", "missing", "scrambled")),
    "db/webdataset/pax/devel-0.tar", "db/webdataset/case_insensitive/devel-0.tar",
    "db/webdataset/sample-tar/dtypes.tar", "db/sequence/frames/0/00001.png", "db/sequence/frames/1/00050.png",
    "db/audio/wav/237-134500-0000.wav", "db/3D/MRI/Knee/npy_2d_slices/STU00001/SER00001/0.npy",
]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    r = tmp_path_factory.mktemp("extra")
    data_sets.make(r)
    return r


def _run(pipe_fn, n=1):
    p = pipe_fn()
    p.build()
    return [p.run() for _ in range(n)], p


def test_files_promised(root):
    missing = [p for p in PROMISED if not (root / p).is_file()]
    assert not missing
    assert sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) < 64 << 20


def test_deterministic(tmp_path, root):
    again = tmp_path / "again"
    records.make(again)
    for name in ("db/tfrecord/train", "db/recordio/train.rec"):
        assert (again / name).read_bytes() == (root / name).read_bytes()


def test_coco_names_ids_and_labels(root):
    doc = json.loads((root / "db/coco/instances.json").read_text())
    by_name = {im["file_name"]: im["id"] for im in doc["images"]}
    assert by_name["car-race-438467_1280.jpg"] == 17 and by_name["suit-2619784_1280.jpg"] == 0
    assert any(a["iscrowd"] for a in doc["annotations"])
    (out,), _ = _run(pipeline_def(batch_size=2, num_threads=1, device_id=None)(lambda: tuple(fn.readers.coco(
        file_root=str(root / "db/coco/images"), annotations_file=str(root / "db/coco/instances.json"),
        image_ids=True, images=["car-race-438467_1280.jpg", "clock-1274699_1280.jpg"])[2:4])))
    labels, ids = out
    assert [int(ids.at(i)[0]) for i in range(2)] == [17, 6]
    assert [int(labels.at(i)[0]) for i in range(2)] == [6, 8]  # categories 5 and 7, remapped


def test_tfrecord_offsets_and_features(root):
    idx = [int(line.split()[0]) for line in (root / "db/tfrecord/train.idx").read_text().splitlines()]
    assert idx[:8] == list(records.TFRECORD_OFFSETS)
    (out,), _ = _run(pipeline_def(batch_size=4, num_threads=1, device_id=None)(lambda: tuple(fn.readers.tfrecord(
        path=str(root / "db/tfrecord/train"), index_path=str(root / "db/tfrecord/train.idx"), features={
            "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
            "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1)}).values())))
    enc, lab = out
    assert bytes(np.asarray(enc.at(0))[:2]) == b"\xff\xd8" and 1 <= int(lab.at(0)[0]) <= 1000


def test_wds_offsets(root):
    with tarfile.open(root / "db/webdataset/MNIST/devel-0.tar") as t:
        jpgs = [m.offset_data for m in t if m.name.endswith(".jpg")][:8]
    assert jpgs == [1536, 4096, 6144, 8704, 11264, 13824, 16384, 18432]  # test_get_property's
    with tarfile.open(root / "db/webdataset/MNIST/missing.tar") as t:
        assert sum(m.name.endswith(".cls") for m in t) == wds.PER_TAR // 2


def test_recordio_and_caffe_read(root):
    (out,), p = _run(pipeline_def(batch_size=3, num_threads=1, device_id=None)(lambda: (
        *fn.readers.mxnet(path=str(root / "db/recordio/train.rec"), index_path=str(root / "db/recordio/train.idx")),
        *fn.readers.caffe(path=str(root / "db/lmdb")),
        *fn.readers.caffe2(path=str(root / "db/c2lmdb")))))
    for i in (0, 2, 4):
        assert bytes(np.asarray(out[i].at(0))[:2]) == b"\xff\xd8"
    assert all(v == caffe_dbs.N_RECORDS for k, v in p.epoch_size().items() if "caffe" in k.lower())


@pytest.mark.parametrize("n,size,pad,depth", [(1, 10, 0, 1), (300, 5, 0, 2), (1000, 5, 200, 3), (40, 9000, 0, 1)])
def test_lmdb_writer_trees(tmp_path, n, size, pad, depth):
    """Leaf-only, several leaves under a branch, a 3-level tree (long keys), overflow values: every
    record is found, in key order, with its value."""
    recs = [(f"key{i:06d}".encode() + b"." * pad, bytes([i % 251]) * (size + i % 7)) for i in range(n)]
    lmdb_write.write(tmp_path, reversed(recs))
    raw = (tmp_path / "data.mdb").read_bytes()
    assert struct.unpack_from("<H", raw, 16 + 24 + 48 + 6)[0] == depth  # the main DB's md_depth
    e = L.list_entries(lambda o, k: raw[o:o + k], len(raw), "t")
    assert len(e.key_offset) == n
    for i in (0, n // 2, n - 1):
        assert L.read_key(lambda o, k: raw[o:o + k], e, i) == recs[i][0]
        assert bytes(L.read_value(lambda o, k: raw[o:o + k], e, i, "t")) == recs[i][1]


def test_vfr_videos_when_pyav_is_there(root):
    av = pytest.importorskip("av")
    for i in (1, 2):
        with av.open(str(root / f"db/video/vfr/test_{i}.mp4")) as c:
            (s,) = c.streams.video
            assert s.codec_context.name == "vp9"  # DALI 2.4's CPU video decoder takes VP9
            assert sum(1 for _ in c.decode(s)) == 60


def test_more_data_tars(tmp_path):
    """more_data: the one-sample tars (junk members are not regular files), the 1000-component
    sample, and the legacy-index set whose v1.1 and v1.2 indexes both list data.tar's 16 samples."""
    more_data.make(tmp_path)
    st = tmp_path / "db/webdataset/sample-tar"
    with tarfile.open(st / "single_junk.tar") as t:
        assert [m.name for m in t if m.isreg()] == ["sample.txt"] and len(t.getmembers()) == 4
    with tarfile.open(st / "wide.tar") as t:
        assert len(t.getmembers()) == 1000
    with tarfile.open(st / "empty.tar") as t:
        assert not t.getmembers()
    with tarfile.open(st / "cross.tar") as t:
        assert [m.name for m in t][:4] == ["0.a.a", "0.b.a", "1.a.a", "1.b.a"] and len(t.getmembers()) == 40
    legacy = tmp_path / "db/webdataset/legacy_index_formats"
    for idx in ("v1.1.idx", "v1.2.idx"):
        (out,), p = _run(pipeline_def(batch_size=16, num_threads=1, device_id=None)(lambda: tuple(
            fn.readers.webdataset(paths=str(legacy / "data.tar"), index_paths=str(legacy / idx),
                                  ext=["jpg", "cls"], name="R"))))
        assert p.epoch_size("R") == 16 and bytes(np.asarray(out[0].at(15))[:2]) == b"\xff\xd8"


def test_wav_references(root):
    """more_data's .npy beside each stand-in WAV holds the samples torch_dali's decoder reads."""
    more_data.make(root)
    wav = root / "db/audio/wav/237-134500-0003.wav"
    ((out,),), _ = _run(pipeline_def(batch_size=1, num_threads=1, device_id=None)(lambda: fn.decoders.audio(
        fn.readers.file(files=[str(wav)])[0], dtype=types.INT16)[0]))
    ref = np.load(wav.with_suffix(".npy"))
    assert ref.dtype == np.int16 and ref.shape == (12800,)
    np.testing.assert_array_equal(np.asarray(out.at(0))[:, 0], ref)


def test_flac_and_ogg_references(root):
    """With soundfile: more_data's FLAC holds the WAV's samples (lossless) and each .npy is what
    the decoder reads (DALI 2.4 passes decoder/test_audio's FLAC and OGG cases on these)."""
    pytest.importorskip("soundfile")
    more_data.make(root)
    name = "237-134500-0003"
    wav_ref = np.load(root / f"db/audio/wav/{name}.npy")
    np.testing.assert_array_equal(np.load(root / f"db/audio/flac/{name}.npy"), wav_ref)
    for fmt in ("flac", "ogg"):
        f = root / f"db/audio/{fmt}/{name}.{fmt}"
        ((out,),), _ = _run(pipeline_def(batch_size=1, num_threads=1, device_id=None)(lambda f=f: fn.decoders.audio(
            fn.readers.file(files=[str(f)])[0], dtype=types.INT16)[0]))
        np.testing.assert_array_equal(np.asarray(out.at(0))[:, 0], np.load(f.with_suffix(".npy")))
