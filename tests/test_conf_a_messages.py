"""Errors carry DALI's wording (DALI's own tests match it with regexes), besides naming our op/argument."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from torch_dali import fn
from torch_dali.errors import ArgumentError, PipelineError
from torch_dali.pipeline import Pipeline


def _run(make: Callable[[Any], Any], samples: list[np.ndarray], layout: str | None = None) -> None:
    pipe = Pipeline(batch_size=len(samples), num_threads=1, device_id=None, seed=1)
    with pipe:
        src = fn.external_source(lambda: samples, layout=layout)
        pipe.set_outputs(make(src))
    pipe.run()


U8 = np.uint8


@pytest.mark.parametrize("make,samples,layout,pattern", [
    (lambda x: fn.reshape(x, rel_shape=[1, 1, 1]), [np.zeros((4, 5), U8)], None,
     r"`rel_shape` has more elements \(3\) than.*dimensions in the input \(2\).*use `src_dims`"),
    (lambda x: fn.reshape(x, shape=[7]), [np.zeros((4, 5), U8)], None,
     r"The volume of the new shape should match the one of the original shape\. Requested a shape with 7 "
     r"elements but the original shape has 20 elements\."),
    (lambda x: fn.reshape(x, src_dims=[0, 1], rel_shape=[1]), [np.zeros((4, 5), U8)], None,
     r"`src_dims` and `rel_shape` have different lengths: 2 vs 1"),
    (lambda x: fn.reshape(x, src_dims=[0, 3]), [np.zeros((4, 5), U8)], None, r"is out of bounds"),
    (lambda x: fn.reshape(x, rel_shape=[-1, 1]), [np.zeros((320, 0), U8)], None,
     r"Cannot infer.*dimension 0 when the volume.*is 0\. Input shape:.*320 x 0"),
    (lambda x: fn.squeeze(x, axes=[1]), [np.zeros((10, 10, 10), U8)], None,
     r"Requested a shape with 100 elements but the original shape has 1000 elements\."),
    (lambda x: fn.squeeze(x, axes=[1, 1]), [np.zeros((3, 1, 2), U8)], None,
     r"Specified at least twice same dimension to remove\."),
    (lambda x: fn.expand_dims(x, axes=[4]), [np.zeros((2, 3, 4), U8)], None,
     r"Data has not enough dimensions to add new axes at specified indices\."),
    (lambda x: fn.pad(x, axes=[0], align=[0]), [np.zeros((2, 3), U8)], None,
     r"Values of `align` argument must be positive\."),
    (lambda x: fn.pad(x, axes=[-4]), [np.zeros((2, 3, 4), U8)], None,
     r"Axis -4 out of range\. Expected range is \[-3, 2\] for a 3D input"),
    (lambda x: fn.element_extract(x, element_map=[0]), [np.zeros((4,), U8)], "F",
     r"Input must have at least two dimensions - outermost for sequence and at least one for data elements\."),
    (lambda x: fn.element_extract(x, element_map=[0]), [np.zeros((4, 2), U8)], "XF",
     r"Input layout must describe a sequence - it must start with 'F', got 'XF' instead\."),
    (lambda x: fn.element_extract(x, element_map=[10]), [np.zeros((6, 1), U8)], "FX",
     r"Index `10` from `element_map` is out of bounds for sample with sequence length equal `6`"),
    (lambda x: fn.element_extract(x, element_map=[-5]), [np.zeros((6, 1), U8)], "FX",
     r"Negative indices in `element_map` are not allowed, found: -5"),
    (lambda x: fn.one_hot(x, num_classes=4, axis_name="O"), [np.zeros((2, 3, 4), np.int32)], None,
     r"Input layout mismatch"),
    (lambda x: fn.crop(x, crop=(4, 4), out_of_bounds_policy="error"), [np.zeros((2, 2, 3), U8)],
     "HWC", r"Slice can't be placed out of bounds with current policy\."),
    (lambda x: fn.crop_mirror_normalize(x, crop=(4, 4), out_of_bounds_policy="error"), [np.zeros((2, 2, 3), U8)],
     "HWC", r"Slice can't be placed out of bounds with current policy\."),
])
def test_runtime_errors_carry_dalis_wording(make: Any, samples: list, layout: str | None, pattern: str) -> None:
    with pytest.raises(PipelineError, match=pattern):
        _run(make, samples, layout)


@pytest.mark.parametrize("make", [lambda x: fn.zeros(shape=(2, 3), layout="HWC"),
                                  lambda x: fn.full(x, shape=(2, 3), layout="HWC")])
def test_constant_layout_mismatch_wording(make: Any) -> None:
    with pytest.raises((ArgumentError, PipelineError),
                       match=r"Layout 'HWC' has 3 dimensions but output shape has 2"):
        _run(make, [np.zeros((), np.float32)])


@pytest.mark.parametrize("make", [lambda x: fn.crop(x, crop=(2, 2)),
                                  lambda x: fn.crop_mirror_normalize(x, crop=(2, 2))])
def test_declared_unsupported_layout_is_a_value_error_at_build(make: Any) -> None:
    with pytest.raises(ArgumentError, match=r'The layout "ABC" does not match any of the allowed layouts'):
        _run(make, [np.zeros((4, 4, 3), U8)], "ABC")


@pytest.mark.parametrize("make,samples,layout,pattern", [
    (lambda x: fn.squeeze(x, axes=[2], axis_names="Z"), [np.zeros((1, 1, 10), U8)], "XYZ",
     r"Provided both ``axes`` and ``axis_names`` arguments"),
    (lambda x: fn.one_hot(x, num_classes=4, axis_name="CD"), [np.zeros((2, 3, 4), np.int32)], "ABC",
     r"Unsupported axis_name value"),
    (lambda x: fn.expand_dims(x, axes=[2, 0, 2], new_axis_names="AB"), [np.zeros((2, 3, 4), U8)], "XYZ",
     r"Specified 3 new dimensions, but layout contains only 2 new dimension names"),
    (lambda x: fn.laplacian(x, scale=1.0, normalized_kernel=True), [np.zeros((8, 8, 3), U8)], "HWC",
     r"Parameter ``scale`` cannot be specified when ``normalized_kernel`` is set to True"),
])
def test_build_time_argument_errors_are_also_runtime_errors(make: Any, samples: list, layout: str,
                                                             pattern: str) -> None:
    # DALI raises RuntimeError for arguments refused at build; ours stay ValueErrors too
    with pytest.raises(RuntimeError, match=pattern) as info:
        _run(make, samples, layout)
    assert isinstance(info.value, ArgumentError)


@pytest.mark.parametrize("make,pattern", [
    (lambda x: fn.expand_dims(x, axes=[0, -1]), r"Axis value can't be negative"),
    (lambda x: fn.expand_dims(x, axes=[2], new_axis_names="C"),
     r"Specifying ``new_axis_names`` requires an input with a proper layout\."),
])
def test_expand_dims_wording(make: Any, pattern: str) -> None:
    with pytest.raises(RuntimeError, match=pattern):
        _run(make, [np.zeros((2, 3, 4), U8)])


@pytest.mark.parametrize("make,samples,layout,pattern", [
    (lambda x: fn.paste(x, ratio=2, fill_value=0), [np.zeros((5, 6, 7, 8), U8)], None,
     r"The number of dimensions 4 does not match any of the allowed layouts"),
    (lambda x: fn.brightness_contrast(x, brightness=2), [np.zeros((3, 4, 4), U8)], "CHW",
     r'The layout "CHW" does not match any of the allowed layouts'),
    (lambda x: fn.flip(x), [np.zeros((2, 3, 4, 5, 6, 7), U8)], None, r"6-dimensional input"),
])
def test_input_layout_refused_as_it_runs_is_a_value_error(make: Any, samples: list, layout: str | None,
                                                         pattern: str) -> None:
    # DALI raises ValueError for an input layout / rank the op does not take; ours names the op too
    with pytest.raises(ValueError, match=pattern) as info:
        _run(make, samples, layout)
    assert isinstance(info.value, PipelineError) and "defined at" in str(info.value)


def test_constant_only_argument_given_a_data_node_wording() -> None:
    with pytest.raises(TypeError, match=r"should not be a 'DataNode'"):
        _run(lambda x: fn.expand_dims(x, axes=fn.external_source(lambda: [np.int32([0])])),
             [np.zeros((2, 3), U8)])
