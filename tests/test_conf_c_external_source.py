"""fn.external_source checks as DALI 2.4 makes them: the source callable's signature, a batch's
type / dimensionality / layout against earlier iterations, with DALI's error types."""
from __future__ import annotations

import functools
import re
import warnings

import numpy as np
import pytest

from torch_dali import Pipeline, fn, types
from torch_dali.errors import PipelineError
from torch_dali._utils.external_source_impl import accepted_arg_count


def _pipe(**kw):
    pipe = Pipeline(2, 1, None, prefetch_queue_depth=1)
    with pipe:
        pipe.set_outputs(fn.external_source(name="es", **kw))
    return pipe


# -- the source callable's signature -------------------------------------------------------------

def test_accepted_arg_count_counts_parameters_with_their_defaults():
    class Zero:
        def __call__(self):
            return 0

    class One:
        def __call__(self, info=None):
            return 0

    def two(a, b=1):
        return 0

    assert accepted_arg_count(lambda: 0) == 0
    assert accepted_arg_count(lambda x=3: 0) == 1
    assert accepted_arg_count(Zero()) == 0 and accepted_arg_count(One()) == 1
    assert accepted_arg_count(functools.partial(two, 1)) == 1
    with pytest.raises(TypeError, match=r"`source` two has 2 parameters \(a, b"):
        accepted_arg_count(two)


@pytest.mark.parametrize("source, message", [
    (lambda *args: 0, "parameter `*args` (var-positional)"),
    (lambda a, *rest: 0, "parameter `*rest` (var-positional)"),
    (lambda **kw: 0, "parameter `**kw` (var-keyword)"),
    (lambda *, k=1: 0, "parameter `k` (keyword-only)"),
])
def test_refused_signatures_are_type_errors(source, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        _pipe(source=source, batch=False).build()


def test_a_parameter_with_a_default_gets_the_sample_info():
    pipe = _pipe(source=lambda info=None: np.array([info.idx_in_epoch]), batch=False)
    (out,) = pipe.run()
    assert out.as_tensor().flatten().tolist() == [0, 1]


# -- what the batches must keep from one iteration to the next ----------------------------------

def test_a_change_of_type_between_iterations_is_an_error():
    pipe = _pipe(source=[[np.zeros(2, np.float32)] * 2, [np.zeros(2, np.uint8)] * 2])
    pipe.run()
    with pytest.raises(PipelineError, match="this batch is uint8, the earlier ones were float"):
        pipe.run()


def test_the_type_is_remembered_across_reset():
    pipe = _pipe(source=lambda i: [np.zeros(2, np.float64 if i == 0 else np.int32)] * 2)
    pipe.run()
    pipe.reset()
    with pytest.raises(PipelineError, match="this batch is int32, the earlier ones were double"):
        pipe.run()


def test_a_change_of_dimensionality_is_an_error_unless_ndim_says_otherwise():
    data = [[np.zeros((2, 2), np.uint8)] * 2, [np.zeros(2, np.uint8)] * 2]
    pipe = _pipe(source=data)
    pipe.run()
    with pytest.raises(PipelineError, match="samples have 1 dimensions, the earlier batches' 2"):
        pipe.run()
    with pytest.raises(PipelineError, match=r"the data have 1 dimensions \(shape \(2,\)\), the `ndim` "
                                            "argument is 2"):
        p = _pipe(source=data, ndim=2)
        p.run()
        p.run()


def test_a_change_of_layout_is_an_error_but_a_first_layout_is_not():
    pipe = _pipe()
    pipe.feed_input("es", [np.zeros(1)] * 2)
    pipe.feed_input("es", [np.zeros(1)] * 2, layout="W")
    pipe.feed_input("es", [np.zeros(1)] * 2, layout="H")
    pipe.run()
    assert pipe.run()[0].layout() == "W"
    with pytest.raises(PipelineError, match="this batch's layout is 'H', the earlier batches' 'W'"):
        pipe.run()


def test_a_fed_layout_other_than_the_argument_names_both():
    pipe = _pipe(layout="H")
    pipe.feed_input("es", [np.zeros(1)] * 2, layout="W")
    with pytest.raises(PipelineError, match="fed with layout 'W', the `layout` argument is 'H'"):
        pipe.run()


def test_the_dtype_argument_names_dali_types():
    pipe = _pipe(source=[[np.zeros(2, np.float32)] * 2], dtype=types.UINT8)
    with pytest.raises(PipelineError, match=r"the data are float \(torch.float32\), the `dtype` "
                                            r"argument is uint8 \(torch.uint8\)"):
        pipe.run()


def test_layout_and_ndim_that_disagree_are_a_runtime_and_value_error():
    for kind in (RuntimeError, ValueError):
        with pytest.raises(kind, match="`layout` 'HWC' has 3 dimensions, but `ndim` is 2"):
            _pipe(layout="HWC", ndim=2).build()


# -- other messages -------------------------------------------------------------------------------

def test_unused_outputs_warning_names_the_source_and_the_indices():
    def my_long_named_source_function_so_that_no_truncation_can_hide_it_from_the_message():
        return [np.zeros(1)] * 2, [np.zeros(1)] * 2, [np.zeros(1)] * 2

    pipe = Pipeline(2, 1, None)
    with pipe:
        outs = fn.external_source(
            my_long_named_source_function_so_that_no_truncation_can_hide_it_from_the_message, num_outputs=3)
        pipe.set_outputs(outs[1])
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        pipe.build()
    text = " ".join(str(w.message) for w in got)
    assert "it_from_the_message> gives 3 outputs and its outputs at the indices 0, 2 are not used" in text


def test_feeding_an_unknown_name_is_a_key_error_naming_it():
    pipe = _pipe()
    with pytest.raises(KeyError, match="no external source named 'nope'.*external sources: es"):
        pipe.feed_input("nope", [np.zeros(1)] * 2)


def test_cycling_a_generator_object_is_a_type_error():
    def gen():
        yield [np.zeros(1)] * 2

    with pytest.raises(TypeError, match="cycle='quiet', but `source` is a generator object"):
        _pipe(source=gen(), cycle="quiet")


def test_eager_calls_with_per_sample_arguments_of_another_type_still_run():
    # eager mode feeds tensor arguments through cached external sources, which keep their first type
    import torch
    from torch_dali import eager

    x = [torch.zeros(4, 4, 3, dtype=torch.uint8)] * 2
    for dtype in (np.float32, np.float64):
        assert eager.rotate(x, angle=np.array([10.0, 20.0], dtype))[0].shape == (6, 6, 3)
