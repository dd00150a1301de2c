"""Errors keep DALI's error types and name the op, the argument and the offending values (in our own words)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from torch_dali import fn
from torch_dali.errors import ArgumentError, PipelineError
from torch_dali.pipeline import Pipeline
from error_facts import run_on


U8 = np.uint8


@pytest.mark.parametrize("make,samples,layout,pattern", [
    (lambda x: fn.reshape(x, rel_shape=[1, 1, 1]), [np.zeros((4, 5), U8)], None,
     r"Reshape.*`rel_shape` \[1\.0, 1\.0, 1\.0\].*3.*2 dimensions.*`src_dims`"),
    (lambda x: fn.reshape(x, shape=[7]), [np.zeros((4, 5), U8)], None,
     r"Reshape.*\[4, 5\] \(20 elements\).*\[7\] \(7 elements\)"),
    (lambda x: fn.reshape(x, src_dims=[0, 1], rel_shape=[1]), [np.zeros((4, 5), U8)], None,
     r"`src_dims` \[0, 1\] \(2 entries\).*`rel_shape` \[1\.0\] \(1 entries\)"),
    (lambda x: fn.reshape(x, src_dims=[0, 3]), [np.zeros((4, 5), U8)], None,
     r"`src_dims` \[0, 3\] holds 3 at position 1, out of bounds.*2 dimensions"),
    (lambda x: fn.reshape(x, rel_shape=[-1, 1]), [np.zeros((320, 0), U8)], None,
     r"`rel_shape`.*dimension 0.*0.*\[320, 0\]"),
    (lambda x: fn.squeeze(x, axes=[1]), [np.zeros((10, 10, 10), U8)], None,
     r"Squeeze.*\[1\].*\[10, 10, 10\].*100 elements.*1000"),
    (lambda x: fn.squeeze(x, axes=[1, 1]), [np.zeros((3, 1, 2), U8)], None,
     r"Squeeze.*`axes` \[1, 1\].*more than once"),
    (lambda x: fn.expand_dims(x, axes=[4]), [np.zeros((2, 3, 4), U8)], None,
     r"ExpandDims.*`axes` \[4\].*position 3.*3 dimensions"),
    (lambda x: fn.pad(x, axes=[0], align=[0]), [np.zeros((2, 3), U8)], None,
     r"Pad.*`align` \[0\].*not positive"),
    (lambda x: fn.pad(x, axes=[-4]), [np.zeros((2, 3, 4), U8)], None,
     r"Pad.*`axes`.*-4, out of range.*3-dimensional.*-3 to 2"),
    (lambda x: fn.element_extract(x, element_map=[0]), [np.zeros((4,), U8)], "F",
     r"ElementExtract.*1 dimension.*two or more"),
    (lambda x: fn.element_extract(x, element_map=[0]), [np.zeros((4, 2), U8)], "XF",
     r"ElementExtract.*'XF'.*'F'"),
    (lambda x: fn.element_extract(x, element_map=[10]), [np.zeros((6, 1), U8)], "FX",
     r"ElementExtract.*`element_map`.*10 is out of bounds.*sample 0.*6 elements"),
    (lambda x: fn.element_extract(x, element_map=[-5]), [np.zeros((6, 1), U8)], "FX",
     r"ElementExtract.*`element_map` \[-5\].*negative.*-5"),
    (lambda x: fn.one_hot(x, num_classes=4, axis_name="O"), [np.zeros((2, 3, 4), np.int32)], None,
     r"OneHot.*`axis_name`.*3 dimensions, got \"\""),
    (lambda x: fn.crop(x, crop=(4, 4), out_of_bounds_policy="error"), [np.zeros((2, 2, 3), U8)],
     "HWC", r"h=4, w=4.*out of bounds of the 2x2 image"),
    (lambda x: fn.crop_mirror_normalize(x, crop=(4, 4), out_of_bounds_policy="error"), [np.zeros((2, 2, 3), U8)],
     "HWC", r"h=4, w=4.*out of bounds of the 2x2 image"),
])
def test_runtime_errors_name_the_op_argument_and_values(make: Any, samples: list, layout: str | None, pattern: str) -> None:
    with pytest.raises(PipelineError, match=pattern):
        run_on(make, samples, layout)


@pytest.mark.parametrize("make", [lambda x: fn.zeros(shape=(2, 3), layout="HWC"),
                                  lambda x: fn.full(x, shape=(2, 3), layout="HWC")])
def test_constant_layout_mismatch_names_the_layout_and_ranks(make: Any) -> None:
    with pytest.raises((ArgumentError, PipelineError),
                       match=r"`layout` 'HWC' names 3 dimensions, the output has 2"):
        run_on(make, [np.zeros((), np.float32)])


@pytest.mark.parametrize("make", [lambda x: fn.crop(x, crop=(2, 2)),
                                  lambda x: fn.crop_mirror_normalize(x, crop=(2, 2))])
def test_declared_unsupported_layout_is_a_value_error_at_build(make: Any) -> None:
    with pytest.raises(ArgumentError, match=r'Crop.*"ABC" is not supported; it takes HWC'):
        run_on(make, [np.zeros((4, 4, 3), U8)], "ABC")


@pytest.mark.parametrize("make,samples,layout,pattern", [
    (lambda x: fn.squeeze(x, axes=[2], axis_names="Z"), [np.zeros((1, 1, 10), U8)], "XYZ",
     r"Squeeze.*both `axes` and `axis_names`"),
    (lambda x: fn.one_hot(x, num_classes=4, axis_name="CD"), [np.zeros((2, 3, 4), np.int32)], "ABC",
     r"OneHot.*`axis_name`.*'CD'"),
    (lambda x: fn.expand_dims(x, axes=[2, 0, 2], new_axis_names="AB"), [np.zeros((2, 3, 4), U8)], "XYZ",
     r"ExpandDims.*`axes` \[2, 0, 2\] adds 3.*'AB' names 2"),
    (lambda x: fn.laplacian(x, scale=1.0, normalized_kernel=True), [np.zeros((8, 8, 3), U8)], "HWC",
     r"Laplacian.*scale.*normalized_kernel"),
])
def test_build_time_argument_errors_are_also_runtime_errors(make: Any, samples: list, layout: str,
                                                             pattern: str) -> None:
    # DALI raises RuntimeError for arguments refused at build; ours stay ValueErrors too
    with pytest.raises(RuntimeError, match=pattern) as info:
        run_on(make, samples, layout)
    assert isinstance(info.value, ArgumentError)


@pytest.mark.parametrize("make,pattern", [
    (lambda x: fn.expand_dims(x, axes=[0, -1]), r"ExpandDims.*`axes` \[0, -1\].*negative"),
    (lambda x: fn.expand_dims(x, axes=[2], new_axis_names="C"),
     r"ExpandDims.*`new_axis_names`.*3-dimensional input has no layout"),
])
def test_expand_dims_argument_errors(make: Any, pattern: str) -> None:
    with pytest.raises(RuntimeError, match=pattern):
        run_on(make, [np.zeros((2, 3, 4), U8)])


@pytest.mark.parametrize("make,samples,layout,pattern", [
    (lambda x: fn.paste(x, ratio=2, fill_value=0), [np.zeros((5, 6, 7, 8), U8)], None,
     r"Paste.*sample 0 has 4 dimensions.*\(5, 6, 7, 8\)"),
    (lambda x: fn.brightness_contrast(x, brightness=2), [np.zeros((3, 4, 4), U8)], "CHW",
     r'BrightnessContrast.*"CHW" is not supported; it takes HWC'),
    (lambda x: fn.flip(x), [np.zeros((2, 3, 4, 5, 6, 7), U8)], None, r"6-dimensional input"),
])
def test_input_layout_refused_as_it_runs_is_a_value_error(make: Any, samples: list, layout: str | None,
                                                         pattern: str) -> None:
    # DALI raises ValueError for an input layout / rank the op does not take; ours names the op too
    with pytest.raises(ValueError, match=pattern) as info:
        run_on(make, samples, layout)
    assert isinstance(info.value, PipelineError) and "defined at" in str(info.value)


def test_constant_only_argument_given_a_data_node() -> None:
    with pytest.raises(TypeError, match=r"ExpandDims.*`axes`.*DataNode.*constant"):
        run_on(lambda x: fn.expand_dims(x, axes=fn.external_source(lambda: [np.int32([0])])),
             [np.zeros((2, 3), U8)])


def test_an_output_that_is_not_data_is_refused_at_build_with_its_index_and_type() -> None:
    """DALI takes anything in set_outputs and refuses a non-output (a string, an object) at build(),
    where DALI code catches it; a later set_outputs with real outputs clears the refusal."""
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    pipe.set_outputs(np.zeros(2, U8), "test")
    for step in (pipe.serialize, pipe.build):  # not a graph-less pipeline's error from serialize
        with pytest.raises(TypeError, match=r"pipeline output 1 is a str \(<class 'str'>\)"):
            step()
    pipe.set_outputs(np.zeros(2, U8))
    pipe.build()
    assert pipe.run()[0].at(0).tolist() == [0, 0]
