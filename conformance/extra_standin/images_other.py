"""The stand-in's other image folders: db/single/{jpeg2k,webp,mixed,case_sensitive,missnamed,multichannel},
db/imgcodec/jpeg/orientation, the 3-D MRI slices test_resize stacks, and db/imgproc's checkerboard."""
from __future__ import annotations

import io

import numpy as np
from PIL import Image

from . import _onnx_resize as onnx
from . import _synth
from .images import CATS, HAS_JP2, HAS_WEBP, ORIENTATION, MRI_SERIES, _jpeg_bytes, _pic, _save, _Writer


def _jpeg2k(w: _Writer) -> None:
    if not HAS_JP2:
        return
    d = "db/single/jpeg2k"
    for i, name in enumerate(CATS[:7]):
        rel = f"{d}/0/{name}.jp2"
        w.put(rel, _save(Image.fromarray(_pic(rel, 300 + 17 * i, 451 - 9 * i)), "JPEG2000"))
    for name in CATS[:2]:
        rel = f"{d}/0/{name}-16bit.jp2"
        w.put(rel, _save(Image.fromarray(_synth.gray(_pic(rel, 333, 500, depth=16))), "JPEG2000"))
    for i, name in enumerate(CATS[:4]):
        rel = f"{d}/1/{name}.jp2"
        w.put(rel, _save(Image.fromarray(_pic(rel, 320, 480 + i)), "JPEG2000", irreversible=True,
                         quality_mode="rates", quality_layers=[20]))
    for name in CATS[1:3]:
        rel = f"{d}/2/tiled-{name}.jp2"
        w.put(rel, _save(Image.fromarray(_pic(rel, 400, 600)), "JPEG2000", tile_size=(128, 128)))


def _webp(w: _Writer) -> None:
    if not HAS_WEBP:
        return
    d = "db/single/webp"
    for i, name in enumerate(CATS[:5]):
        rel = f"{d}/lossy/{name}.webp"
        w.put(rel, _save(Image.fromarray(_pic(rel, 300 + 11 * i, 451)), "WEBP", quality=80))
        rel = f"{d}/lossless/{name}.webp"
        w.put(rel, _save(Image.fromarray(_pic(rel, 333, 500 - 3 * i)), "WEBP", lossless=True))
    for name in ["bird-4496315_640", "elephant-3095552_640"]:
        rel = f"{d}/lossless-alpha/{name}.webp"
        w.put(rel, _save(Image.fromarray(_pic(rel, 300, 451, 4)), "WEBP", lossless=True))


def _mixed(w: _Writer) -> None:
    d = "db/single/mixed"
    w.put(f"{d}/0/422.jpg", _jpeg_bytes(_pic(d + "/0/422", 300, 400), sub=1))
    w.put(f"{d}/0/2x4.jpg", _jpeg_bytes(_pic(d + "/0/2x4", 2, 4)))
    for name in ["alpaca-1845919_640", "camera-2382826_640", "snake-751722_640"]:
        w.put(f"{d}/1/{name}.jpg", _jpeg_bytes(_pic(f"{d}/1/{name}", 400, 600)))
    for name in CATS[1:4]:
        w.put(f"{d}/2/{name}.png", _save(Image.fromarray(_pic(f"{d}/2/{name}", 360, 541)), "PNG"))
    w.put(f"{d}/3/cat-300572_640.pnm", _save(Image.fromarray(_pic(d + "/3/a", 333, 500)), "PPM"))
    w.put(f"{d}/3/cat-3113513_640.ppm", _save(Image.fromarray(_pic(d + "/3/b", 300, 451)), "PPM"))
    w.put(f"{d}/3/cat-3591348_640.pbm",
          _save(Image.fromarray(_synth.gray(_pic(d + "/3/c", 300, 451))).convert("1"), "PPM"))
    for name in CATS[3:5]:
        w.put(f"{d}/4/{name}.tiff", _save(Image.fromarray(_pic(f"{d}/4/{name}", 333, 500)), "TIFF"))
    if HAS_JP2:
        for name in CATS[4:6]:
            w.put(f"{d}/5/{name}.jp2", _save(Image.fromarray(_pic(f"{d}/5/{name}", 320, 481)), "JPEG2000"))


# db/single/case_sensitive: JPEGs whose extensions mix letter cases (test_file's filter cases)
CASE_SENSITIVE = {"113": ["SNaiL-4345504_1280.jPg", "sNAiL-4291306_1280.jpG"], "134": ["sitE-1534685_1280.JpG"],
                  "312": ["GRasshOPpeR-4357903_1280.JpG", "grAsShOPpER-4357907_1280.jpG"],
                  "425": ["wintEr-barN-556696_1280.jpG"], "641": ["maRAcAs-706753_1280.jpg"],
                  "721": ["pIlLOW-2071096_1280.JPG"], "814": ["PoWErbOAt-2784250_960_720.jpg"]}


