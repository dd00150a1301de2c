"""Pipeline-level semantics DALI 2.4 has (found by DALI's test_pipeline.py / test_functional_api.py):
output descriptions checked when serializing, serialize()'s argument checked, an argument given
under two names refused, NumPy's second type names fed, one-element arrays as scalars."""
from __future__ import annotations

import numpy as np
import pytest

import torch_dali.fn as fn
from torch_dali import pipeline_def, types
from torch_dali.errors import PipelineError
from torch_dali.pipeline import Pipeline


@pipeline_def(batch_size=1, num_threads=1, device_id=None)
def _two(**_):
    x = fn.random.uniform(range=(0, 1), shape=(2,), seed=1)
    return x, fn.cast(x, dtype=types.UINT8)


@pytest.mark.parametrize("descs", [{"output_dtype": [types.FLOAT]}, {"output_ndim": [1]},
                                   {"output_dtype": [None, None], "output_ndim": [None]}])
def test_serialize_checks_the_output_descriptions(descs):
    with pytest.raises(PipelineError, match="Lengths of `output_(dtype|ndim)`"):
        _two(**descs).serialize()  # DALI 2.4: RuntimeError "Lengths ... do not match"


def test_serialize_with_matching_descriptions_round_trips():
    text = _two(output_dtype=[types.FLOAT, types.UINT8], output_ndim=1).serialize()
    pipe = Pipeline.deserialize(text)
    assert pipe.output_dtype() == [types.FLOAT, types.UINT8] and pipe.output_ndim() == [1, 1]


@pytest.mark.parametrize("arg", ["any_string", 42])
def test_serialize_refuses_a_define_graph_that_is_not_callable(arg):
    with pytest.raises(TypeError, match="define_graph.*callable"):
        _two().serialize(arg)


def test_an_argument_and_its_alias_together_are_a_type_error():
    with pytest.raises(TypeError, match="unexpected `dtype` beside `output_dtype`"):
        fn.crop_mirror_normalize(fn.random.uniform(shape=(4, 4, 3)), output_dtype=types.FLOAT,
                                 dtype=types.FLOAT, crop=(2, 2))


@pytest.mark.parametrize("t", [np.ulonglong, np.longlong, np.uint64, np.intc, np.short, np.bool_, int])
def test_numpy_second_type_names_feed(t):
    data = np.array([[1, 1], [1, 1]], dtype=t)
    pipe = Pipeline(2, 1, None)
    pipe.set_outputs(fn.external_source(name="x"))
    pipe.feed_input("x", data)
    out = pipe.run()[0].at(0)
    assert out.dtype.str == data.dtype.str  # DALI 2.4 keeps every one of these types


def test_a_one_element_array_is_a_scalar_argument():
    img = np.arange(12, dtype=np.uint8).reshape(3, 4, 1)
    pipe = Pipeline(1, 1, None)
    with pipe:
        pipe.set_outputs(fn.rotate(fn.external_source(source=[[img]], cycle=True, layout="HWC"),
                                   angle=np.array([90])))
    assert pipe.run()[0].shape() == [(4, 3, 1)]  # as DALI 2.4; a list [90] stays an error there and here
    with pytest.raises(TypeError):
        fn.rotate(fn.random.uniform(shape=(3, 4, 1)), angle=[90])


def test_a_bad_output_dtype_in_yaml_is_refused():
    from torch_dali.errors import SerializationError
    text = _two(output_dtype=types.FLOAT).serialize().replace("[FLOAT, FLOAT]", "[FLOATY, null]", 1)
    with pytest.raises(SerializationError, match="output_dtype.*type names"):
        Pipeline.deserialize(text)
