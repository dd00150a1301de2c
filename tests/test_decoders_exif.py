"""EXIF orientations of JPEGs that DALI 2.4 applies (decode and peek_image_shape, measured on
17x23 files): an Exif APP1 after an XMP APP1 (torchvision's decoder skipped it: the image came out
unturned while peek_image_shape said turned), and an Exif APP1 between the frame header and the
scan (our header parser stopped at the frame header: peek_image_shape said unturned and
image_crop / image_slice cut their windows from the unturned size)."""
from __future__ import annotations

import io
import struct

import numpy as np
import pytest
import torch
from PIL import Image

from torch_dali import types
from torch_dali.io import decode as D


def _segment(marker: int, body: bytes) -> bytes:
    return bytes((0xFF, marker)) + struct.pack(">H", len(body) + 2) + body


def _jpeg(where: str) -> bytes:
    a = np.random.default_rng(3).integers(0, 256, (17, 23, 3), dtype=np.uint8)
    b = io.BytesIO()
    Image.fromarray(a).save(b, "JPEG", quality=90)
    plain = b.getvalue()
    tiff = b"II*\0" + struct.pack("<IH", 8, 1) + struct.pack("<HHIHH", 0x0112, 3, 1, 6, 0) + b"\0" * 4
    exif = _segment(0xE1, b"Exif\0\0" + tiff)
    if where == "after-xmp":
        return plain[:2] + _segment(0xE1, b"http://ns.adobe.com/xap/1.0/\0<x/>") + exif + plain[2:]
    sos = plain.index(b"\xff\xda")
    return plain[:sos] + exif + plain[sos:]  # "after-sof": between the frame header and the scan


@pytest.mark.parametrize("where", ["after-xmp", "after-sof"])
def test_orientation_is_applied_as_dali(where):
    data = torch.frombuffer(bytearray(_jpeg(where)), dtype=torch.uint8)
    stored = D.decode_image(data, types.RGB, adjust_orientation=False).numpy()
    turned = D.decode_image(data, types.RGB).numpy()
    np.testing.assert_array_equal(turned, np.rot90(stored, -1))  # orientation 6: 90 degrees clockwise
    assert D.peek_image_shape(data) == (23, 17, 3)
    crop = D.decode_image_crop(data, lambda h, w: (h - 5, w - 4, 5, 4))
    np.testing.assert_array_equal(crop.numpy(), turned[-5:, -4:])


def test_png_exif_after_the_image_data_is_applied_as_dali():
    """DALI 2.4 turns a PNG by an eXIf chunk placed after its IDAT chunks (decode and peek)."""
    import zlib
    a = np.random.default_rng(4).integers(0, 256, (17, 23, 3), dtype=np.uint8)
    b = io.BytesIO()
    Image.fromarray(a).save(b, "PNG")
    png = b.getvalue()
    tiff = b"II*\0" + struct.pack("<IH", 8, 1) + struct.pack("<HHIHH", 0x0112, 3, 1, 8, 0) + b"\0" * 4
    chunk = struct.pack(">I", len(tiff)) + b"eXIf" + tiff + struct.pack(">I", zlib.crc32(b"eXIf" + tiff))
    end = png.index(b"IEND") - 4
    data = torch.frombuffer(bytearray(png[:end] + chunk + png[end:]), dtype=torch.uint8)
    assert D.peek_image_shape(data) == (23, 17, 3)
    np.testing.assert_array_equal(D.decode_image(data).numpy(), np.rot90(a))  # orientation 8: 90 ccw
