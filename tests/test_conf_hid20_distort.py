"""water's default frequencies and the rounding of water's and sphere's source points, as DALI 2.4's
CPU backend has them (measured there; found running DALI's augmentation gallery notebook):

* `freq_x` / `freq_y` default to 2*pi/128 (DALI's schema prints them as 0.049087, but a pipeline
  given 0.049087 explicitly differs from one given nothing, and one given 2*pi/128 does not);
* the source points are computed in float32 with correctly rounded sqrt/sin/cos (C's sqrtf,
  sinf, cosf): with nearest sampling one ulp decides which pixel is read. On 256x383 DALI's sphere
  reads (x=161, y=151) at (y=179, x=123), on 414x447 (357, 77) at (65, 370); water's row 0 at x=32
  reads above the image (fill), because cos(2*pi/128 * 32) is -4.4e-8 in float32."""
from __future__ import annotations

import math

import numpy as np

from torch_dali import fn, pipeline_def, types


def _coords(h, w):
    """uint8 HWC image whose pixel tells where it came from: (x % 256, y % 256, 16 * (x // 256) + y // 256)."""
    yy, xx = np.mgrid[0:h, 0:w]
    return np.stack([xx % 256, yy % 256, xx // 256 * 16 + yy // 256], -1).astype(np.uint8)


def _where(px):
    return int(px[0]) + (int(px[2]) // 16) * 256, int(px[1]) + (int(px[2]) % 16) * 256


def _run(op, imgs, **kw):
    @pipeline_def(batch_size=len(imgs), num_threads=1, device_id=None)
    def pipe():
        return op(fn.external_source(source=lambda: list(imgs), batch=True, layout="HWC"), **kw)

    p = pipe()
    p.build()
    out = p.run()[0]
    return [np.asarray(out.at(i)) for i in range(len(out))]


def _sphere_reference(h, w):
    """Source pixel (x, y) of every output pixel, float32 as DALI computes it (-1: outside)."""
    f = np.float32
    mx, my, d = f(w * 0.5), f(h * 0.5), f(int(max(w * 0.5, h * 0.5)))
    yy, xx = np.mgrid[0:h, 0:w].astype(f)
    ty, tx = yy + f(0.5) - my, xx + f(0.5) - mx
    r = np.sqrt(tx * tx + ty * ty) / d  # numpy's float32 sqrt is correctly rounded
    ix, iy = np.floor(mx + r * tx).astype(int), np.floor(my + r * ty).astype(int)
    inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
    return np.where(inside, ix, -1), np.where(inside, iy, -1)


def test_water_default_frequency_is_two_pi_over_128():
    img = _coords(40, 70)
    default = _run(fn.water, [img])[0]
    np.testing.assert_array_equal(default, _run(fn.water, [img], freq_x=2 * math.pi / 128, freq_y=2 * math.pi / 128)[0])
    assert not np.array_equal(default, _run(fn.water, [img], freq_x=0.049087, freq_y=0.049087)[0])
    assert default[0, 32].tolist() == [0, 0, 0]  # read above the image: the fill value
    assert _where(default[3, 32]) == (33, 2)  # one row up, as in DALI


def test_sphere_reads_the_pixels_dali_reads():
    sizes = [(256, 383), (414, 447), (101, 64)]
    outs = _run(fn.sphere, [_coords(h, w) for h, w in sizes])
    assert _where(outs[0][179, 123]) == (161, 151) and _where(outs[0][179, 259]) == (221, 151)
    assert _where(outs[1][65, 370]) == (357, 77) and _where(outs[1][348, 370]) == (357, 336)
    for (h, w), out in zip(sizes, outs):
        rx, ry = _sphere_reference(h, w)
        got = out[..., 0].astype(int) + (out[..., 2].astype(int) // 16) * 256
        gy = out[..., 1].astype(int) + (out[..., 2].astype(int) % 16) * 256
        inside = rx >= 0
        np.testing.assert_array_equal(got[inside], rx[inside])
        np.testing.assert_array_equal(gy[inside], ry[inside])
        assert (out[~inside] == 0).all()


def test_linear_water_matches_the_float64_rounded_points():
    """Linear sampling reads the same points: a smooth image warped with and without an explicit
    default gives the same bytes, and the result stays within the input's range."""
    img = (np.add.outer(np.arange(30), np.arange(50))[..., None] * [1, 2, 3] % 256).astype(np.uint8)
    a = _run(fn.water, [img], interp_type=types.INTERP_LINEAR)[0]
    b = _run(fn.water, [img], interp_type=types.INTERP_LINEAR, freq_x=2 * math.pi / 128, freq_y=2 * math.pi / 128)[0]
    np.testing.assert_array_equal(a, b)
