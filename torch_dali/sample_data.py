"""Sample datasets built from the photos shipped in `torch_dali/data/photos` (see LICENSES.md there).

Nothing is downloaded: variants are random crops, flips and sizes of the shipped photos, encoded as
JPEG. Used by `torch-dali demo`, the tests and the benchmarks.
"""
from __future__ import annotations

import io
import os
import random
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from PIL import Image

PHOTOS = Path(__file__).parent / "data" / "photos"


def photo_names() -> list[str]:
    return sorted(p.stem for p in PHOTOS.glob("*.jpg"))


def _variant(photo: Image.Image, rng: random.Random, size: tuple[int, int]) -> Image.Image:
    """A random crop of at least a third of each side, flipped at random, resized to `size`."""
    w, h = photo.size
    cw, ch = rng.randint(w // 3, w), rng.randint(h // 3, h)
    x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
    im = photo.crop((x, y, x + cw, y + ch))
    if rng.random() < 0.5:
        im = im.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    return im.resize(size, Image.Resampling.BILINEAR)


def encode_jpeg(im: Image.Image, quality: int = 90, subsampling: str = "4:2:0") -> bytes:
    buf = io.BytesIO()
    sub = {"4:4:4": 0, "4:2:2": 1, "4:2:0": 2}[subsampling]
    im.save(buf, format="JPEG", quality=quality, subsampling=sub if im.mode != "L" else 0)
    return buf.getvalue()


def _random_size(rng: random.Random, mean_hw: tuple[int, int]) -> tuple[int, int]:
    mh, mw = mean_hw
    return (max(32, int(rng.gauss(mw, mw * 0.2))), max(32, int(rng.gauss(mh, mh * 0.2))))


def make_image_folder(root: str | os.PathLike, images_per_class: int = 16, seed: int = 0,
                      mean_hw: tuple[int, int] = (360, 420), quality: int = 90) -> list[tuple[str, int]]:
    """`root/<photo name>/<k>.jpg`, one class per shipped photo. Returns [(path, label)] in
    reader order (classes sorted, files sorted)."""
    root = Path(root)
    rng = random.Random(seed)
    items: list[tuple[str, int]] = []
    for label, name in enumerate(photo_names()):
        photo = Image.open(PHOTOS / f"{name}.jpg")
        photo = photo.convert("RGB") if photo.mode not in ("RGB", "L") else photo
        (root / name).mkdir(parents=True, exist_ok=True)
        for k in range(images_per_class):
            path = root / name / f"{k:04d}.jpg"
            path.write_bytes(encode_jpeg(_variant(photo, rng, _random_size(rng, mean_hw)), quality))
            items.append((str(path), label))
    return items


def make_recordio(rec_path: str | os.PathLike, idx_path: str | os.PathLike,
                  items: list[tuple[str, int]]) -> None:
    """An MXNet RecordIO file of the given (jpeg path, label) items, as im2rec writes it."""
    from .io.recordio import write_recordio
    write_recordio(str(rec_path), str(idx_path),
                   ((float(label), Path(p).read_bytes()) for p, label in items))


def make_sample_dataset(root: str | os.PathLike, images_per_class: int = 16, seed: int = 0) -> dict[str, str]:
    """The demo dataset: class folders under `root/images` and `root/train.rec` + `train.idx`."""
    root = Path(root)
    items = make_image_folder(root / "images", images_per_class, seed)
    make_recordio(root / "train.rec", root / "train.idx", items)
    return {"images": str(root / "images"), "rec": str(root / "train.rec"), "idx": str(root / "train.idx")}


# -- benchmark data: many ImageNet-like JPEGs -------------------------------------------------------

def _bench_chunk(args: tuple[str, int, int, int, int, str, tuple[int, int]]) -> None:
    root, start, stop, seed, quality, subsampling, mean_hw = args
    photos = [Image.open(PHOTOS / f"{n}.jpg").convert("RGB") for n in photo_names()]
    for k in range(start, stop):
        rng = random.Random(seed * 1_000_003 + k)
        label = k % len(photos)
        im = _variant(photos[label], rng, _random_size(rng, mean_hw))
        d = Path(root) / f"class_{label:02d}"
        (d / f"{k:06d}.jpg").write_bytes(encode_jpeg(im, quality, subsampling))


def make_benchmark_folder(root: str | os.PathLike, n: int, quality: int = 90, subsampling: str = "4:2:0",
                          mean_hw: tuple[int, int] = (416, 438), seed: int = 0,
                          workers: int | None = None) -> str:
    """`n` JPEGs of ImageNet's mean size (about 438x416 by default) in class folders, made in parallel."""
    root = Path(root)
    for label in range(len(photo_names())):
        (root / f"class_{label:02d}").mkdir(parents=True, exist_ok=True)
    workers = workers or os.cpu_count() or 1
    step = max(1, -(-n // (workers * 4)))
    chunks = [(str(root), s, min(n, s + step), seed, quality, subsampling, mean_hw) for s in range(0, n, step)]
    if workers == 1:
        for c in chunks:
            _bench_chunk(c)
    else:
        with ProcessPoolExecutor(workers) as ex:
            list(ex.map(_bench_chunk, chunks))
    return str(root)
