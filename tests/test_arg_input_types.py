"""Per-sample argument data of another element type than the argument's, or several values where it
takes one, fail when the pipeline runs (a RuntimeError), as in DALI 2.4: it reads argument inputs as
exactly float32 (number arguments) or int32 (integer ones), and makes NumPy arrays of several values
constant nodes, float64 as float32 and int64 as int32 (each row measured with DALI 2.4's CPU
backend). Before, such data was converted and taken."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import eager, fn, pipeline_def, types


def _es(a):
    return fn.external_source(source=lambda: [a.copy(), a.copy()])


CASES = {  # name -> (op call, DALI 2.4's output shape of sample 0, or None where it fails at run)
    "resize_size_int64_array": (lambda x: fn.resize(x, size=np.array([4, 4], np.int64)), None),
    "resize_size_float64_array": (lambda x: fn.resize(x, size=np.array([4, 4], np.float64)), (4, 4, 3)),
    "crop_crop_int64_array": (lambda x: fn.crop(x, crop=np.array([4, 4], np.int64)), None),
    "crop_crop_float32_array": (lambda x: fn.crop(x, crop=np.array([4, 4], np.float32)), (4, 4, 3)),
    "flip_horizontal_pair": (lambda x: fn.flip(x, horizontal=np.array([1, 0], np.int32)), None),
    "rotate_angle_float64_node": (lambda x: fn.rotate(x, angle=_es(np.array(30.0))), None),
    "rotate_angle_float32_node": (lambda x: fn.rotate(x, angle=_es(np.array(30.0, np.float32))), (12, 14, 3)),
    "flip_horizontal_int64_node": (lambda x: fn.flip(x, horizontal=_es(np.array(1))), None),
    "flip_horizontal_float32_node": (lambda x: fn.flip(x, horizontal=_es(np.array(1, np.float32))), None),
    "flip_horizontal_int32_one_value": (lambda x: fn.flip(x, horizontal=_es(np.array([1], np.int32))), (8, 10, 3)),
    # interpolation arguments take interpolation-type data only, not int32 numbers
    "resize_interp_type_int32_node": (lambda x: fn.resize(x, size=[4, 4], interp_type=_es(np.array(1, np.int32))), None),
    "resize_interp_type_enum_node": (lambda x: fn.resize(x, size=[4, 4], interp_type=fn.cast(
        _es(np.array(1, np.int32)), dtype=types.INTERP_TYPE)), (4, 4, 3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_argument_data_types(name):
    call, shape = CASES[name]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: [np.ones((8, 10, 3), np.uint8)] * 2, layout="HWC")
        return call(x)
    p = pipe()  # defined and built in both: the data is checked when the op reads it
    p.build()
    if shape is None:
        with pytest.raises(RuntimeError):
            p.run()
    else:
        assert tuple(p.run()[0][0].shape) == shape


def test_eager_rows_of_any_number_type():
    """torch_dali's eager API takes per-sample rows of any number type (read as the op's type)."""
    imgs = [np.ones((8, 10, 3), np.uint8)] * 2
    out = eager.flip(imgs, horizontal=np.array([1, 0], np.int64))
    assert [tuple(t.shape) for t in out] == [(8, 10, 3)] * 2


@pytest.mark.parametrize("call", [
    lambda x: fn.rotate(x, angle=10.0, size=_es(np.array([6, 7], np.int32))),
    lambda x: fn.warp_affine(x, matrix=[1.0, 0, 0, 0, 1, 0], size=np.array([6, 7], np.int64)),
])
def test_arguments_dali_converts_itself(call):
    """rotate's and warp_affine's `size` take integer data in DALI 2.4 (measured; its own
    test_rotate.py feeds int32 sizes per frame)."""
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: [np.ones((8, 10, 3), np.uint8)] * 2, layout="HWC")
        return call(x)
    assert tuple(pipe().run()[0][0].shape) == (6, 7, 3)


def test_one_value_arrays_are_values_not_argument_inputs():
    """DALI 2.4 reads an array of shape (1,) as one value, whatever its type: resize(size=np.array([2],
    np.int32)) gives a 2x2 image (measured), as size=2 does."""
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: [np.ones((8, 10, 3), np.uint8)] * 2, layout="HWC")
        return fn.resize(x, size=np.array([2], np.int32)), fn.gaussian_blur(x, sigma=np.array([1], np.int32))
    out = pipe().run()
    assert tuple(out[0][0].shape) == (2, 2, 3) and tuple(out[1][0].shape) == (8, 10, 3)
