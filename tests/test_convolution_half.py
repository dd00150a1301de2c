"""gaussian_blur and laplacian of FLOAT16 data as DALI 2.4's CPU operators compute them: each
tap's product is rounded to float16, the taps are summed in float32, the first pass's result is
rounded to float16 before the second, and the output is converted as DALI converts to float16
(halfway cases away from zero) or kept in float32 for dtype=FLOAT; laplacian's running sum of its
scaled partial derivatives is rounded to float16 after each one (for a FLOAT output too). Torch's
plain float32 convolution differed from DALI's on 1970 of 7172 float16 blur outputs (1 ulp), on
every float32 one (up to 1e-4 relative), and on 3780 of 7172 laplacian outputs. The digests are
DALI 2.4's outputs (CPU) for the same two-sample batches."""
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


LAPLACIAN_SHA256 = {
    "default": (dict(), "bb8d0b48d604e0bb38631d3ba1509f10cbf4290201887d8f55a118ebf206ff4a"),
    "win5_scale": (dict(window_size=5, scale=0.5), "5bfee14dadb287213d26d3c83f1234901316dd73f5ade9739658eef73544966e"),
    "smooth": (dict(window_size=[3, 7], smoothing_size=[5, 1]),
               "eaa78afc980c0df27e83fe05c998399f716549d5f561e593c2699ecde9571cbc"),
    "normalized": (dict(normalized_kernel=True, window_size=5),
                   "ed54e2b1c2fed9edd36dd587929a67db905c96d6533848a98b42203a65c4bb2b"),
    "float_out": (dict(window_size=5, scale=[0.3, 2.0], dtype=types.FLOAT),
                  "99d07ed953e0a34f18ab07d0698f507ab542b9970c7f2032af7cb2825bb50e56"),
}


@pytest.mark.parametrize("name", sorted(LAPLACIAN_SHA256))
def test_float16_laplacian_bit_for_bit(name):
    r = np.random.default_rng(9)
    xs = [(r.random((20, 23, 3)) * 300 - 20).astype(np.float16), (r.standard_normal((11, 31, 3))).astype(np.float16)]
    kw, digest = LAPLACIAN_SHA256[name]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.laplacian(fn.external_source(source=lambda: xs, layout="HWC"), **kw)

    p = pipe()
    p.build()
    out = p.run()[0]
    assert np.asarray(out[0]).dtype == (np.float32 if "dtype" in kw else np.float16)
    assert hashlib.sha256(b"".join(np.asarray(out[i]).tobytes() for i in range(2))).hexdigest() == digest
