"""Image ops on batches holding an empty sample (an extent of 0), as DALI 2.4 runs them (shapes and
values measured under DALI 2.4; found by conformance/differential, run of seed 6): before, these
failed inside torch (reshape of 0 elements, index_select on an empty axis, an index out of bounds)
or refused ("the crop size must be positive", "cannot sample an empty image without a fill value",
"cannot sample outside an empty axis"). A warp of an empty image gives its fill, or zeros; a crop
or slice padded past an empty image gives the fill values; filters and equalize give it back."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types

FULL = (np.arange(2 * 2 * 3).reshape(2, 2, 3) * 11 % 256).astype(np.uint8)


def _run(empty, layout, op, **kw):
    c = empty.shape[layout.index("C")]
    other = FULL[..., :c] if layout == "HWC" else np.ascontiguousarray(np.moveaxis(FULL, -1, 0)[:c])
    batch = [empty, other.astype(empty.dtype)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return getattr(fn, op)(fn.external_source(source=lambda: batch, batch=True, layout=layout), **kw)
    p = pipe()
    p.build()
    out, = p.run()
    return np.asarray(out.at(0)), np.asarray(out.at(1)).shape


E = np.zeros((0, 2, 3), np.uint8)
CASES = [  # (empty sample, layout, op, args, DALI 2.4's output for it: shape, every value)
    (E, "HWC", "rotate", dict(angle=45.0, interp_type=types.INTERP_NN), (2, 2, 3), 0),
    (E, "HWC", "rotate", dict(angle=45.0, fill_value=7.0), (2, 2, 3), 7),
    (E, "HWC", "rotate", dict(angle=0.0, fill_value=7.0), (0, 2, 3), None),
    (np.zeros((0, 3, 3), np.uint8), "HWC", "warp_affine", dict(matrix=[0, 1, 0, 1, 0, 0]), (0, 3, 3), None),
    (np.zeros((0, 3, 1), np.uint8), "HWC", "warp_affine", dict(matrix=[0, 1, 0, 1, 0, 0], size=[3, 2]),
     (3, 2, 1), 0),  # DALI's 3-channel output holds stray values here (65, then 33: measured); 1 channel is 0
    (np.zeros((0, 3, 3), np.uint8), "HWC", "warp_affine",
     dict(matrix=[0, 1, 0, 1, 0, 0], size=[3, 2], fill_value=5.0), (3, 2, 3), 5),
    (np.zeros((0, 2, 1), np.uint8), "HWC", "equalize", {}, (0, 2, 1), None),  # 3 channels: DALI refuses
    (np.zeros((3, 2, 0), np.int16), "CHW", "gaussian_blur", dict(sigma=[1.7, 1.1]), (3, 2, 0), None),
    (np.zeros((1, 0, 3), np.uint8), "HWC", "laplacian", dict(window_size=3), (1, 0, 3), None),
    (E, "HWC", "crop", {}, (0, 2, 3), None),
    (E, "HWC", "crop_mirror_normalize", dict(mean=[1.0], std=[2.0]), (3, 0, 2), None),
    (E, "HWC", "crop_mirror_normalize", dict(crop=(2, 2), out_of_bounds_policy="pad", fill_values=5.0,
                                             mean=[1.0], std=[2.0]), (3, 2, 2), 5),
    (np.zeros((3, 12, 0), np.float32), "CHW", "crop_mirror_normalize",
     dict(crop=(5.094, 10.425), out_of_bounds_policy="pad", mean=[79.56], output_layout="CHW"), (3, 5, 10), 0),
    (np.zeros((3, 0, 2), np.float32), "CHW", "slice",
     dict(axis_names="H", start=[1], shape=[2], out_of_bounds_policy="pad", fill_values=4.0), (3, 2, 2), 4),
]


@pytest.mark.parametrize("x,layout,op,kw,shape,value", CASES, ids=[f"{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_empty_sample(x, layout, op, kw, shape, value):
    got, other_shape = _run(x, layout, op, **kw)
    assert got.shape == shape
    if value is not None:
        assert (got == value).all()
    assert 0 not in other_shape


@pytest.mark.parametrize("op,kw", [("brightness_contrast", dict(brightness=1.061, contrast=1.063)),
                                   ("hsv", dict(hue=30.0)), ("saturation", dict(saturation=0.5))])
def test_color_ops_empty_frames(op, kw):
    # a sequence sample whose frames have no pixels (F, 8, 0, 3): DALI 2.4 gives it back empty
    # (measured, brightness_contrast:1100008); the frames were reshaped with -1 and failed
    seq = [np.zeros((2, 8, 0, 3), np.uint8), np.full((1, 2, 2, 3), 100, np.uint8)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return getattr(fn, op)(fn.external_source(source=lambda: seq, batch=True, layout="FHWC"), **kw)
    p = pipe()
    p.build()
    out, = p.run()
    assert np.asarray(out.at(0)).shape == (2, 8, 0, 3)
    assert np.asarray(out.at(1)).shape == (1, 2, 2, 3)


@pytest.mark.parametrize("shape,kw,want", [
    ((1, 0), dict(axes=[0, 1], scales=[0.357, 2.631]), (0, 0)),
    ((3, 0), dict(axes=[0, 1], scales=[0.357, 2.631]), (1, 0)),
    ((1, 0), dict(axes=[0], scales=[0.357]), (0, 0)),
    ((1, 0), dict(axes=[0], scales=[0.357], size_rounding="ceil"), (1, 0)),
])
def test_tensor_resize_empty_sample_sizes(shape, kw, want):
    # DALI 2.4 (measured, tensor_resize:1200137): an empty sample's sizes are rounded without the
    # floor of 1 that a sample with elements gets ((1, 2) by 0.357 keeps 1 row)
    batch = [np.zeros(shape, np.int16), np.ones((2, 3), np.int16)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.tensor_resize(fn.external_source(source=lambda: batch, batch=True), **kw)
    p = pipe()
    p.build()
    out, = p.run()
    assert np.asarray(out.at(0)).shape == want
