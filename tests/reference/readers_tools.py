"""Reader data written by the real tools: TFRecords by the `tfrecord` package (its protobuf
Example encoding, its CRCs, its `tfrecord2idx`-format index) and webdataset shards by
`webdataset.TarWriter`. Each part is written only where its package imports (the reference cases
that read it skip otherwise); the same package versions in both venvs give the same samples.
No torch_dali."""
from __future__ import annotations

import os

import numpy as np

TOOL_OF = {"tfrecord_pkg": "tfrecord", "wds_pkg": "webdataset"}  # case prefix -> package it needs


def build_tfrecord(root: str) -> None:
    try:
        from tfrecord import TFRecordWriter
        from tfrecord.tools.tfrecord2idx import create_index
    except ImportError:
        return
    d = os.path.join(root, "tfr_pkg")
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(1514)
    for name, n in (("p0", 6), ("p1", 4)):
        path = os.path.join(d, f"{name}.tfrecord")
        w = TFRecordWriter(path)
        for i in range(n):
            nbox = int(rng.integers(0, 3))
            w.write({
                "image/encoded": (bytes(rng.integers(0, 255, int(rng.integers(1, 50)), dtype=np.uint8)), "byte"),
                "label": (int(rng.integers(-3, 900)), "int"),
                "bbox": (rng.random(4 * nbox).astype(np.float32).tolist(), "float"),
                "ids": (rng.integers(-2 ** 40, 2 ** 40, 1 + i % 3).tolist(), "int"),
            })
        w.close()
        create_index(path, os.path.join(d, f"{name}.idx"))


def build_webdataset(root: str) -> None:
    try:
        import webdataset as wds
    except ImportError:
        return
    d = os.path.join(root, "wds_pkg")
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(1513)
    for k, n in enumerate((5, 3)):
        with wds.TarWriter(os.path.join(d, f"w{k}.tar"), mtime=0) as tw:
            for i in range(n):
                sample = {"__key__": f"s{k}_{i:03d}", "cls": str(10 * k + i).encode(),
                          "json": b'{"i": %d}' % i}
                if (i + k) % 3:
                    sample["jpg"] = bytes(rng.integers(0, 255, 5 + i, dtype=np.uint8))
                tw.write(sample)


def build(root: str) -> None:
    build_tfrecord(root)
    build_webdataset(root)
