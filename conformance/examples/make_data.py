"""Small local stand-ins for the example notebooks' data, written once under a work folder: DALI_extra's
synthetic stand-in (`extra/`), the notebooks' `data/images` (two classes of JPEGs and a file list), an
MNIST-like caffe2 LMDB, RecordIO / webdataset sets with images a 224x224 crop fits, WAVs, MRI volumes;
and each side's `tfrecord2idx` (DALI's own tool on DALI's side, torch_dali's on ours)."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import wave
from pathlib import Path

import numpy as np
from PIL import Image

from conformance.extra_standin import _synth, lmdb_write, records, synth
from conformance.extra_standin.caffe_dbs import tensor_protos

REPO = Path(__file__).resolve().parents[2]


def write(work: Path, dali_bin: Path) -> None:
    """Everything above, under `work` (skipped where it is there already)."""
    work.mkdir(parents=True, exist_ok=True)
    _tools(work, dali_bin)
    if not (work / "extra" / "db").exists():
        subprocess.run([sys.executable, "-m", "conformance.extra_standin", str(work / "extra")], cwd=REPO,
                       check=True, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.DEVNULL)
    if (work / "data" / "done").exists():
        return
    wds2idx = str(dali_bin / "wds2idx")
    root = work / "data"
    rng = np.random.default_rng(35)
    imgs = root / "images"
    lines = []
    for label, cls in enumerate(["dog", "kitten"]):
        (imgs / cls).mkdir(parents=True, exist_ok=True)
        for i in range(1, 12):  # as DALI's docs/examples/data/images: dog_1 .. dog_11
            h, w = int(rng.integers(200, 360)), int(rng.integers(240, 400))
            a = _synth.photo(rng, h, w)
            Image.fromarray(a).save(imgs / cls / f"{cls}_{i}.jpg", quality=90)
            lines.append(f"{cls}/{cls}_{i}.jpg {label}")
    (imgs / "file_list.txt").write_text("\n".join(lines) + "\n")
    # MNIST-like caffe2 LMDB: 28x28 gray JPEGs, int32 labels 0..9
    for split, n in (("training", 256), ("testing", 96)):
        recs = []
        for i in range(n):
            a = (rng.integers(0, 256, (28, 28))).astype(np.uint8)
            b = io.BytesIO(); Image.fromarray(a, "L").save(b, "JPEG", quality=90)
            recs.append((f"{i:08d}".encode(), tensor_protos(b.getvalue(), int(rng.integers(0, 10)))))
        lmdb_write.write((work / "extra" / "db" / "MNIST") / split, recs)
    # RecordIO and webdataset sets with images the notebooks' 224x224 crops fit in
    rng = np.random.default_rng(77)
    rec_dir = root / "db_big" / "db" / "recordio"
    rec_dir.mkdir(parents=True, exist_ok=True)
    samples = [([float(rng.integers(0, 1000))], synth.jpeg(rng, int(rng.integers(230, 320)), int(rng.integers(230, 320))))
               for _ in range(40)]
    records.write_recordio(rec_dir / "train.rec", rec_dir / "train.idx", samples)
    rng = np.random.default_rng(99)
    wds = root / "db_big" / "db" / "webdataset"
    wds.mkdir(parents=True, exist_ok=True)
    with tarfile.open(wds / "train.tar", "w", format=tarfile.GNU_FORMAT) as tf:
        for i in range(24):
            for ext, data in (("jpg", synth.jpeg(rng, int(rng.integers(180, 320)), int(rng.integers(180, 320)))),
                              ("cls", str(int(rng.integers(0, 1000))).encode())):
                ti = tarfile.TarInfo(f"sample{i:04d}.{ext}")
                ti.size, ti.mtime = len(data), 0
                tf.addfile(ti, io.BytesIO(data))
    subprocess.check_call([wds2idx, str(wds / "train.tar"), str(wds / "train.idx")])  # DALI's wds2idx
    # two 16 kHz int16 WAVs (audio decoder notebook)
    (root / "audio" / "wav").mkdir(parents=True, exist_ok=True)
    for name, n in (("three", 16000), ("two", 12000)):
        t = np.arange(n) / 16000
        x = (3000 * np.sin(2 * np.pi * 440 * t) * np.exp(-t) + rng.normal(0, 200, n)).astype(np.int16)
        with wave.open(str(root / "audio" / "wav" / f"{name}.wav"), "wb") as w:
            w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000); w.writeframes(x.tobytes())
    # 3-D MRI volumes stacked from the stand-in's 2-D slices (numpy reader notebook)
    src = work / "extra" / "db" / "3D" / "MRI" / "Knee" / "npy_2d_slices" / "STU00001"
    dst = work / "extra" / "db" / "3D" / "MRI" / "Knee" / "npy_3d" / "STU00001"
    dst.mkdir(parents=True, exist_ok=True)
    for ser in sorted(os.listdir(src)):
        files = sorted(src.joinpath(ser).glob("*.npy"), key=lambda p: int(p.stem))
        np.save(dst / f"{ser}.npy", np.stack([np.load(f) for f in files]))
    (root / "done").write_text("ok\n")


def _tools(work: Path, dali_bin: Path) -> None:
    """tfrecord2idx by its DALI name: DALI's own on DALI's side, torch_dali's on ours."""
    for side in ("bin_dali", "bin_ours"):
        (work / side).mkdir(exist_ok=True)
    link = work / "bin_dali" / "tfrecord2idx"
    if not link.exists():
        link.symlink_to(dali_bin / "tfrecord2idx")
    ours = work / "bin_ours" / "tfrecord2idx"
    ours.write_text(f'#!/bin/bash\nPYTHONPATH={REPO} exec {sys.executable} -c "import sys; '
                    'from torch_dali.io.tfrecord_index import main; sys.exit(main())" "$@"\n')
    ours.chmod(0o755)