def _case_sensitive(w: _Writer) -> None:
    for cls, names in CASE_SENSITIVE.items():
        for name in names:
            rel = f"db/single/case_sensitive/{cls}/{name}"
            w.put(rel, _jpeg_bytes(_pic(rel, 120, 160)))


def _missnamed(w: _Writer) -> None:
    """Files whose extension names another format (the decoder must look at the bytes)."""
    d = "db/single/missnamed"
    a = _pic(d, 300, 451)
    w.put(f"{d}/jpeg/0/tiff.jpeg", _save(Image.fromarray(a), "TIFF"))
    w.put(f"{d}/png/0/pnm.png", _save(Image.fromarray(a), "PPM"))
    w.put(f"{d}/pnm/0/bmp.pbm", _save(Image.fromarray(a), "BMP"))
    w.put(f"{d}/pnm/0/jpeg.pnm", _jpeg_bytes(a))
    w.put(f"{d}/tiff/0/png.tiff", _save(Image.fromarray(a), "PNG"))
    w.put(f"{d}/bmp/0/jpeg.bmp", _jpeg_bytes(a))


def _multichannel(w: _Writer) -> None:
    d = "db/single/multichannel"
    for i, name in enumerate(CATS[1:5]):
        rel = f"{d}/tiff_multichannel/{name}_multichannel.tif"
        w.put(rel, _synth.tiff(_pic(rel, 300 + i, 451, 4 + i % 3)))
    rgba = _pic(f"{d}/with_alpha", 400, 600, 4)
    w.put(f"{d}/with_alpha/cat-111793_640-alpha.png", _save(Image.fromarray(rgba), "PNG"))
    if HAS_JP2:
        w.put(f"{d}/with_alpha/cat-111793_640-alpha.jp2", _save(Image.fromarray(rgba), "JPEG2000"))
    rgba16 = _pic(f"{d}/with_alpha_16bit", 160, 240, 4, depth=16)
    w.put(f"{d}/with_alpha_16bit/4ch16bpp.png", _synth.png16(rgba16))
    w.put(f"{d}/with_alpha_16bit/4ch16bpp.tiff", _synth.tiff(rgba16, extra_alpha=True))


def _orientation(w: _Writer) -> None:
    """The same picture with each EXIF orientation (an almost square one, as DALI_extra's padlock)."""
    d = "db/imgcodec/jpeg/orientation"
    a = _pic(d, 480, 505)
    for suffix, o in ORIENTATION.items():
        w.put(f"{d}/padlock-406986_640_{suffix}.jpg", _jpeg_bytes(a, exif=o))


def _mri(w: _Writer) -> None:
    """Gray slices <n>.jpg of six series (test_resize stacks each series into a volume)."""
    for k, ser in enumerate(MRI_SERIES):
        d = f"db/3D/MRI/Knee/Jpegs/STU00001/{ser}"
        vol = _pic(d, 96 + 8 * k, 112 - 4 * k, 12 + k)
        for i in range(vol.shape[-1]):
            w.put(f"{d}/{i}.jpg", _jpeg_bytes(vol[..., i:i + 1], quality=90))


def _npy(w: _Writer, rel: str, a: np.ndarray) -> None:
    b = io.BytesIO()
    np.save(b, a)
    w.put(rel, b.getvalue())


def _imgproc(w: _Writer) -> None:
    """A 22x22 checkerboard of 2x2 squares (0 / 255) and its 17x13 resamplings by ONNX's reference
    Resize (linear and cubic with a = -0.5, with and without antialiasing), as test_resize reads them."""
    board = ((np.arange(22)[:, None] // 2 + np.arange(22)[None, :] // 2) % 2 * 255).astype(np.float32)
    _npy(w, "db/imgproc/checkerboard_22_22.npy", board)
    for name, coeffs in (("linear", onnx.linear), ("linear_antialias", onnx.linear_antialias),
                         ("cubic", onnx.cubic), ("cubic_antialias", onnx.cubic_antialias)):
        _npy(w, f"db/imgproc/ref/resampling/checkerboard_{name}_17_13.npy",
             onnx.resize(board.astype(np.float64), (17, 13), coeffs))


def make(w: _Writer) -> None:
    _jpeg2k(w)
    _webp(w)
    _mixed(w)
    _case_sensitive(w)
    _missnamed(w)
    _multichannel(w)
    _orientation(w)
    _mri(w)
    _imgproc(w)
