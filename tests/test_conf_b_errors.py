"""Errors raised as DALI 2.4 raises them for the same inputs (error type, where), in our own words:
each test checks the type and the facts the message names (values, sample, argument)."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from torch_dali import Pipeline, fn, ops, pipeline_def, types


def _choice(*args, **kwargs):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.random.choice(*args, **kwargs)
    pipe().run()


def _raises(kind, text):
    return pytest.raises(kind, match=re.escape(text))


@pytest.mark.parametrize("args,kwargs,text", [
    ((1,), {"p": 1.5}, "probabilities must be in [0, 1], got 1.5 for sample 0 at index 0"),
    ((np.array([1, 2]),), {"p": [-0.5, 1.5]}, "probabilities must be in [0, 1], got -0.5 for sample 0 at index 0"),
    ((2,), {"p": 0.25}, "the probabilities `p` of sample 0 sum to 0.5, not 1.0"),
    ((np.array([1, 2]),), {"p": [0.6, 0.6]}, "the probabilities `p` of sample 0 sum to 1.2, not 1.0"),
    ((-5,), {}, "expected a positive number of elements to choose from, got -5 for sample 0"),
    ((0,), {}, "expected a positive number of elements to choose from, got 0 for sample 0"),
    ((5.0,), {}, "a scalar `a` is the number of choices and must be an integer (uint8, uint16, uint32, uint64, "
                 "int8, int16, int32, int64), got float"),
    ((True,), {}, "must be an integer (uint8, uint16, uint32, uint64, int8, int16, int32, int64), got bool"),
    ((types.INTERP_CUBIC,), {}, "must be an integer (uint8, uint16, uint32, uint64, int8, int16, int32, int64), got "
                                "DALIInterpType"),
    ((5,), {"p": np.array([0.25, 0.5, 0.25])}, "`p` has 3 probabilities, `a` has 5 elements (sample 0)"),
])
def test_choice_errors(args, kwargs, text):
    with _raises(RuntimeError, text):
        _choice(*args, **kwargs)


@pytest.mark.parametrize("axes,text", [
    ([4], "`axes` [4] reach past the output's last position 3 (the input has 3 dimensions, 1 are added)"),
    ([5, 0], "`axes` [5, 0] reach past the output's last position 4"),
    ([0, -1], "`axes` [0, -1] holds a negative position"),
    ([1, 1], "`axes` names an output position twice: [1, 1]"),
])
def test_expand_dims_errors(axes, text):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.expand_dims(types.Constant(np.zeros((10, 20, 30), np.float32)), axes=axes)
    with _raises(RuntimeError, text):
        pipe().run()


@pytest.mark.parametrize("axes,names,layout,text", [
    ([2, 0, 2], "AB", "XYZ", "`axes` [2, 0, 2] adds 3 dimensions, `new_axis_names` 'AB' names 2"),
    ([3, 0], "ABC", "XYZ", "`axes` [3, 0] adds 2 dimensions, `new_axis_names` 'ABC' names 3"),
    ([2], "C", None, "`new_axis_names` is given, but this 3-dimensional input has no layout"),
])
def test_expand_dims_name_errors(axes, names, layout, text):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(lambda: [np.zeros((10, 20, 30), np.float32)], layout=layout)
        return fn.expand_dims(x, axes=axes, new_axis_names=names)
    with _raises(RuntimeError, text):
        pipe().run()


def test_generator_cycle():
    def gen():
        yield [np.zeros(1, np.float32)]
    with _raises(TypeError, "`source` is a generator object, which cannot be restarted to cycle; pass the "
                            "generator function itself"):
        fn.external_source(gen(), cycle=True)


def test_feed_input_unknown_source():
    class P(Pipeline):
        def __init__(self):
            super().__init__(3, 1, None)
            self.a, self.b = ops.ExternalSource(), ops.ExternalSource()

        def define_graph(self):
            self.x, self.y = self.a(), self.b()
            return [self.x]

        def iter_setup(self):
            self.feed_input(self.x, np.zeros((3, 4, 5)))
            self.feed_input(self.y, np.zeros((3, 4, 5)))  # not part of the pipeline

    with pytest.raises(KeyError, match=r"no external source named '__ExternalSource_\d+' in this pipeline.*"
                                       r"external sources: __ExternalSource_\d+"):
        P().run()


@pytest.mark.parametrize("source", [lambda: iter([np.array(1)]), lambda: [np.array(1)],
                                    lambda: (lambda: np.array(42))])
def test_uncaptured_source_warning(source):
    src = source()

    @pipeline_def(batch_size=1, num_threads=1, device_id=None, enable_checkpointing=True)
    def pipe():
        return fn.external_source(source=src, batch=False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        pipe().build()
    assert any(issubclass(x.category, RuntimeWarning) and "does not capture the state" in str(x.message)
               and "will not restore its position" in str(x.message) for x in w)


def test_legacy_alias_names():
    # DALI's deprecated aliases are named as called (its test_coverage lists ops by __name__)
    assert fn.caffe_reader.__name__ == "caffe_reader" and fn.readers.caffe.__name__ == "caffe"
    assert fn.image_decoder.__name__ == "image_decoder" and fn.transform_translation.__name__ == "transform_translation"


@pytest.mark.parametrize("make,text", [
    (lambda x: fn.expand_dims(x, axes=types.Constant([2], device="cpu")),
     "ExpandDims: `axes` was given a DataNode (a per-sample input), but it takes only a constant value (a list "
     "of integers)"),
    (lambda x: fn.cast(x, dtype=fn.random.uniform()),
     "`dtype` was given a DataNode (a per-sample input), but it takes only a constant value (a data type"),
])
def test_data_node_for_a_constant_argument(make, text):
    # a TypeError, as DALI raises it, when the op is called
    with _raises(TypeError, text):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def pipe():
            return make(fn.external_source(lambda: [np.zeros((2, 3), np.float32)]))
        pipe()
