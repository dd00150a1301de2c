"""Nearest-neighbour resize of volumes: DALI 2.4 steps the depth positions by adding the scale in
float32, as it steps rows, so a position that is a whole number in exact arithmetic can land just
below it and take the slice before (measured with DALI 2.4's CPU backend, 2026-12-05: 12 slices
read backwards onto 5, output slice 2 sits at 12 - 2.5 * 2.4 = 6 and DALI reads slice 5)."""
from __future__ import annotations

import hashlib

import numpy as np

from torch_dali import fn, pipeline_def, types

VOL = (np.arange(12 * 20 * 16 * 2) % 251).astype(np.uint8).reshape(12, 20, 16, 2)
FLIPPED_DEPTH_NN = "8376dac37765ce47443e6e49b071c9c92e71886a92eac96b284040e0d21f261c"


def _run(body):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return body(fn.external_source(source=lambda: [VOL], batch=True, layout="DHWC"))

    p = pipe()
    p.build()
    return np.asarray(p.run()[0].at(0))


def test_depth_read_backwards_takes_dalis_slice_at_the_tie():
    out = _run(lambda x: fn.resize(x, size=[5, 30, 7], roi_start=[12, 0, 0], roi_end=[0, 20, 16],
                                   interp_type=types.INTERP_NN))
    assert out.shape == (5, 30, 7, 2)
    one = _run(lambda x: fn.resize(x, size=[12, 30, 7], interp_type=types.INTERP_NN))  # depth kept
    np.testing.assert_array_equal(out[2], one[5])
    assert hashlib.sha256(out.tobytes()).hexdigest() == FLIPPED_DEPTH_NN
