"""Decoded values of DALI 2.4's CPU decoder that synthetic files (conformance/extra_standin) showed
torch_dali getting wrong: a palette TIFF is its 16-bit colormap as RGB (uint8 outputs scaled from
16 bits, GRAY the luma of the 16-bit colours; PIL kept the entries' high bytes, 1 off on most
pixels), GRAY of a TIFF turned by its orientation tag is OpenCV's 14-bit luma (not the float one
of upright TIFFs), and GRAY of a colour JPEG is libjpeg's Y plane also where torchvision is missing
(PIL's path took the luma of the clipped RGB: up to 3 off at saturated colours). The digests are
sha256 prefixes of DALI 2.4's outputs for these bytes."""
from __future__ import annotations

import base64
import hashlib
import io

import numpy as np
import pytest
import torch
from PIL import Image, features

from torch_dali import types
from torch_dali.io import decode as D


def _picture(h: int = 24, w: int = 32) -> np.ndarray:
    rng = np.random.default_rng(7)
    yy, xx = np.mgrid[0:h, 0:w]
    a = np.stack([xx * 255 // (w - 1), yy * 255 // (h - 1), (xx + yy) * 255 // (h + w - 2)], -1)
    a = a + rng.integers(-40, 41, a.shape)
    a[::5, ::3] = [255, 255, 0]
    a[2::7, 1::4] = [0, 255, 255]
    # colours whose gray the formulas round differently (15-bit vs PIL's; 14-bit vs float)
    a[-1, :8] = [[180, 223, 77], [116, 148, 210], [143, 213, 15], [98, 41, 238],
                 [162, 188, 129], [141, 230, 38], [193, 200, 21], [201, 194, 66]]
    return np.clip(a, 0, 255).astype(np.uint8)


def _enc(img: Image.Image, fmt: str, **kw) -> torch.Tensor:
    b = io.BytesIO()
    img.save(b, fmt, **kw)
    return torch.frombuffer(bytearray(b.getvalue()), dtype=torch.uint8)


def _palette_tiff() -> torch.Tensor:
    a = _picture()
    idx = ((a[..., 0].astype(np.int32) // 32) * 32 + (a[..., 1] // 32) * 4 + a[..., 2] // 64).astype(np.uint8)
    im = Image.fromarray(idx, "P")
    im.putpalette([(i * 37) % 256 for i in range(768)])
    return _enc(im, "TIFF")  # Pillow writes the colormap as v * 256


def _digest(t: torch.Tensor) -> str:
    return hashlib.sha256(np.ascontiguousarray(t.numpy()).tobytes()).hexdigest()[:16]


# (output type, shape, sha256 prefix) of DALI 2.4's decoders.image
DALI = {
    "palette": [(types.RGB, (24, 32, 3), "74da012cdb19be64"), (types.GRAY, (24, 32, 1), "a05164e515eeaabc"),
                (types.ANY_DATA, (24, 32, 3), "74da012cdb19be64"), (types.YCbCr, (24, 32, 3), "d343983f332a1308")],
    "oriented": [(types.RGB, (24, 32, 3), "ec47ac15b010864a"), (types.GRAY, (24, 32, 1), "42d38e37e4d61817"),
                 (types.YCbCr, (24, 32, 3), "bd5719dfa667a93f")],
    "webp": [(types.RGB, (24, 32, 3), "7dec3537c6dbdf0e"), (types.GRAY, (24, 32, 1), "86d69543a3ab285d"),
             (types.YCbCr, (24, 32, 3), "65b1575b4c662309")],
    "jp2": [(types.RGB, (24, 32, 3), "7dec3537c6dbdf0e"), (types.GRAY, (24, 32, 1), "86d69543a3ab285d"),
            (types.YCbCr, (24, 32, 3), "65b1575b4c662309")],
}


def _data(kind: str) -> torch.Tensor:
    if kind == "palette":
        return _palette_tiff()
    im = Image.fromarray(_picture())
    if kind == "oriented":
        return _enc(im, "TIFF", tiffinfo={274: 3})  # turned 180 degrees
    if kind == "webp":
        return _enc(im, "WEBP", lossless=True)
    if not features.check("jpg_2000"):
        pytest.skip("Pillow without OpenJPEG")
    return _enc(im, "JPEG2000")  # lossless (Pillow's default)


@pytest.mark.parametrize("kind", list(DALI))
def test_decoded_as_dali(kind):
    data = _data(kind)
    for output_type, shape, digest in DALI[kind]:
        got = D.decode_image(data, output_type)
        assert (tuple(got.shape), _digest(got)) == (shape, digest), (kind, output_type)
        assert D.peek_image_shape(data, output_type) == shape


def test_palette_tiff_is_16_bit_rgb():
    """DALI 2.4 gives the colormap's 16-bit values for uint16 output (37376 = 146 * 256 stays
    37376) and scales them for uint8 (round(37376 / 257) = 145, where PIL's high byte is 146)."""
    data = _palette_tiff()
    im = Image.open(io.BytesIO(bytes(data.numpy())))
    cmap = np.asarray(im.tag_v2[320], np.int64).reshape(3, 256).T
    want16 = cmap[np.asarray(im)]
    got16 = D.decode_image(data, types.ANY_DATA, dtype=torch.uint16).numpy().astype(np.int64)
    np.testing.assert_array_equal(got16, want16)
    np.testing.assert_array_equal(D.decode_image(data, types.RGB).numpy(), (want16 * 2 + 257) // 514)


# RGB -> DALI 2.4's YCbCr (uint8) for colours where the float64 studio-swing matrix was 1 off
YCBCR = {(90, 150, 110): (126, 119, 105), (130, 130, 123): (127, 125, 129), (178, 82, 70): (110, 109, 171),
         (217, 121, 109): (143, 109, 171), (24, 253, 104): (160, 96, 38), (51, 147, 159): (119, 147, 85)}


def test_ycbcr_of_8_bit_colours_as_dali():
    rgb = np.array([list(YCBCR)], np.uint8)
    got = D.decode_image(_enc(Image.fromarray(rgb), "BMP"), types.YCbCr)
    assert [tuple(p) for p in got[0].tolist()] == list(YCBCR.values())


# a 16x16 4:4:4 JPEG (q90) of saturated colours, where the Y plane and the luma of RGB differ
_SATURATED_JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsL"
    "EBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQU"
    "FBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAQABADAREAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcI"
    "CQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRol"
    "JicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ip"
    "qrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAA"
    "AAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLR"
    "ChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaX"
    "mJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEA"
    "PwDwPTPCH9tvY6SmpadPbTSXKW0KXmoG1SURhjeRRvy5utijLA5UOXWJVVhjGdWNfH4iWDlGdoRnejSjJL20E1NKbVB0"
    "ryc+WTjCUvZ0HJNuH6Tl2b1YKMsVjbzjOq5qNZSi7/XLQ5vrDlOPvJw052lByc3Uf1z0jTfDEy3uq3NxrdvZXdlBZxw3"
    "FxfX8cli6wWreYZzEzQGFAobHCD5o12jKethadKtSwmHhlspRqKTcPYUGptVrNRg7Ku6/vNOpyxk1OFVw5VyfqeDzC2G"
    "xkK2Ic4c9dte2io1IuNaTpzfM/ZQvJOLpS5+WEJzqTdWX1jv/DHww1K7t/Dsc/h2/snkmijv5RpqRsiiO2LJcfuAB5b5"
    "ZjD8+7dk7N7Q/J0szy2WJxdaFWk4SjBQSbdO0qsVTlSbhzL2qXLGVd+9GLX8Z6/yTg8xxGFVelLFSqTozxC55VG5TcXm"
    "HPzf8KEoPljNvllFqLqKXLU9rT+u+i6R8KdQns9QuE8Oana3NpDAbf7Fp0KSXD7NNJkthLZFFO5nH+keWBIjk+XGjfZ/"
    "UwmaZdTlhXWrUkldzdRtWjTqpT9o4wWlJKMJOjZqmo88nV9o1+v5bmzvXtiKjfPVqRXtuZR544xK3+1zU1N3qRjN1YKU"
    "48nNF0pV/wD/2Q=="
)
DALI_JPEG_GRAY = "3bdf8a851ca5ad21"  # DALI 2.4: libjpeg's gray output, the Y plane


@pytest.mark.parametrize("torchvision", [True, False])
def test_gray_of_a_colour_jpeg_is_the_y_plane(monkeypatch, torchvision):
    if not torchvision:
        monkeypatch.setattr(D, "_tv_decode_jpeg", None)  # as without torchvision: PIL decodes
    elif D._jpeg_decoder() is None:
        pytest.skip("torchvision is not installed")
    data = torch.frombuffer(bytearray(_SATURATED_JPEG), dtype=torch.uint8)
    got = D.decode_image(data, types.GRAY)
    assert (tuple(got.shape), _digest(got)) == ((16, 16, 1), DALI_JPEG_GRAY)
