"""Per-sample argument inputs where DALI 2.4's schema allows them (found by DALI's test_slice.py)."""
from __future__ import annotations

import numpy as np

from torch_dali import fn, pipeline_def, types

_X = np.arange(4 * 6 * 3, dtype=np.int32).reshape(4, 6, 3)


@pipeline_def(batch_size=3, num_threads=1, device_id=None)
def _slices():
    data = fn.external_source(source=lambda: [_X] * 3, layout="HWC")
    axes = fn.external_source(source=lambda: [np.int32([0]), np.int32([1]), np.int32([-1])])
    return (fn.slice(data, start=[1], shape=[2], axes=axes),
            fn.slice(data, 1, 2, axes=types.Constant(1, device="cpu")))


def test_slice_axes_per_sample():
    per_sample, constant = _slices().run()
    # DALI 2.4's shapes and sums for the same program
    assert [(tuple(np.array(t).shape), int(np.array(t).sum())) for t in per_sample] == \
        [((2, 6, 3), 1278), ((4, 2, 3), 780), ((4, 6, 2), 1728)]
    np.testing.assert_array_equal(np.array(per_sample[1]), _X[:, 1:3])
    assert constant.shape() == [(4, 2, 3)] * 3


def test_uniform_range_is_half_open_in_float32():
    from torch_dali.pipeline import Pipeline
    hi = np.nextafter(np.float32(10.0), np.float32(11.0))
    pipe = Pipeline(batch_size=4, device_id=None, num_threads=1, seed=123456)
    with pipe:
        pipe.set_outputs(fn.random.uniform(range=[np.float32(10.0), hi], shape=[10000]),
                         fn.random.uniform(range=[np.float32(10.0), hi]))
    arrays, scalars = pipe.run()
    # DALI 2.4: every value is 10.0 (the only float32 in [10, nextafter(10)))
    assert all((np.array(t) == np.float32(10.0)).all() for t in arrays)
    assert all(float(np.array(t)) == 10.0 for t in scalars)


def test_constant_data_convert_as_dali_casts():
    from torch_dali import ops
    from torch_dali.pipeline import Pipeline

    consts = [ops.Constant(idata=(-1, 1, 300, 3, 4), dtype=types.UINT8),
              ops.Constant(fdata=(-1.5, 2.5, 300.7, -0.5), dtype=types.UINT8),
              ops.Constant(fdata=(-1.5, 2.5, 1e10, -0.5), dtype=types.INT32),
              ops.Constant(idata=(-1, 2, 0), dtype=types.BOOL)]
    pipe = Pipeline(1, 1, None)
    pipe.set_outputs(*[c() for c in consts])
    got = [np.array(o.at(0)).tolist() for o in pipe.run()]
    # DALI 2.4: saturation, rounding half away from zero, != 0 for BOOL
    assert got == [[0, 1, 255, 3, 4], [0, 3, 255, 0], [-2, 3, 2147483647, -1], [True, True, False]]


def test_random_crop_generator_of_an_empty_shape():
    from torch_dali.pipeline import Pipeline
    shapes = [np.int64([0, 0]), np.int64([-1, 0]), np.int64([0, 5]), np.int64([1, 1])]
    pipe = Pipeline(4, 1, None, seed=5)
    with pipe:
        pipe.set_outputs(*fn.random_crop_generator(fn.external_source(source=lambda: shapes)))
    anchors, sizes = pipe.run()
    # DALI 2.4: the empty window at (0, 0); a 1x1 image gives its one pixel
    assert [np.array(a).tolist() for a in anchors] == [[0, 0]] * 4
    assert [np.array(s).tolist() for s in sizes] == [[0, 0], [0, 0], [0, 0], [1, 1]]
