"""tensor_resize resamples the axes DALI 2.4 resamples: the samples' axes grown to at least two
by a leading axis of extent 1, then axes at the front and back that no sample changes dropped
while more than two remain; that block goes through one 2-D (or 3-D) resize, so which axis is
resampled as rows and which as columns, and which axes a Gaussian filters, are DALI's. Float
arguments are float32, as in DALI. Reference values from DALI 2.4's CPU backend (measured with
its venv, 2026-12-05)."""
from __future__ import annotations

import hashlib

import numpy as np

from torch_dali import fn, pipeline_def, types


def _run(xs, body):
    @pipeline_def(batch_size=len(xs), num_threads=1, device_id=None)
    def pipe():
        return body(fn.external_source(source=lambda: list(xs), batch=True))

    p = pipe()
    p.build()
    out = p.run()[0]
    return [np.asarray(out.at(i)) for i in range(len(out))]


RAMP = np.arange(90, dtype=np.float32)
# DALI 2.4: a 1-D tensor is resampled as columns; (49 + 0.5) * 90 / 55 == 81 exactly, and
# DALI's column formula keeps it (the row formula, stepping by sums, gave 80)
NN_COLS = [0, 2, 4, 5, 7, 9, 10, 12, 13, 15, 17, 18, 20, 22, 23, 25, 27, 28, 30, 31, 33, 35, 36, 38, 40,
           41, 43, 45, 46, 48, 49, 51, 53, 54, 56, 58, 59, 61, 63, 64, 66, 67, 69, 71, 72, 74, 76, 77, 79,
           81, 82, 84, 85, 87, 89]
# with subpixel_scale the region is scaled from float32(0.61) * 90 (index 27 reads 44)
NN_SUB = [0, 2, 4, 5, 7, 8, 10, 12, 13, 15, 17, 18, 20, 22, 23, 25, 26, 28, 30, 31, 33, 35, 36, 38, 40,
          41, 43, 44, 46, 48, 49, 51, 53, 54, 56, 58, 59, 61, 63, 64, 66, 67, 69, 71, 72, 74, 76, 77, 79,
          81, 82, 84, 85, 87, 89]


def test_nearest_on_a_column_axis_at_exact_ties():
    nn = types.INTERP_NN
    (cols,) = _run([RAMP], lambda x: fn.tensor_resize(x, scales=[0.61], interp_type=nn, subpixel_scale=False))
    (sub,) = _run([RAMP], lambda x: fn.tensor_resize(x, scales=[0.61], interp_type=nn))
    assert cols.astype(int).tolist() == NN_COLS
    assert sub.astype(int).tolist() == NN_SUB
    # the same axis as the last of a 2-D tensor
    (two,) = _run([np.tile(RAMP, (3, 1))], lambda x: fn.tensor_resize(x, scales=[0.61], axes=[1], interp_type=nn,
                                                                       subpixel_scale=False))
    assert (two.astype(int) == NN_COLS).all()


def test_nearest_image_digest():
    img = (np.arange(20 * 90 * 3) % 251).astype(np.uint8).reshape(20, 90, 3)
    (out,) = _run([img], lambda x: fn.tensor_resize(x, scales=[0.43, 0.61], axes=[0, 1], interp_type=types.INTERP_NN))
    assert out.shape == (9, 55, 3) and out.dtype == np.uint8
    assert hashlib.sha256(out.tobytes()).hexdigest() == \
        "6a8361ef56faf0debcba8255fbd8bbe078dfef72c6d26c2bb5633972aadda58a"


CUBE = np.arange(60, dtype=np.float32).reshape(3, 4, 5) ** 2 % 17
# scale 1 everywhere: DALI drops axis 0 (frames) and filters axes 1 and 2 only
G_ALL1 = [[[0.1596, 1.0752, 4.2855, 8.9843, 15.8224], [8.0157, 2.2316, 14.8414, 13.0867, 12.9303],
           [14.5716, 2.0877, 7.9977, 15.5886, 9.0327], [4.1407, 1.0023, 0.1641, 1.2495, 4.0392]],
          [[9.1956, 15.8054, 8.0157, 2.1102, 14.6425], [13.0517, 12.9618, 14.5716, 2.2126, 7.7505],
           [15.6075, 8.8234, 4.0392, 1.3205, 0.1641], [1.3205, 4.1766, 9.0327, 15.6075, 7.9977]],
          [[2.2316, 14.8414, 13.0517, 12.9303, 14.7684], [2.0877, 7.9977, 15.6075, 9.0327, 4.1766],
           [1.2495, 0.1596, 1.0752, 4.1407, 8.9843], [15.5886, 7.7505, 2.2126, 14.5716, 12.9618]]]
# axis 0 grown: the block is axes 0 and 1, axis 2 (channels) is not filtered; frame 1 of 6
G_AX0_FRAME1 = [[1.2081, 2.7975, 4.6661, 8.2289, 15.8183], [8.7133, 3.3027, 14.8655, 11.7342, 12.3235],
                [14.9128, 2.8079, 7.4072, 14.0065, 7.8651], [3.8488, 1.3842, 1.1888, 2.9935, 4.5389]]


def test_gaussian_filters_the_block_only():
    g = types.INTERP_GAUSSIAN
    (all1,) = _run([CUBE], lambda x: fn.tensor_resize(x, scales=[1, 1, 1], interp_type=g))
    np.testing.assert_allclose(all1, G_ALL1, atol=2e-4)
    (ax0,) = _run([CUBE], lambda x: fn.tensor_resize(x, scales=[2], axes=[0], interp_type=g))
    assert ax0.shape == (6, 4, 5)
    np.testing.assert_allclose(ax0[1], G_AX0_FRAME1, atol=2e-4)
