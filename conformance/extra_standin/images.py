"""Image files of the stand-in (db/single/<format>/..., and the other image folders DALI's op tests
read), named as in DALI_extra where a test names a file, with synthetic content (`_synth.photo`).

Each file gets its own seed (from its path), so one file's content does not depend on the others.
The folders that test_image's fused-decoder cases read hold no image under 250 px a side (they crop
242x230 windows) but db/single/mixed/0/2x4.jpg; sizes vary, odd widths and heights included. Formats
and variants: JPEG 4:4:4/4:2:2/4:2:0, gray, progressive, EXIF-oriented; PNG RGB, RGBA, gray,
palette, 16-bit; TIFF uncompressed/LZW/Deflate/PackBits, palette, gray, 1-bit, orientation tags,
4-6 samples, 16-bit RGBA; PNM binary and ASCII, 16-bit PGM; BMP RGB, gray, 8- and 1-bit palette;
JPEG 2000 (lossless, lossy, tiled, 16-bit gray); WebP lossy, lossless, with alpha; files named as
another format. References DALI_extra stores for its own files (db/imgcodec's .npy) are not
written: cases comparing against them fail on both sides. db/imgproc's checkerboard references are
recomputed for the stand-in's checkerboard (`_onnx_resize`)."""
from __future__ import annotations

import io
import zlib
from pathlib import Path

import numpy as np
from PIL import Image, features

from . import _synth

# Pillow writes JPEG 2000 through OpenJPEG and WebP through libwebp; without them those files are left out
HAS_JP2 = bool(features.check("jpg_2000"))
HAS_WEBP = bool(features.check("webp"))

CATS = ["cat-1046544_640", "cat-111793_640", "cat-1245673_640", "cat-2184682_640", "cat-300572_640",
        "cat-3113513_640", "cat-3449999_640", "cat-3504008_640", "cat-3591348_640",
        "domestic-cat-726989_640", "kitty-2948404_640"]

# db/single/jpeg: class folder -> [(name, (h, w), options)]; options: sub (PIL subsampling
# 0=4:4:4, 1=4:2:2, 2=4:2:0), gray, progressive, exif (orientation tag), quality.
JPEG = {
    "0": [("420.jpg", (300, 400), {"sub": 2}), ("422.jpg", (300, 400), {"sub": 1}),
          ("444.jpg", (300, 400), {"sub": 0}), ("420-odd-width.jpg", (320, 451), {"sub": 2}),
          ("420-odd-height.jpg", (333, 400), {"sub": 2}), ("420-odd-both.jpg", (337, 451), {"sub": 2}),
          ("422-odd-width.jpg", (320, 481), {"sub": 1}),
          ("dog-2579885_640.jpg", (427, 640), {"gray": True}),
          ("dog-3277414_640.jpg", (480, 640), {"progressive": True}),
          ("dog-813103_640.jpg", (425, 600), {"quality": 60})],
    "1": [("abbey-2504693_640.jpg", (426, 640), {}), ("alpaca-1845919_640.jpg", (400, 599), {}),
          ("padlock-406986_640.jpg", (480, 505), {"exif": 6}),
          ("peacock-90051_640.jpg", (356, 533), {"exif": 3}),
          ("teddy-2504509_640.jpg", (427, 640), {"quality": 95}),
          ("towels-3401733_640.jpg", (253, 381), {})],
    "100": [("swan-3584559_640.jpg", (377, 566), {})],
    "113": [("snail-4368154_1280.jpg", (400, 600), {})],
    "134": [("baukran-3703469_1280.jpg", (600, 400), {}), ("harbour-crane-1643476_1280.jpg", (401, 600), {})],
    "182": [("dog-2425598_1280.jpg", (399, 600), {}), ("dog-742013_1280.jpg", (450, 600), {"sub": 0})],
    "241": [("cute-4074304_1280.jpg", (400, 600), {}), ("dog-1461239_1280.jpg", (338, 509), {"exif": 8})],
    "312": [("cricket-1345065_1280.jpg", (397, 596), {})],
    "362": [("badger-2372009_1280.jpg", (400, 600), {"progressive": True})],
    "425": [("barn-227557_1280.jpg", (390, 585), {})],
    "450": [("bobsled-643397_1280.jpg", (300, 451), {})],
    "641": [("maracas-3621746_1280.jpg", (600, 397), {})],
    "704": [("parking-meter-3556171_960_720.jpg", (450, 600), {"sub": 1})],
    "755": [("radio-telescope-3575529_960_720.jpg", (450, 600), {})],
    "814": [("speedboat-271768_960_720.jpg", (450, 600), {})],
}

