"""transforms.* matrices bit for bit as DALI 2.4's CPU backend builds them.

DALI keeps every transform in float32: the centre translation is A (-c) + c (scale: c (1 - s)),
3D axes are divided by their length, crop's translation is to_start - scale * from_start, and
an input matrix composes as float32 products summed left to right. `combine` (each next input on
the left; reverse_order: on the right) is composed in float64 and rounded once, on purpose: DALI's
float32 chain drifts with the chain's length (conformance/on_purpose.md). Composing in float64 and
rounding once left the last bit of 8 of these 8 matrices off (found running the warp notebook
against DALI: 1 ulp in a centred rotation's translation moved 0.01-0.05% of a warp's pixels by 1).
Expected values: DALI 2.4 CPU, as float32 bit patterns.
"""
from __future__ import annotations

import numpy as np

from torch_dali import fn, pipeline_def

DALI_BITS = [
    [0x3f5db3d7, 0xbf000000, 0x42982766, 0x3f000000, 0x3f5db3d7, 0xc22fb134],
    [0x3fa66666, 0x0, 0xc11fd708, 0x0, 0x3f333333, 0x406851ed],
    [0x3f800000, 0x3e348f0f, 0xc1294620, 0x3db32d41, 0x3f800000, 0xc08bfb60],
    [0x3f36115f, 0x3f0ad768, 0x3ee50038, 0x412e252d, 0xbf23c32a, 0x3f435bea, 0x3dbc1516, 0x3fa37a00,
     0xbe9540fc, 0xbeb3eeaa, 0x3f63c19a, 0xc05221a0],
    [0x3e2ad48f, 0x0, 0xc01008a4, 0x0, 0x3f67e037, 0xc0c763cb],
    [0x3f901b4b, 0xbeb33333, 0x4207a435, 0x3f266666, 0x3f1b3116, 0xc2037f5c],
    [0x3f96cf42, 0x3e977765, 0xc27097a3, 0xbf0ca5b9, 0x3f22690d, 0x42b43e3a],
    [0x3f96cf42, 0x3f0ca5b9, 0xc29cd031, 0xbe977765, 0x3f22690d, 0x4275d3bd],
]


COMBINE = 5


@pipeline_def(batch_size=1, num_threads=1, device_id=None)
def _matrices():
    rot = fn.transforms.rotation(angle=30.0, center=[120.0, 120.0])
    sc = fn.transforms.scale(scale=[1.3, 0.7], center=[33.3, 12.1])
    return (rot, sc,
            fn.transforms.shear(angles=[10.0, 5.0], center=[50.0, 60.0]),
            fn.transforms.rotation(angle=-47.0, axis=[0.3, -0.5, 0.8], center=[10.5, -20.25, 7.0]),
            fn.transforms.crop(from_start=[3.3, 7.1], from_end=[211.9, 97.3], to_start=[-1.7, 0.2],
                               to_end=[33.1, 81.9]),
            fn.transforms.combine(sc, rot, fn.transforms.translation(offset=[-31.7, 12.9])),
            fn.transforms.rotation(sc, angle=-25.0, center=[160.0, 160.0]),
            fn.transforms.rotation(sc, angle=-25.0, center=[160.0, 160.0], reverse_order=True))


def test_transform_matrices_equal_dali_bits():
    pipe = _matrices()
    pipe.build()
    outs = pipe.run()
    for k, (out, want) in enumerate(zip(outs, DALI_BITS)):
        got = np.ascontiguousarray(np.asarray(out[0]), dtype=np.float32).view(np.uint32).ravel()
        if k == COMBINE:  # composed in float64 and rounded once: within an ulp of DALI's float32 chain
            ulps = np.abs(got.view(np.int32).astype(np.int64) - np.array(want, np.uint32).view(np.int32))
            assert ulps.max() <= 1, (k, [hex(int(x)) for x in got])
        else:
            assert got.tolist() == want, (k, [hex(int(x)) for x in got])


def test_warp_with_centred_rotation_equals_warp_with_dali_matrix():
    """The centred rotation feeds warp_affine the same matrix as DALI's bits written out."""
    img = np.random.default_rng(0).integers(0, 256, (60, 70, 3), dtype=np.uint8)
    want = np.array(DALI_BITS[0], dtype=np.uint32).view(np.float32).tolist()

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def warp():
        x = fn.external_source(lambda: [img], layout="HWC")
        return (fn.warp_affine(x, fn.transforms.rotation(angle=30.0, center=[120.0, 120.0]), inverse_map=False),
                fn.warp_affine(x, matrix=want, inverse_map=False))

    pipe = warp()
    pipe.build()
    a, b = pipe.run()
    np.testing.assert_array_equal(np.asarray(a[0]), np.asarray(b[0]))
