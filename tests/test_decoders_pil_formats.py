"""Formats decoded through PIL (BMP, TIFF, PPM, ...): what `peek_image_shape` says and what
decoders.image gives for ANY_DATA, as DALI 2.4's CPU decoder (measured on these files): a palette
image is 3 channels (its colours) in both, a bilevel (1-bit) image 1 channel of 0 / 255."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image, features

from torch_dali import types
from torch_dali.errors import DataError
from torch_dali.io import decode as D

_RGB = np.random.default_rng(0).integers(0, 256, (12, 10, 3), dtype=np.uint8)
_BIG = np.random.default_rng(1).integers(0, 256, (48, 40, 3), dtype=np.uint8)  # formulas differ on a few


def _enc(mode: str, fmt: str) -> torch.Tensor:
    buf = io.BytesIO()
    Image.fromarray(_RGB).convert(mode).save(buf, fmt)
    return torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8)


@pytest.mark.parametrize("fmt", ["BMP", "TIFF"])
def test_palette_is_three_channels_in_peek_and_decode(fmt):
    data = _enc("P", fmt)
    assert D.peek_image_shape(data, types.ANY_DATA) == (12, 10, 3)  # DALI 2.4: 3 (was 1 here)
    assert tuple(D.decode_image(data, types.ANY_DATA).shape) == (12, 10, 3)


def test_bilevel_any_data_is_one_gray_channel():
    data = _enc("1", "BMP")
    got = D.decode_image(data, types.ANY_DATA)
    assert tuple(got.shape) == (12, 10, 1) == D.peek_image_shape(data, types.ANY_DATA)  # DALI 2.4: 1 channel
    want = np.asarray(Image.fromarray(_RGB).convert("1").convert("L"))
    np.testing.assert_array_equal(got[..., 0].numpy(), want)
    assert set(np.unique(want).tolist()) <= {0, 255}


# DALI 2.4's float output of these gray levels (BMP, dtype=FLOAT): v * float32(1/255), which is not
# float32(v / 255) in the last bit for these
FLOAT_OF = {3: 0.011764707043766975, 15: 0.05882353335618973, 24: 0.0941176563501358, 48: 0.1882353127002716}


def test_float_output_is_dalis_reciprocal_product():
    levels = np.array(list(FLOAT_OF), np.uint8)
    buf = io.BytesIO()
    Image.fromarray(np.repeat(levels[None, :, None], 3, axis=2)).save(buf, "BMP")
    got = D.decode_image(torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8), types.RGB, dtype=torch.float32)
    assert got[0, :, 0].tolist() == list(FLOAT_OF.values())


@pytest.mark.parametrize("fmt", ["BMP", "PPM", "TIFF", "WEBP", "JPEG2000"])
def test_gray_from_colour_as_dalis_decoder_for_the_format(fmt):
    """BMP/PNM: OpenCV's 14-bit fixed-point luma; TIFF: float luma rounded half up; WebP and JPEG
    2000: 15-bit fixed point (all as DALI 2.4 gives them for these pixels: each other formula is 1
    off on ~0.1-0.4% of random pixels; PIL's, used for WebP before, is 1 off on [8, 23] here)."""
    if fmt == "JPEG2000" and not features.check("jpg_2000"):
        pytest.skip("Pillow without OpenJPEG")
    buf = io.BytesIO()
    Image.fromarray(_BIG).save(buf, fmt, **({"lossless": True} if fmt == "WEBP" else {}))
    got = D.decode_image(torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8), types.GRAY)[..., 0].numpy()
    r, g, b = (_BIG[..., i].astype(np.int64) for i in range(3))
    if fmt in ("BMP", "PPM"):
        want = (r * 4899 + g * 9617 + b * 1868 + 8192) >> 14
    elif fmt == "TIFF":
        f = np.float32
        want = np.floor(f(0.299) * r.astype(f) + f(0.587) * g.astype(f) + f(0.114) * b.astype(f) + f(0.5))
    else:
        want = (r * 9798 + g * 19235 + b * 3735 + 16384) >> 15
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("torchvision", [True, False])
def test_gray_of_a_cmyk_jpeg_as_dali(monkeypatch, torchvision):
    """A CMYK JPEG to GRAY: DALI 2.4 truncates the float32 BT.601 sum of the RGB it decodes (0 of
    108,000 random pixels off, against 44 for the float64 sum and about half for rounding); also
    where torchvision is missing (PIL's path took PIL's own CMYK -> L: 942 of these 1920 pixels 1 off)."""
    if not torchvision:
        monkeypatch.setattr(D, "_tv_decode_jpeg", None)
    buf = io.BytesIO()
    Image.fromarray(_BIG).convert("CMYK").save(buf, "JPEG", quality=97)
    data = torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8)
    rgb = D.decode_image(data, types.RGB).numpy()
    got = D.decode_image(data, types.GRAY)[..., 0].numpy()
    f = np.float32
    r, g, b = (rgb[..., i].astype(f) for i in range(3))
    np.testing.assert_array_equal(got, np.floor(f(0.299) * r + f(0.587) * g + f(0.114) * b))