# EXIF orientation values of db/imgcodec/jpeg/orientation/padlock-406986_640_<suffix>.jpg
ORIENTATION = {"horizontal": 1, "mirror_horizontal": 2, "rotate_180": 3, "mirror_vertical": 4,
               "mirror_horizontal_rotate_270": 5, "rotate_90": 6, "mirror_horizontal_rotate_90": 7,
               "rotate_270": 8, "no_exif": None}

MRI_SERIES = ["SER00004", "SER00006", "SER00008", "SER00009", "SER00011", "SER00015"]


def _seed(rel: str) -> int:
    return zlib.crc32(rel.encode())


def _pic(rel: str, h: int, w: int, channels: int = 3, depth: int = 8) -> np.ndarray:
    return _synth.photo(np.random.default_rng(_seed(rel)), h, w, channels, depth)


def _pil(a: np.ndarray) -> Image.Image:
    return Image.fromarray(a[..., 0] if a.shape[-1] == 1 else a)


def _jpeg_bytes(a: np.ndarray, sub: int = 2, quality: int = 85, progressive: bool = False,
                exif: int | None = None) -> bytes:
    kw = {}
    if exif is not None:
        e = Image.Exif()
        e[0x0112] = exif
        kw["exif"] = e.tobytes()
    b = io.BytesIO()
    _pil(a).save(b, "JPEG", quality=quality, subsampling=sub, progressive=progressive, **kw)
    return b.getvalue()


def _save(img: Image.Image, fmt: str, **kw) -> bytes:
    b = io.BytesIO()
    img.save(b, fmt, **kw)
    return b.getvalue()


class _Writer:
    def __init__(self, root: Path):
        self.root = root
        self.written: list[str] = []

    def put(self, rel: str, data: bytes) -> None:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        self.written.append(rel)

    def image_list(self, folder: str, entries: list[str]) -> None:
        """`image_list.txt` as DALI_extra has it: '<class>/<file> <label>' per line."""
        labels = {c: i for i, c in enumerate(sorted({e.split("/")[0] for e in entries}))}
        self.put(f"{folder}/image_list.txt",
                 "".join(f"{e} {labels[e.split('/')[0]]}\n" for e in entries).encode())


def _jpeg_folder(w: _Writer) -> None:
    entries = []
    for cls, files in JPEG.items():
        for name, (h, wd), o in files:
            rel = f"db/single/jpeg/{cls}/{name}"
            a = _pic(rel, h, wd, 1 if o.get("gray") else 3)
            w.put(rel, _jpeg_bytes(a, o.get("sub", 2), o.get("quality", 85), o.get("progressive", False),
                                   o.get("exif")))
            entries.append(f"{cls}/{name}")
    w.image_list("db/single/jpeg", entries)


def _png_folder(w: _Writer) -> None:
    d = "db/single/png/0"
    for i, name in enumerate(["cat-3449999_640", "cat-3504008_640", "cat-1046544_640", "cat-111793_640",
                              "cat-2184682_640", "cat-300572_640", "cat-3113513_640"]):
        rel = f"{d}/{name}.png"
        h, wd = [(426, 640), (427, 640), (360, 541), (400, 600), (333, 500), (300, 451), (480, 321)][i]
        a = _pic(rel, h, wd, 4 if i == 3 else 3, 16 if i == 5 else 8)
        if i == 2:
            data = _save(Image.fromarray(_synth.gray(a)), "PNG")  # 8-bit gray
        elif i == 4:
            data = _save(Image.fromarray(a).quantize(256), "PNG")  # palette
        elif i == 5:
            data = _synth.png16(a)  # 16-bit RGB
        elif i == 6:
            data = _save(Image.fromarray(a), "PNG", optimize=True)
        else:  # RGB; RGBA for i == 3
            data = _save(Image.fromarray(a), "PNG")
        w.put(rel, data)
    w.image_list("db/single/png", [f"0/{n}" for n in sorted(p.split("/")[-1] for p in w.written if p.startswith(d))])


