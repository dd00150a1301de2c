"""crop_mirror_normalize's fill values, as DALI 2.4 uses them (outputs measured under DALI 2.4 on
these inputs): pixels outside the image take the fill values converted to an integer output type
as C's static_cast does (truncated, low bits kept: 300 -> 44 for int8, 2.7 -> 2), not rounded and
saturated; pad_output's added channel holds the fill values under out_of_bounds_policy="pad" (one
value for every channel, or the last of one per output channel) and zeros under any other policy;
depth slices outside a volume take the fill values as they are (not normalized)."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types

IMG = (np.arange(2 * 3 * 3).reshape(2, 3, 3) * 7 % 256).astype(np.uint8)
VOL = (np.arange(2 * 2 * 2 * 3).reshape(2, 2, 2, 3) * 5).astype(np.uint8)

CASES = {
    "u8_fill9_pad": (IMG, "HWC", dict(crop=(3, 4), out_of_bounds_policy="pad", fill_values=9, pad_output=True,
                                      dtype=types.UINT8)),
    "i8_fill4_pad": (IMG, "HWC", dict(crop=(3, 4), out_of_bounds_policy="pad", fill_values=(300, -1, 2.5, -3.5),
                                      pad_output=True, dtype=types.INT8, output_layout="HWC")),
    "f32_fill4_nopolicy": (IMG, "HWC", dict(crop=(2, 2), fill_values=(5, 6, 7, 8), pad_output=True, mean=[1, 2, 3],
                                            std=[2, 2, 2])),
    "u8_chw_fill2.7_pad": (np.ascontiguousarray(IMG.transpose(2, 0, 1)), "CHW",
                           dict(crop=(3, 4), out_of_bounds_policy="pad", fill_values=2.7, pad_output=True,
                                dtype=types.UINT8)),
    "f32_vol_depth_pad": (VOL, "DHWC", dict(crop=(3, 2, 2), crop_pos_z=0.0, out_of_bounds_policy="pad", fill_values=9,
                                            mean=[1, 2, 3], std=[2, 2, 2], output_layout="DHWC")),
}

# DALI 2.4's outputs for CASES
EXPECTED = {
    "u8_fill9_pad": ("uint8", (4, 3, 4),
        [[[9, 9, 9, 9], [9, 0, 21, 42], [9, 63, 84, 105]], [[9, 9, 9, 9], [9, 7, 28, 49], [9, 70, 91, 112]],
         [[9, 9, 9, 9], [9, 14, 35, 56], [9, 77, 98, 119]], [[9, 9, 9, 9], [9, 9, 9, 9], [9, 9, 9, 9]]]),
    "i8_fill4_pad": ("int8", (3, 4, 4),
        [[[44, -1, 2, -3], [44, -1, 2, -3], [44, -1, 2, -3], [44, -1, 2, -3]],
         [[44, -1, 2, -3], [0, 7, 14, -3], [21, 28, 35, -3], [42, 49, 56, -3]],
         [[44, -1, 2, -3], [63, 70, 77, -3], [84, 91, 98, -3], [105, 112, 119, -3]]]),
    "f32_fill4_nopolicy": ("float32", (4, 2, 2),
        [[[10.0, 20.5], [41.5, 52.0]], [[13.0, 23.5], [44.5, 55.0]], [[16.0, 26.5], [47.5, 58.0]],
         [[0.0, 0.0], [0.0, 0.0]]]),
    "u8_chw_fill2.7_pad": ("uint8", (4, 3, 4),
        [[[2, 2, 2, 2], [2, 0, 21, 42], [2, 63, 84, 105]], [[2, 2, 2, 2], [2, 7, 28, 49], [2, 70, 91, 112]],
         [[2, 2, 2, 2], [2, 14, 35, 56], [2, 77, 98, 119]], [[2, 2, 2, 2], [2, 2, 2, 2], [2, 2, 2, 2]]]),
    "f32_vol_depth_pad": ("float32", (3, 2, 2, 3),
        [[[[-0.5, 1.5, 3.5], [7.0, 9.0, 11.0]], [[14.5, 16.5, 18.5], [22.0, 24.0, 26.0]]],
         [[[29.5, 31.5, 33.5], [37.0, 39.0, 41.0]], [[44.5, 46.5, 48.5], [52.0, 54.0, 56.0]]],
         [[[9.0, 9.0, 9.0], [9.0, 9.0, 9.0]], [[9.0, 9.0, 9.0], [9.0, 9.0, 9.0]]]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fill_values_as_dali(name):
    x, layout, kw = CASES[name]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.crop_mirror_normalize(fn.external_source(source=lambda: [x], layout=layout), **kw)

    p = pipe()
    p.build()
    out = np.asarray(p.run()[0][0])
    dtype, shape, values = EXPECTED[name]
    assert out.dtype == np.dtype(dtype) and out.shape == shape
    np.testing.assert_array_equal(out, np.array(values, dtype=dtype))


def test_dense_batch_path_pads_with_the_fill_under_pad_policy():
    # two same-size images with windows inside them take the batched gather; its added channel
    # follows the same rule (DALI 2.4: 9 under "pad", 0 otherwise; the image's channels the same)
    for policy, fill in (("pad", 9), ("trim_to_shape", 0), ("error", 0)):
        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def pipe():
            x = fn.external_source(source=lambda: [IMG, IMG], layout="HWC")
            return fn.crop_mirror_normalize(x, crop=(2, 2), crop_pos_x=0.0, crop_pos_y=0.0, fill_values=9,
                                            pad_output=True, dtype=types.UINT8, out_of_bounds_policy=policy)

        p = pipe()
        p.build()
        out = p.run()[0]
        for i in range(2):
            y = np.asarray(out[i])
            assert y.shape == (4, 2, 2) and (y[3] == fill).all(), policy
            np.testing.assert_array_equal(y[:3], IMG[:2, :2].transpose(2, 0, 1))
