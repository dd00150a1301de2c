"""gaussian_blur of FLOAT16 data as DALI 2.4's CPU operator computes it: each tap's product is
rounded to float16, the taps are summed in float32, the first pass's result is rounded to float16
before the second, and the output is converted as DALI converts to float16 (halfway cases away
from zero) or kept in float32 for dtype=FLOAT. Torch's plain float32 convolution differed from
DALI's on 1970 of 7172 float16 outputs (1 ulp) and on every float32 output (up to 1e-4 relative).
The digests are DALI 2.4's outputs (CPU) for the same two-sample ragged batch."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types

DALI_SHA256 = {
    "sigma1": (dict(sigma=1.0), "00db8a955fb16c7194f5512670e190e835fea47bd79860bfc25f5f23b8389b1c"),
    "win3": (dict(sigma=0.7, window_size=3), "5787cf3716dd2a60efda023d30e5557f8462808c552e9f8c442ff5b7699c9732"),
    "aniso": (dict(sigma=(1.5, 0.5)), "531022a5277e39598829d9123a184474e913539f6b09be13723a89fb5104bb2e"),
    "float_out": (dict(sigma=2.3, dtype=types.FLOAT),
                  "af947b62b28712384e446750b88d27d4e53831b6c9c3ae9d45c3c7cea867cdea"),
}


@pytest.mark.parametrize("name", sorted(DALI_SHA256))
def test_float16_gaussian_blur_bit_for_bit(name):
    r = np.random.default_rng(7)
    xs = [(r.random((20, 23, 3)) * 300 - 20).astype(np.float16), (r.standard_normal((11, 31, 3))).astype(np.float16)]
    kw, digest = DALI_SHA256[name]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.gaussian_blur(fn.external_source(source=lambda: xs, layout="HWC"), **kw)

    p = pipe()
    p.build()
    out = p.run()[0]
    assert np.asarray(out[0]).dtype == (np.float32 if "dtype" in kw else np.float16)
    assert hashlib.sha256(b"".join(np.asarray(out[i]).tobytes() for i in range(2))).hexdigest() == digest