# EXIF orientation k applied to an image as stored (rows, cols, channels)
_UPRIGHT = {1: lambda a: a, 2: lambda a: a[:, ::-1], 3: lambda a: a[::-1, ::-1], 4: lambda a: a[::-1],
            5: lambda a: a.transpose(1, 0, 2), 6: lambda a: np.rot90(a, -1), 7: lambda a: a.transpose(1, 0, 2)[::-1, ::-1],
            8: lambda a: np.rot90(a, 1)}


@pytest.mark.parametrize("orientation", range(1, 9))
def test_tiff_orientation_tag_as_dali(orientation):
    """A TIFF whose orientation tag turns it (DALI 2.4 measured on o1/3/5/6/8 files written so):
    adjust_orientation=True gives it upright and peek says the upright shape; False gives the pixels
    as stored and the stored shape. Pillow 11+ turns TIFFs upright itself while loading (and reports
    the upright size), which made adjust_orientation=False a no-op and peek swap the sides twice."""
    stored = _RGB[:, :7]  # 12 x 7: the sides differ
    im = Image.fromarray(np.ascontiguousarray(stored))
    exif = im.getexif()
    exif[0x0112] = orientation
    buf = io.BytesIO()
    im.save(buf, "TIFF", exif=exif)
    data = torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8)
    upright = _UPRIGHT[orientation](stored)
    np.testing.assert_array_equal(D.decode_image(data, types.RGB).numpy(), upright)
    np.testing.assert_array_equal(D.decode_image(data, types.RGB, adjust_orientation=False).numpy(), stored)
    assert tuple(D.peek_image_shape(data, types.RGB)) == upright.shape
    assert tuple(D.peek_image_shape(data, types.RGB, adjust_orientation=False)) == stored.shape


EPS = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 16 12\n0 0 moveto 16 12 lineto stroke\nshowpage\n%%EOF\n"


def test_eps_never_reaches_ghostscript(monkeypatch):
    """An .eps in a data folder is a PostScript program: PIL's EPS plugin ran Ghostscript on it while
    decoding (here "Unable to locate Ghostscript", elsewhere the program ran). DALI 2.4 refuses it;
    now only PIL_FORMATS are opened, and the file is not an image."""
    from PIL import EpsImagePlugin
    calls = []
    monkeypatch.setattr(EpsImagePlugin, "Ghostscript", lambda *a, **k: calls.append(a) or Image.new("RGB", (16, 12)))
    data = torch.frombuffer(bytearray(EPS), dtype=torch.uint8)
    for call in (lambda: D.decode_image(data), lambda: D.peek_image_shape(data)):
        with pytest.raises(DataError, match="not an image"):
            call()
    assert calls == []


@pytest.mark.parametrize("fmt", ["ICO", "TGA", "PCX", "SGI", "DDS", "QOI"])
def test_formats_dali_does_not_decode_are_refused(fmt):
    """DALI 2.4's CPU decoder refuses these (measured on 16x12 RGB files); PIL decoded them here."""
    buf = io.BytesIO()
    Image.fromarray(_RGB).save(buf, fmt)
    with pytest.raises(DataError, match="not an image"):
        D.decode_image(torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8))


def _j2k(w: int, h: int, tile: int) -> bytes:
    """A JPEG 2000 codestream of a SIZ marker and an empty tile-part: w x h pixels, square tiles."""
    import struct
    siz = struct.pack(">HHHIIIIIIIIH", 0xFF51, 47, 0, w, h, 0, 0, tile, tile, 0, 0, 3) + b"\x07\x01\x01" * 3
    cod = struct.pack(">HHBBHBBBBBB", 0xFF52, 12, 0, 0, 1, 0, 0, 4, 4, 0, 0)
    qcd = struct.pack(">HHBB", 0xFF5C, 4, 0x40, 0x48)
    return b"\xff\x4f" + siz + cod + qcd + struct.pack(">HHHIBB", 0xFF90, 10, 0, 14, 0, 1) + b"\xff\x93\xff\xd9"


def test_jpeg2000_of_tens_of_thousands_of_tiny_tiles_is_refused_at_once():
    """OpenJPEG sets up every tile: a 98-byte file of 65,535 one-pixel tiles took 8 s to fail (4000 x
    4000 in 16x16 tiles: 5.6 s; DALI 2.4: 1.6 and 2.3 s). Over 4096 tiles each needs 4096 pixels;
    files PIL writes in 16x16 tiles, raw codestreams and JP2 boxes, decode."""
    import time
    if not features.check("jpg_2000"):
        pytest.skip("Pillow without OpenJPEG")
    for w, h, tile in ((65535, 1, 1), (4000, 4000, 16)):
        t0 = time.perf_counter()
        with pytest.raises(DataError, match=f"a JPEG 2000 image of {-(-w // tile) * -(-h // tile)} tiles"):
            D.decode_image(torch.frombuffer(bytearray(_j2k(w, h, tile)), dtype=torch.uint8))
        assert time.perf_counter() - t0 < 0.5
    from torch_dali.io import headers
    for raw in (False, True):
        buf = io.BytesIO()
        Image.fromarray(_BIG).save(buf, "JPEG2000", tile_size=(16, 16), no_jp2=raw)
        data = torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8)
        assert headers.jpeg2000_tiles(buf.getvalue()) == 9 and D.decode_image(data).shape == (48, 40, 3)
