"""decoders.image's integer `dtype`s beyond uint8/uint16/int16: DALI 2.4 also takes INT8, INT32 and
UINT32 (torch_dali refused them as invalid). Its values, measured on every pixel of 8- and 16-bit
images: float32 x * (1/peak) times the type's maximum as float32, rounded, saturated (so 255 is
2147483647 as INT32, 120 is 2021161216 as UINT32). The digests are sha256 prefixes of DALI 2.4's
outputs for these pixels (a 24x32 RGB PNG and a 16-bit gray PNG, lossless, so the encoder does not
matter)."""
from __future__ import annotations

import hashlib
import io

import numpy as np
import pytest
from PIL import Image

from torch_dali import fn, pipeline_def, types


def _images() -> dict[str, bytes]:
    yy, xx = np.mgrid[0:24, 0:32]
    rgb = np.stack([xx * 8, yy * 10, (xx * yy) % 256], -1).astype(np.uint8)
    b = io.BytesIO()
    Image.fromarray(rgb).save(b, "PNG")
    g16 = ((xx * 2053 + yy * 977) % 65536).astype(np.uint16)
    b16 = io.BytesIO()
    Image.fromarray(g16).save(b16, "PNG")
    return {"rgb8": b.getvalue(), "gray16": b16.getvalue()}


# (image, dtype, output type) -> (shape, sha256 prefix of DALI 2.4's decoders.image output)
DALI = {
    ("rgb8", "INT8", "RGB"): ((24, 32, 3), "2f23772564c974fe"),
    ("rgb8", "INT8", "GRAY"): ((24, 32, 1), "9f289e164688102c"),
    ("rgb8", "INT32", "RGB"): ((24, 32, 3), "ab886e29f81bf4f8"),
    ("rgb8", "INT32", "GRAY"): ((24, 32, 1), "bb5bbde47f454e5c"),
    ("rgb8", "UINT32", "RGB"): ((24, 32, 3), "1b2b42db469bd063"),
    ("rgb8", "UINT32", "GRAY"): ((24, 32, 1), "1725072606e84d59"),
    ("gray16", "INT8", "RGB"): ((24, 32, 3), "28deef4fbc68551c"),
    ("gray16", "INT8", "GRAY"): ((24, 32, 1), "e3556faca914e335"),
    ("gray16", "INT32", "RGB"): ((24, 32, 3), "324b54cceeb2f880"),
    ("gray16", "INT32", "GRAY"): ((24, 32, 1), "9bab864425b5b028"),
    ("gray16", "UINT32", "RGB"): ((24, 32, 3), "94f013388beca117"),
    ("gray16", "UINT32", "GRAY"): ((24, 32, 1), "a3d18186d9e3116f"),
}


@pytest.mark.parametrize("key", list(DALI))
def test_integer_dtypes_match_dali(key):
    name, dt, ot = key
    arr = np.frombuffer(_images()[name], np.uint8)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.decoders.image(fn.external_source(source=lambda: [arr], batch=True),
                                 dtype=getattr(types, dt), output_type=getattr(types, ot))

    p = pipe()
    p.build()
    out = np.asarray(p.run()[0][0])
    shape, digest = DALI[key]
    assert out.shape == shape and out.dtype == np.dtype(dt.lower())
    assert hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest()[:16] == digest
