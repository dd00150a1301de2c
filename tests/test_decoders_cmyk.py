"""CMYK JPEGs and TIFFs as DALI 2.4's CPU decoder gives them: RGB = (255 - x) * (255 - k) // 255
(libjpeg-turbo's and libtiff's RGBA reader's integer conversion), where torchvision and PIL round
(1 off on about half the values of a file with black ink, measured 926 of 1920); a TIFF's ANY_DATA
is that RGB plus alpha 255 (4 channels; it was RGB). The digests are sha256 prefixes of DALI 2.4's
outputs for these bytes. A CMYK JPEG turned by its EXIF orientation goes to OpenCV in DALI:
RGB = (255 - k) - (x * (255 - k) >> 8), GRAY OpenCV's 14-bit luma of it (1-2 off before)."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

from torch_dali.io import decode as D

try:
    from tests._dali_digests import DTYPES, OUTPUT_TYPES, digest
except ImportError:
    from _dali_digests import DTYPES, OUTPUT_TYPES, digest  # type: ignore[no-redef]


def _cmyk(fmt: str) -> bytes:
    """16x40 random CMYK samples (black ink included) as a TIFF or a quality-95 JPEG."""
    a = np.random.default_rng(4).integers(0, 256, (16, 40, 4), dtype=np.uint8)
    b = io.BytesIO()
    kw = {"quality": 95} if fmt.startswith("JPEG") else {}
    if fmt == "JPEG-exif6":  # turned by EXIF orientation 6: DALI 2.4 decodes it with OpenCV
        exif = Image.Exif()
        exif[0x0112] = 6
        kw["exif"] = exif
    Image.fromarray(a, "CMYK").save(b, fmt[:4], **kw)
    return b.getvalue()


FORMATS = ["TIFF", "JPEG", "JPEG-exif6"]
# format -> [(output type, dtype, shape, sha256 prefix)] of DALI 2.4's decoders.image
DALI = {
    "TIFF": [("RGB", "u8", (16, 40, 3), "4d747dec89b4f615"), ("GRAY", "u8", (16, 40, 1), "89ac23f953d99e73"),
             ("YCbCr", "u8", (16, 40, 3), "1f60e30d2d62f5b7"), ("ANY", "u8", (16, 40, 4), "a11ddb1b87c45cfe"),
             ("ANY", "u16", (16, 40, 4), "a411b56156d480a6")],
    "JPEG": [("RGB", "u8", (16, 40, 3), "5158c0a798b23730"), ("GRAY", "u8", (16, 40, 1), "77a037b6d5ee65a8"),
             ("YCbCr", "u8", (16, 40, 3), "2980b91966aba979"), ("ANY", "u8", None, "refused")],
    "JPEG-exif6": [("RGB", "u8", (40, 16, 3), "b98aac944ea3e18c"), ("GRAY", "u8", (40, 16, 1), "1a744050cc58bfb3"),
                   ("YCbCr", "u8", (40, 16, 3), "8a3887dd5df856b9")],
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_decoded_as_dali(fmt):
    data = torch.frombuffer(bytearray(_cmyk(fmt)), dtype=torch.uint8)
    for ot, dt, shape, want in DALI[fmt]:
        if shape is None:  # DALI 2.4 refuses ANY_DATA of a CMYK JPEG; here it is the RGB
            continue
        got = D.decode_image(data, OUTPUT_TYPES[ot], DTYPES[dt])
        assert (tuple(got.shape), digest(got)) == (shape, want), (ot, dt)


@pytest.mark.parametrize("fmt", FORMATS[:2])
def test_rgb_is_the_integer_product(fmt):
    data = _cmyk(fmt)
    x = np.asarray(Image.open(io.BytesIO(data))).astype(np.int64)  # the samples as stored
    want = (255 - x[..., :3]) * (255 - x[..., 3:]) // 255
    got = D.decode_image(torch.frombuffer(bytearray(data), dtype=torch.uint8)).numpy()
    np.testing.assert_array_equal(got, want)
