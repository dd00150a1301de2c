"""Tiny data sets for conformance/epochs.py: `n` samples in every reader format, sample i carrying
the id i where the reader hands it out (a label, a feature, an index output or 8 digits of data),
so an iterator's batches say exactly which samples a rank saw."""
from __future__ import annotations

import io
import json
import struct
import tarfile
from pathlib import Path

from .extra_standin import caffe_dbs, lmdb_write, records


def _digits(i: int) -> bytes:
    return b"%08d" % i  # fixed length: the iterators stack samples into one tensor


def _wav(i: int) -> bytes:
    pcm = struct.pack("<4h", i, -i, i, -i)  # 4 samples: every file decodes to the same shape
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    return (b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVE" + b"fmt " + struct.pack("<I", 16)
            + fmt + b"data" + struct.pack("<I", len(pcm)) + pcm)


def make(root: Path, n: int) -> Path:
    """Writes every format's `n`-sample data set under root/n<n>/ once; returns that folder."""
    d = root / f"n{n}"
    if (d / "done").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    ids = range(n)
    files = d / "files"
    for i in ids:  # three classes; DALI lists class folders, then names, sorted
        p = files / f"c{i % 3}" / f"s{i:03d}.jpg"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(_digits(i))
    (d / "list.txt").write_text("".join(f"files/c{i % 3}/s{i:03d}.jpg {i}\n" for i in ids))
    (d / "list_nolabel.txt").write_text("".join(f"files/c{i % 3}/s{i:03d}.jpg\n" for i in ids))
    records.write_tfrecord(d / "data.tfrecord", d / "data.idx", [{"id": [i]} for i in ids])
    records.write_recordio(d / "data.rec", d / "data.ridx", [([float(i)], _digits(i)) for i in ids])
    lmdb_write.write(d / "lmdb", [(f"{i:08d}".encode(), caffe_dbs.datum(_digits(i), i)) for i in ids])
    lmdb_write.write(d / "c2lmdb",
                     [(f"{i:08d}".encode(), caffe_dbs.tensor_protos(_digits(i), i)) for i in ids])
    _webdataset(d, n)
    cuts = [0, n // 3, n // 3 + (n + 1) // 2, n]  # three files of unequal sizes
    for k in range(3):
        part = range(cuts[k], cuts[k + 1])
        records.write_tfrecord(d / f"data{k}.tfrecord", d / f"data{k}.idx", [{"id": [i]} for i in part])
        records.write_recordio(d / f"data{k}.rec", d / f"data{k}.ridx", [([float(i)], _digits(i)) for i in part])
        _webdataset(d, n, part, f"data{k}")
    # DALI takes one index for several RecordIO files: offsets as if the files were one
    lines, base = [], 0
    for k in range(3):
        for line in (d / f"data{k}.ridx").read_text().splitlines():
            lines.append(f"{len(lines)}\t{base + int(line.split()[1])}\n")
        base += (d / f"data{k}.rec").stat().st_size
    (d / "data_multi.ridx").write_text("".join(lines))
    for i in ids:
        npy = d / "npy" / f"s{i:03d}.npy"
        npy.parent.mkdir(exist_ok=True)
        npy.write_bytes(_npy_int32(i))
    _coco(d, n)
    manifest = []
    for i in ids:
        w = d / "wav" / f"s{i:03d}.wav"
        w.parent.mkdir(exist_ok=True)
        w.write_bytes(_wav(i))
        manifest.append(json.dumps({"audio_filepath": str(w), "duration": 0.0005, "text": "x"}))
    (d / "manifest.json").write_text("\n".join(manifest) + "\n")
    (d / "done").write_text("")
    return d


def _npy_int32(i: int) -> bytes:
    head = "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }"
    head += " " * (-(10 + len(head) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode() + struct.pack("<i", i)


def _webdataset(d: Path, n: int, ids: range | None = None, name: str = "data") -> None:
    offsets, lines = [], []
    ids = range(n) if ids is None else ids
    with tarfile.open(d / f"{name}.tar", "w", format=tarfile.GNU_FORMAT) as tar:
        for i in ids:
            info = tarfile.TarInfo(f"k{i:03d}.id")
            info.size, info.mtime = 8, 1600000000
            offsets.append(tar.offset)
            tar.addfile(info, io.BytesIO(_digits(i)))
    for i, off in zip(ids, offsets):
        lines.append(f"id {off + 512} 8 k{i:03d}.id")  # wds2idx v1.2: ext offset size name
    (d / f"{name}.wdsidx").write_text(f"v1.2 {len(ids)}\n" + "\n".join(lines) + "\n")


def _coco(d: Path, n: int) -> None:
    images, anns = [], []
    for i in range(n):
        (d / "coco").mkdir(exist_ok=True)
        (d / "coco" / f"s{i:03d}.jpg").write_bytes(_digits(i))
        images.append({"id": i + 1, "file_name": f"s{i:03d}.jpg", "width": 8, "height": 8})
        anns.append({"id": i + 1, "image_id": i + 1, "category_id": 1, "bbox": [1, 1, 2, 2],
                     "area": 4, "iscrowd": 0})
    doc = {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "a"}]}
    (d / "coco.json").write_text(json.dumps(doc))
