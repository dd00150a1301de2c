"""Which exception a refused argument value raises, as DALI 2.4's Python API raises it (each row
measured with DALI 2.4's CPU backend: `python -m conformance.arg_sweep`, then one script per row).

DALI converts a constant with Python's constructor for the argument's type, so a value that does
not convert raises that constructor's error (ValueError, TypeError, OverflowError); an empty list
where one value is expected, a missing required argument and a converted value the op rejects are
RuntimeErrors; an array of several values given to an argument without per-sample inputs is a
TypeError. Before, every such refusal here was a TypeError and such arrays were taken as lists."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types

CASES = {  # name -> (op call, the builtin exception DALI 2.4 raises)
    "transpose_perm_array": (lambda x: fn.transpose(x, perm=np.array([1, 0, 2])), TypeError),
    "transpose_perm_tensor": (lambda x: fn.transpose(x, perm=torch.tensor([1, 0, 2])), TypeError),
    "resize_max_size_array": (lambda x: fn.resize(x, size=[4, 4], max_size=np.array([3.0, 3.0])), TypeError),
    "cast_dtype_word": (lambda x: fn.cast(x, dtype="abc"), ValueError),
    "flip_horizontal_word": (lambda x: fn.flip(x, horizontal="abc"), ValueError),
    "flip_horizontal_inf": (lambda x: fn.flip(x, horizontal=float("inf")), OverflowError),
    "flip_horizontal_nan": (lambda x: fn.flip(x, horizontal=float("nan")), ValueError),
    "flip_horizontal_empty": (lambda x: fn.flip(x, horizontal=[]), RuntimeError),
    "flip_horizontal_list": (lambda x: fn.flip(x, horizontal=[1, 0]), TypeError),
    "cast_dtype_none": (lambda x: fn.cast(x, dtype=None), RuntimeError),  # None is "not given"
    "resize_mode_number": (lambda x: fn.resize(x, size=[4, 4], mode=5), RuntimeError),
    "hsv_hue_word": (lambda x: fn.hsv(x, hue="a lot"), ValueError),
    "rotate_angle_list": (lambda x: fn.rotate(x, angle=[1.0, 2.0]), TypeError),
    "crop_crop_word": (lambda x: fn.crop(x, crop=["a", "b"]), ValueError),
    # an array of several values for a per-sample argument is an argument input in DALI, refused at run
    "resize_interp_type_array": (lambda x: fn.resize(x, size=[4, 4], interp_type=np.array([1, 2], np.int32)),
                                 RuntimeError),
}


def _run(call):
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(source=lambda: [np.ones((8, 10, 3), np.uint8)] * 2, layout="HWC")
        return call(x)
    p = pipe()
    p.build()
    return p.run()


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_with_dalis_exception_class(name):
    call, exc = CASES[name]
    with pytest.raises(exc):
        _run(call)


def test_one_value_arrays_still_taken():
    """A NumPy array of one value (shape () or (1,)) is that value in DALI, not an argument input."""
    out = _run(lambda x: fn.transpose(x, perm=[1, 0, 2], transpose_layout=np.array(True)))
    assert tuple(out[0][0].shape) == (10, 8, 3)
    out = _run(lambda x: fn.crop(x, crop=(4, 5), crop_pos_x=np.array([0.0]), crop_pos_y=np.array(1.0)))
    assert tuple(out[0][0].shape) == (4, 5, 3)


@pytest.mark.parametrize("value", [2, -1, 0.5, np.float64(0.5), np.int64(3), np.array(2), torch.tensor(7)])
def test_any_number_is_a_flag(value):
    """DALI 2.4 reads a number given to a flag as `bool(value)`: `transpose_layout=-1` transposes the
    layout as True does (measured: an `HWC` sample comes out `WHC`); before, only 0 and 1 were taken."""
    out = _run(lambda x: fn.transpose(x, perm=[1, 0, 2], transpose_layout=value))
    assert out[0].layout() == "WHC"
    out = _run(lambda x: fn.transpose(x, perm=[1, 0, 2], transpose_layout=0.0))
    assert out[0].layout() == "HWC"


@pytest.mark.parametrize("call", [
    lambda: fn.zeros(shape=[2**31]), lambda: fn.ones(shape=2**31), lambda: fn.random.uniform(shape=[2, 2**31]),
    lambda: fn.random.normal(shape=[1, 2**32]),
    lambda: fn.one_hot(fn.external_source(source=lambda: [np.array([1], np.int32)] * 2), num_classes=2**31),
])
def test_integers_beyond_int32_refused_before_allocating(call):
    """DALI 2.4 holds these arguments as int32: 2**31 wraps negative and the op fails when it runs (a
    RuntimeError, measured). Here the call is refused (a RuntimeError too) before the pipeline ever
    tries a 2**31-element sample; before, definition succeeded and running allocated 8+ GB."""
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return call()
    with pytest.raises(RuntimeError, match="range of the integer type"):
        pipe()


def test_wide_integer_arguments_keep_their_range():
    out = _run(lambda x: fn.constant(idata=[2**40], shape=[1], dtype=types.INT64))
    assert int(out[0][0][0]) == 2**40


@pytest.mark.parametrize("kw,exc", [
    (dict(preserve="NODE"), TypeError), (dict(preserve=[]), RuntimeError),
    (dict(bytes_per_sample_hint="abc"), ValueError), (dict(bytes_per_sample_hint=torch.float32), TypeError),
    (dict(bytes_per_sample_hint=["a"]), ValueError), (dict(bytes_per_sample_hint="NODE"), TypeError),
    (dict(preserve="x"), None), (dict(bytes_per_sample_hint=[100]), None), (dict(bytes_per_sample_hint=2.5), None),
])
def test_common_arguments_checked_as_dali_checks_them(kw, exc):
    """`preserve` and `bytes_per_sample_hint` (taken by every op, unused here) are refused where
    DALI 2.4 refuses them, with its exception (measured on fn.copy); before, anything was taken."""
    def call(x):
        return fn.copy(x, **{k: fn.random.uniform() if v == "NODE" else v for k, v in kw.items()})
    if exc is None:
        _run(call)
    else:
        with pytest.raises(exc):
            _run(call)
