"""BMP pixels as DALI 2.4's CPU decoder (OpenCV's BMP reader) gives them: 16-bit 5-6-5 samples
shifted up (x << 3, x << 2) where PIL scaled them to 0..255 (up to 7 off), and GRAY of a 32-bit
BMP with an alpha mask the float BT.601 sum truncated, where the 14-bit rounded sum of other BMPs
was 1 off on half the pixels. The digests are sha256 prefixes of DALI 2.4's outputs for these bytes."""
from __future__ import annotations

import struct

import numpy as np
import pytest
import torch

from torch_dali.io import decode as D

try:
    from tests._dali_digests import OUTPUT_TYPES, digest
except ImportError:
    from _dali_digests import OUTPUT_TYPES, digest  # type: ignore[no-redef]


def _bmp(kind: str) -> bytes:
    """A 16x40 BMP of random colours: "565" (BI_BITFIELDS, 40-byte header) or "alpha" (32-bit,
    124-byte header with an alpha mask). Rows bottom-up, as BMPs store them."""
    h, w = 16, 40
    a = np.random.default_rng(21).integers(0, 256, (h, w, 4)).astype(np.uint32)
    if kind == "565":
        px = ((a[..., 0] >> 3) << 11) | ((a[..., 1] >> 2) << 5) | (a[..., 2] >> 3)
        rows, bpp, masks = px.astype("<u2")[::-1].tobytes(), 16, (0xF800, 0x07E0, 0x001F)
        info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, bpp, 3, len(rows), 2835, 2835, 0, 0)
        info += struct.pack("<3I", *masks)
    else:
        px = a[..., [2, 1, 0, 3]].astype(np.uint8)  # BGRA
        rows, bpp = px[::-1].tobytes(), 32
        info = struct.pack("<IiiHHIIiiII", 124, w, h, 1, bpp, 3, len(rows), 2835, 2835, 0, 0)
        info += struct.pack("<4I", 0xFF0000, 0xFF00, 0xFF, 0xFF000000) + b"BGRs" + bytes(36 + 12 + 16)
    off = 14 + len(info)
    return b"BM" + struct.pack("<IHHI", off + len(rows), 0, 0, off) + info + rows


KINDS = ["565", "alpha"]
# kind -> [(output type, dtype, shape, sha256 prefix)] of DALI 2.4's decoders.image
DALI = {
    "565": [("RGB", "u8", (16, 40, 3), "319e88029898db95"), ("BGR", "u8", (16, 40, 3), "99d313f9ace494d0"),
            ("GRAY", "u8", (16, 40, 1), "567e8609132ea3e7"), ("YCbCr", "u8", (16, 40, 3), "cd8247313ccf6d38")],
    "alpha": [("RGB", "u8", (16, 40, 3), "0eeea03902d01c63"), ("BGR", "u8", (16, 40, 3), "14e8cad5315d3510"),
              ("GRAY", "u8", (16, 40, 1), "9dc98338dc79cc49"), ("YCbCr", "u8", (16, 40, 3), "9b5fea0237140078")],
}


@pytest.mark.parametrize("kind", KINDS)
def test_decoded_as_dali(kind):
    data = torch.frombuffer(bytearray(_bmp(kind)), dtype=torch.uint8)
    for ot, dt, shape, want in DALI[kind]:
        got = D.decode_image(data, OUTPUT_TYPES[ot], torch.uint8)
        assert (tuple(got.shape), digest(got)) == (shape, want), ot


def test_16_bit_samples_are_shifted_not_scaled():
    got = D.decode_image(torch.frombuffer(bytearray(_bmp("565")), dtype=torch.uint8)).numpy()
    a = np.random.default_rng(21).integers(0, 256, (16, 40, 4))
    np.testing.assert_array_equal(got, a[..., :3] & [0xF8, 0xFC, 0xF8])
