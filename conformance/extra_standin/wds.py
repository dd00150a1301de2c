"""db/webdataset: MNIST-like tars (devel-0/1/2.tar: 1000 samples each of a 28x28 gray JPEG and a
'cls' digit), missing.tar (devel-0 without 'cls' for keys from 2500 on), scrambled.tar (devel-0
with half the 'cls' renamed 'txt'), pax/devel-0.tar (devel-0 with a PAX header per member),
case_insensitive/devel-0.tar (devel-0 with upper-case extensions) and sample-tar/dtypes.tar."""
from __future__ import annotations

import io
import tarfile
from pathlib import Path

import numpy as np

from . import synth

PER_TAR = 1000
FIRST_KEY = 2000  # missing.tar keeps 'cls' below key 2500: half of it
# test_get_property.py checks the source_info ("<tar>:<data offset>:<name>") of devel-0's first 8
# JPEGs; members go 'cls' then 'jpg' and these JPEGs take these many 512-byte blocks, which puts
# them at DALI_extra's offsets (1536, 4096, 6144, ...)
JPEG_BLOCKS = (2, 1, 2, 2, 2, 2, 1, 2)


def _tar(path: Path, members: list[tuple[str, bytes]], fmt: int = tarfile.GNU_FORMAT, pax: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w", format=fmt) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 1600000000, 0o644
            if pax:  # a per-member extended header, which a plain ustar member would not get
                info.pax_headers = {"comment": f"stand-in {name}"}
            tar.addfile(info, io.BytesIO(data))


def _mnist(rng: np.random.Generator, first: int) -> list[tuple[int, bytes, bytes]]:
    out = []
    for key in range(first, first + PER_TAR):
        digit = int(rng.integers(0, 10))
        img = np.zeros((28, 28, 1), np.uint8)
        img[4 + digit:24, 6:22 - digit] = 40 + 20 * digit  # a digit-dependent block, JPEG-friendly
        data = synth.encode(img)
        blocks = JPEG_BLOCKS[(key - first) % len(JPEG_BLOCKS)]
        if len(data) <= 512 * (blocks - 1):
            data = synth.pad_jpeg(data, 512 * (blocks - 1) + 64 - len(data))
        assert -(-len(data) // 512) == blocks, (key, len(data))
        out.append((key, data, str(digit).encode()))
    return out


def make(root: Path) -> None:
    base = root / "db" / "webdataset"
    rng = np.random.default_rng(505)
    devel = [_mnist(rng, FIRST_KEY + PER_TAR * i) for i in range(3)]
    for i, samples in enumerate(devel):
        _tar(base / "MNIST" / f"devel-{i}.tar",
             [m for k, j, c in samples for m in ((f"{k}.cls", c), (f"{k}.jpg", j))])
    d0 = devel[0]
    _tar(base / "MNIST" / "missing.tar",
         [m for k, j, c in d0 for m in ((f"{k}.jpg", j),) + (((f"{k}.cls", c),) if k < 2500 else ())])
    _tar(base / "MNIST" / "scrambled.tar",
         [m for k, j, c in d0 for m in ((f"{k}.jpg", j), (f"{k}.{'txt' if k % 2 else 'cls'}", c))])
    _tar(base / "pax" / "devel-0.tar", [m for k, j, c in d0 for m in ((f"{k}.jpg", j), (f"{k}.cls", c))],
         fmt=tarfile.PAX_FORMAT, pax=True)
    _tar(base / "case_insensitive" / "devel-0.tar",
         [m for k, j, c in d0 for m in ((f"{k}.JPG", j), (f"{k}.CLS", c))])
    _tar(base / "sample-tar" / "dtypes.tar",
         [m for i in range(100) for m in ((f"{i:03d}.float16", np.full(10, i, np.float16).tobytes()),
                                          (f"{i:03d}.int32", np.full(10, i, np.int32).tobytes()),
                                          (f"{i:03d}.float64", np.full(10, i, np.float64).tobytes()))])
