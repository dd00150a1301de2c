"""Errors that carry DALI's own sentence (what DALI code and its tests match on), then our detail.
Each expected sentence is DALI 2.4's message for the same input (measured)."""
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


@pytest.mark.parametrize("args,kwargs,sentence", [
    ((1,), {"p": 1.5}, "Probabilities must be in range [0, 1], but got: 1.5 for sample: 0 at index 0."),
    ((np.array([1, 2]),), {"p": [-0.5, 1.5]},
     "Probabilities must be in range [0, 1], but got: -0.5 for sample: 0 at index 0."),
    ((2,), {"p": 0.25}, "Sum of probabilities must be 1.0, but got 0.5 for sample: 0."),
    ((np.array([1, 2]),), {"p": [0.6, 0.6]}, "Sum of probabilities must be 1.0, but got 1.2 for sample: 0."),
    ((-5,), {}, "Expected positive number of elements for sampling, got: -5 for sample: 0."),
    ((0,), {}, "Expected positive number of elements for sampling, got: 0 for sample: 0."),
    ((5.0,), {}, "Data type float is not supported for 0D inputs. Supported types are: uint8, uint16, uint32, "
                 "uint64, int8, int16, int32, int64"),
    ((True,), {}, "Data type bool is not supported for 0D inputs."),
    ((types.INTERP_CUBIC,), {}, "Data type DALIInterpType is not supported for 0D inputs."),
    ((5,), {"p": np.array([0.25, 0.5, 0.25])}, 'Unexpected shape for argument "p". Expected {5}, but got {3}'),
])
def test_choice_errors(args, kwargs, sentence):
    with pytest.raises(RuntimeError, match=re.escape(sentence)):
        _choice(*args, **kwargs)


@pytest.mark.parametrize("axes,sentence", [
    ([4], "Data has not enough dimensions to add new axes at specified indices. `axes` [4]"),
    ([5, 0], "Data has not enough dimensions to add new axes at specified indices."),
    ([0, -1], "Axis value can't be negative"),
    ([1, 1], "Duplicate axis index found"),
])
def test_expand_dims_errors(axes, sentence):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.expand_dims(types.Constant(np.zeros((10, 20, 30), np.float32)), axes=axes)
    with pytest.raises(RuntimeError, match=re.escape(sentence)):
        pipe().run()


@pytest.mark.parametrize("axes,names,layout,sentence", [
    ([2, 0, 2], "AB", "XYZ", "Specified 3 new dimensions, but layout contains only 2 new dimension names"),
    ([3, 0], "ABC", "XYZ", "Specified 2 new dimensions, but layout contains only 3 new dimension names"),
    ([2], "C", None, "Specifying ``new_axis_names`` requires an input with a proper layout."),
])
def test_expand_dims_name_errors(axes, names, layout, sentence):
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        x = fn.external_source(lambda: [np.zeros((10, 20, 30), np.float32)], layout=layout)
        return fn.expand_dims(x, axes=axes, new_axis_names=names)
    with pytest.raises(RuntimeError, match=re.escape(sentence)):
        pipe().run()


def test_generator_cycle():
    def gen():
        yield [np.zeros(1, np.float32)]
    with pytest.raises(TypeError, match=re.escape(
            "Cannot cycle through a generator - if the generator is a result of calling a generator function, "
            "pass that function instead as `source`.")):
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

    with pytest.raises(KeyError, match=r'Could not find an input operator with name "__ExternalSource_\d+".*'
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
    assert any("DALI doesn't capture state of such 'source'." in str(x.message)
               and "will not restore its position" in str(x.message) for x in w)


def test_legacy_alias_names():
    # DALI's deprecated aliases are named as called (its test_coverage lists ops by __name__)
    assert fn.caffe_reader.__name__ == "caffe_reader" and fn.readers.caffe.__name__ == "caffe"
    assert fn.image_decoder.__name__ == "image_decoder" and fn.transform_translation.__name__ == "transform_translation"


@pytest.mark.parametrize("make,sentence", [
    (lambda x: fn.expand_dims(x, axes=types.Constant([2], device="cpu")),
     "The argument `axes` for operator `fn.expand_dims` should not be a 'DataNode' but a 'int or list of int'."),
    (lambda x: fn.cast(x, dtype=fn.random.uniform()),
     "should not be a 'DataNode' but a ':class:`nvidia.dali.types.DALIDataType`'."),
])
def test_data_node_for_a_constant_argument(make, sentence):
    # DALI's TypeError (its ops/__init__.py _check_arg_input), raised when the op is called
    with pytest.raises(TypeError, match=re.escape(sentence)):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def pipe():
            return make(fn.external_source(lambda: [np.zeros((2, 3), np.float32)]))
        pipe()
