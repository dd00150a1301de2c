"""3D linear sampling (warp_affine, rotate on DHWC volumes) lerps as DALI 2.4's 3D sampler does:
x as s0*(1-qx) + s1*qx, y the same way, z as s0 + (s1-s0)*qz. torch_dali lerped y in the
z form (its 2D rule); float volumes then differed by one ulp in ~2% of the values (3d_transforms
notebook: 407,199 of 20,480,000 warp_affine values, max 1.2e-7). Expected: DALI 2.4 CPU's outputs
for a seeded volume (sha256 of the bytes)."""
from __future__ import annotations

import hashlib

import numpy as np

from torch_dali import fn, pipeline_def, types

_RNG = np.random.default_rng(21)
VOL = _RNG.random((7, 9, 11, 2), dtype=np.float32)
VOL8 = (_RNG.random((7, 9, 11, 1)) * 255).astype(np.uint8)
M = (0.9, 0.31, 0.05, -1.3, -0.2, 1.1, 0.17, 0.7, 0.03, 0.12, 0.95, 0.4)
DALI_SHA = ["b9682b2f64b8e9c2c2ef1ccb8ba3f4946089c7e1c1ded3e95fc666364766938d",  # warp_affine, float
            "1d3df7e5b7beb8eec9e8318f8462b5db2e56a804740dbc6ab4f6455752ea5f92",  # warp_affine, uint8
            "dbd3b1440e83b5457536363133a336dc26d545ced8b6d9f4cd03b79408a001b9"]  # rotate, float


def test_3d_linear_warp_and_rotate_match_dali_bit_for_bit():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        v = fn.external_source(source=lambda: [VOL], layout="DHWC", batch=True, dtype=types.FLOAT)
        u = fn.external_source(source=lambda: [VOL8], layout="DHWC", batch=True, dtype=types.UINT8)
        w = fn.warp_affine(v, size=(6, 10, 12), matrix=M, interp_type=types.INTERP_LINEAR, fill_value=0)
        w8 = fn.warp_affine(u, size=(6, 10, 12), matrix=M, interp_type=types.INTERP_LINEAR, fill_value=3)
        r = fn.rotate(v, angle=33.0, axis=(0.3, -0.5, 0.8), interp_type=types.INTERP_LINEAR, fill_value=0)
        return w, w8, r

    pipe = p()
    pipe.build()
    outs = [np.ascontiguousarray(np.array(o[0])) for o in pipe.run()]
    assert [o.shape for o in outs] == [(6, 10, 12, 2), (6, 10, 12, 1), (11, 15, 17, 2)]
    assert [hashlib.sha256(o.tobytes()).hexdigest() for o in outs] == DALI_SHA
