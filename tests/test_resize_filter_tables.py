"""resize's Gaussian and Lanczos-3 tables are built as DALI 2.4 builds them, with the C library's
float32 expf and sinf (glibc's sinf is not correctly rounded, NumPy's float32 exp is not expf):
sha256 digests (first 16 hex digits) of DALI 2.4's CPU outputs for a 41x37 RGB image. Float
outputs of shrinking passes still differ in the last bits (functional/resize.py's doc)."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types

L3, GAUSS = types.INTERP_LANCZOS3, types.INTERP_GAUSSIAN
DALI_24 = [  # (interp, size, antialias, float output, digest)
    (L3, (150, 111), False, False, "852ee6c64b3d65bb"), (L3, (150, 111), False, True, "9cc27bf52deeb283"),
    (L3, (150, 111), True, False, "852ee6c64b3d65bb"), (L3, (150, 111), True, True, "9cc27bf52deeb283"),
    (GAUSS, (150, 111), True, False, "1d6255da2c9022ce"), (GAUSS, (150, 111), True, True, "2ae5e5ad85ff6bd3"),
    (GAUSS, (20, 17), True, False, "0c9c8e49a630eec7"), (L3, (20, 17), True, False, "3f6ea0feac2bbcdd"),
]


@pytest.mark.parametrize("interp,size,antialias,to_float,digest", DALI_24)
def test_resize_gives_dali_24_bits(interp, size, antialias, to_float, digest) -> None:
    img = np.random.default_rng(7).integers(0, 256, (41, 37, 3), dtype=np.uint8)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(lambda: [img], batch=True, layout="HWC")
        kw = {"dtype": types.FLOAT} if to_float else {}
        return fn.resize(x, size=size, interp_type=interp, antialias=antialias, **kw)

    p = pipe()
    p.build()
    (out,) = p.run()
    got = np.ascontiguousarray(np.array(out[0]))
    assert hashlib.sha256(got.tobytes()).hexdigest()[:16] == digest
