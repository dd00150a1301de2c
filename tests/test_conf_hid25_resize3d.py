"""fn.resize of volumes (DHWC, CDHW and sequences of them), as DALI 2.4's CPU backend does it
(measured; DALI's 3D-transforms notebook resizes an MRI volume along depth with `resize_z`):

* three spatial axes, sized by `resize_z` / `resize_y` / `resize_x`, a 3-value `size`,
  `resize_shorter` / `resize_longer`, with DALI's modes (unspecified axes keep the geometric mean of
  the given scales); a 2-value `size` on a volume is an error;
* separable resampling with the 2-D filters: each depth slice as a 2-D resize, then depth.
The literal outputs below were produced by DALI 2.4 (CPU) for the same inputs."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types

X = (np.arange(3 * 4 * 5).reshape(3, 4, 5, 1) * 37 % 251).astype(np.uint8)
RNG = np.random.default_rng(0)
VOL = RNG.integers(0, 256, (6, 8, 10, 2)).astype(np.uint8)


def _resize(x, layout, **kw):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.resize(fn.external_source(source=lambda: [x], layout=layout, batch=True), **kw)

    p = pipe()
    p.build()
    out = p.run()[0]
    return np.asarray(out.at(0)), out.layout()


DALI_VALUES = [
    (dict(size=(5, 3, 2)),
     [[[67, 100], [154, 97], [104, 159]], [[96, 100], [159, 102], [98, 154]], [[140, 101], [167, 109], [91, 146]],
      [[132, 93], [159, 131], [83, 155]], [[127, 88], [154, 146], [78, 160]]]),
    (dict(resize_z=2, interp_type=types.INTERP_CUBIC, mode="stretch"),
     [[[79, 33, 70, 107, 144], [181, 218, 87, 41, 78], [115, 152, 189, 226, 1], [49, 86, 123, 160, 197]],
      [[240, 15, 52, 89, 126], [163, 200, 248, 23, 60], [97, 134, 171, 208, 162], [31, 68, 105, 142, 179]]]),
    (dict(size=(4, 2, 3), interp_type=types.INTERP_NN),
     [[[185, 8, 82], [53, 127, 201]], [[172, 246, 69], [40, 114, 188]], [[172, 246, 69], [40, 114, 188]],
      [[159, 233, 56], [27, 101, 175]]]),
]


@pytest.mark.parametrize("kw,expected", DALI_VALUES)
def test_values_match_dali(kw, expected):
    y, layout = _resize(X, "DHWC", **kw)
    assert layout == "DHWC" and y.dtype == np.uint8
    np.testing.assert_array_equal(y[..., 0], np.array(expected, np.uint8))


@pytest.mark.parametrize("layout", ["DHWC", "CDHW", "FDHWC", "FCDHW"])
@pytest.mark.parametrize("kw,dhw", [(dict(resize_z=9, resize_x=5), (9, 7, 5)), (dict(size=(9, 4, 13)), (9, 4, 13)),
                                    (dict(resize_shorter=7), (7, 9, 12))])
def test_output_shapes_as_dali(layout, kw, dhw):
    base = {"D": 6, "H": 8, "W": 10, "C": 2, "F": 2}
    x = np.zeros([base[a] for a in layout], np.uint8)
    y, out_layout = _resize(x, layout, **kw)
    want = dict(base, D=dhw[0], H=dhw[1], W=dhw[2])
    assert out_layout == layout and y.shape == tuple(want[a] for a in layout)


def test_a_two_value_size_is_refused_for_a_volume():
    with pytest.raises(Exception, match="size"):
        _resize(VOL, "DHWC", size=(4, 5))


def test_slices_resize_as_images_when_depth_is_kept():
    y, _ = _resize(VOL, "DHWC", size=(6, 5, 7))
    for z in range(VOL.shape[0]):
        img, _ = _resize(VOL[z], "HWC", size=(5, 7))
        np.testing.assert_array_equal(y[z], img)


def test_depth_resamples_as_the_height_of_an_image():
    """A volume one pixel high resized along depth and width equals the (depth, width) image resized."""
    x = np.ascontiguousarray(VOL[:, :1].astype(np.float32))
    y, _ = _resize(x, "DHWC", size=(11, 1, 4), interp_type=types.INTERP_LINEAR)
    img, _ = _resize(np.ascontiguousarray(x[:, 0]), "HWC", size=(11, 4), interp_type=types.INTERP_LINEAR)
    np.testing.assert_allclose(y[:, 0], img, atol=1e-4)


def test_cdhw_equals_dhwc():
    a, _ = _resize(VOL, "DHWC", size=(4, 5, 13), interp_type=types.INTERP_LANCZOS3)
    b, _ = _resize(np.ascontiguousarray(np.moveaxis(VOL, 3, 0)), "CDHW", size=(4, 5, 13), interp_type=types.INTERP_LANCZOS3)
    np.testing.assert_array_equal(np.moveaxis(b, 0, 3), a)