TIFF_SIZES = [(426, 640), (427, 640), (360, 541), (400, 600), (333, 500), (300, 451), (480, 321),
              (350, 525), (399, 600), (427, 640), (300, 450)]
TIFF_COMPRESSION = [None, "tiff_lzw", "tiff_adobe_deflate", "packbits"]


def _tiff_folder(w: _Writer) -> None:
    d = "db/single/tiff"
    for i, name in enumerate(CATS[:10] + ["kitty-2948404_640"]):
        if name == "cat-111793_640":
            continue  # stands as a gray file below (as in DALI_extra's listing)
        rel = f"{d}/0/{name}.tiff"
        h, wd = TIFF_SIZES[i]
        kw = {"compression": TIFF_COMPRESSION[i % 4]} if TIFF_COMPRESSION[i % 4] else {}
        w.put(rel, _save(Image.fromarray(_pic(rel, h, wd)), "TIFF", **kw))
    # the palette twin of cat-300572_640.tiff (test_tiff_palette compares the two)
    a = np.asarray(Image.open(io.BytesIO((w.root / f"{d}/0/cat-300572_640.tiff").read_bytes())))
    w.put(f"{d}/0/cat-300572_640_palette.tiff", _save(Image.fromarray(a).quantize(256), "TIFF"))
    for name in ["cat-111793_640", "cat-3449999_640", "cat-3504008_640"]:
        rel = f"{d}/0/{name}_gray.tiff"
        w.put(rel, _save(Image.fromarray(_synth.gray(_pic(rel, 360, 541))), "TIFF", compression="tiff_lzw"))
    rel = f"{d}/0/cat-1046544_640_bw_bpp1.tiff"
    w.put(rel, _save(Image.fromarray(_synth.gray(_pic(rel, 300, 451))).convert("1"), "TIFF", compression="packbits"))  # Pillow writes BitsPerSample only through libtiff
    base = _pic(f"{d}/orientation", 300, 451)
    for suffix, o in [("horizontal", 1), ("mirror_horizontal", 2), ("rotate_180", 3),
                      ("mirror_vertical", 4), ("mirror_horizontal_rotate_270", 5), ("rotate_270", 8),
                      ("no_orientation", None)]:
        info = {274: o} if o else {}
        w.put(f"{d}/orientation/cat-1046544_640_{suffix}.tiff", _save(Image.fromarray(base), "TIFF", tiffinfo=info))


def _simple_formats(w: _Writer) -> None:
    d = "db/single/pnm/0"
    w.put(f"{d}/cat-3449999_640.pgm", _save(Image.fromarray(_synth.gray(_pic(d + "a", 360, 541))), "PPM"))
    w.put(f"{d}/cat-3504008_640.pbm",
          _save(Image.fromarray(_synth.gray(_pic(d + "b", 301, 450))).convert("1"), "PPM"))
    w.put(f"{d}/kitty-2948404_640.ppm", _save(Image.fromarray(_pic(d + "c", 427, 640)), "PPM"))
    w.put(f"{d}/cat-300572_640_ascii.ppm", _synth.pnm_ascii(_pic(d + "d", 256, 301)))
    w.put(f"{d}/cat-3591348_640_16bit.pgm",
          _save(Image.fromarray(_synth.gray(_pic(d + "e", 280, 383, depth=16))), "PPM"))
    d = "db/single/bmp/0"
    for name, mode, size in [("cat-1046544_640", "RGB", (426, 640)), ("cat-111793_640_grayscale", "L", (400, 600)),
                             ("cat-111793_640_palette_8bit", "P", (400, 600)),
                             ("cat-111793_640_palette_1bit", "1", (400, 600)),
                             ("cat-300572_640", "RGB", (333, 501)), ("kitty-2948404_640", "RGB", (427, 639))]:
        rel = f"{d}/{name}.bmp"
        img = Image.fromarray(_pic(rel if mode == "RGB" else d, *size))
        img = {"RGB": img, "L": img.convert("L"), "P": img.quantize(256), "1": img.convert("L").convert("1")}[mode]
        w.put(rel, _save(img, "BMP"))


def make(root: Path) -> list[str]:
    """Writes every image file under `root`; returns their paths relative to it."""
    from . import images_other
    w = _Writer(root)
    _jpeg_folder(w)
    _png_folder(w)
    _tiff_folder(w)
    _simple_formats(w)
    images_other.make(w)
    return w.written
