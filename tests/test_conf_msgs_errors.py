"""Errors raised where and as DALI 2.4 raises them (error type), in our own words, with the facts
checked: squeeze, reshape, random.beta, scalar arguments and external_source."""
from __future__ import annotations

import re
import warnings
from typing import Any, Callable

import numpy as np
import pytest

from torch_dali import fn, types
from torch_dali.pipeline import Pipeline
from error_facts import raises_with, run_on

U8 = np.uint8


@pytest.mark.parametrize("make,shape,layout,facts", [
    (lambda x: fn.squeeze(x, axes=[1, 1]), (3, 1, 2), None,
     ("`axes` [1, 1] names a dimension to remove more than once",)),
    (lambda x: fn.squeeze(x, axes=[1]), (10, 10, 10), None,
     ("cannot remove dimensions [1] of a sample of shape [10, 10, 10]", "hold 100 elements", "holds 1000")),
    (lambda x: fn.squeeze(x, axes=[2, 1]), (100, 0, 0), None,
     ("cannot remove dimensions [1, 2]", "hold 100 elements", "holds 0")),
    (lambda x: fn.squeeze(x, axis_names="W"), (1, 1, 10), "XYZ", ("the input layout \"XYZ\" has no axis 'W'",)),
    (lambda x: fn.reshape(x, rel_shape=[1, -1, 1]), (4, 5), None,
     ("`rel_shape` [1.0, -1.0, 1.0] has 3 extents for an input of 2 dimensions", "`src_dims`")),
    (lambda x: fn.reshape(x, src_dims=[2, 0, 1], rel_shape=[1, -1]), (1, 2, 3), None,
     ("`src_dims` [2, 0, 1] (3 entries) and `rel_shape` [1.0, -1.0] (2 entries)",)),
    (lambda x: fn.reshape(x, src_dims=[0, 1, 3]), (1, 2, 3), None,
     ("`src_dims` [0, 1, 3] holds 3 at position 2, out of bounds for an input of 3 dimensions", "0 to 2", "-1")),
    (lambda x: fn.reshape(x, rel_shape=[-1, 1]), (320, 0), None,
     ("`rel_shape` [-1.0, 1.0]: the negative extent at dimension 0 cannot be worked out", "input shape [320, 0]")),
    (lambda x: fn.reshape(x, src_dims=[0, -1, 1], rel_shape=[1, -1, 1]), (320, 0), None,
     ("the negative extent at dimension 1 of a 3-dimensional output", "from a 2-dimensional input", "`src_dims`")),
    (lambda x: fn.reshape(x, src_dims=[2, 0]), (20, 10, 20), None,
     ("shape [20, 10, 20] (4000 elements) to [20, 20] (400 elements)", "`src_dims`")),
    (lambda x: fn.reshape(x, shape=[7]), (4, 5), None,
     ("shape [4, 5] (20 elements) to [7] (7 elements)", "size in bytes")),
    (lambda x: fn.reshape(x, shape=[3, -1]), (4, 5), None,
     ("`shape` [3, -1]", "20 elements, not a multiple of 3", "size in bytes")),
    (lambda x: fn.reshape(x, shape=[-1, -1]), (4, 5), None, ("`shape` [-1, -1] has 2 negative extents",)),
    (lambda x: fn.reshape(x, shape=[20], layout="AB"), (4, 5), None,
     ("layout 'AB' has 2 dimensions, the output has 1",)),
])
def test_shape_op_errors_as_they_run(make: Any, shape: tuple, layout: str | None, facts: tuple) -> None:
    with raises_with(RuntimeError, *facts):
        run_on(make, [np.zeros(shape, U8)], layout)


@pytest.mark.parametrize("make,text", [
    (lambda x: fn.squeeze(x, axes=[2], axis_names="Z"), "both `axes` and `axis_names` are given"),
    (lambda x: fn.squeeze(x), "give `axes` or `axis_names`"),
    (lambda x: fn.reshape(x, shape=[20], rel_shape=[1]), "the shape is given more than once (`shape`, `rel_shape`)"),
])
def test_shape_op_errors_at_build_are_runtime_and_value_errors(make: Any, text: str) -> None:
    for kind in (RuntimeError, ValueError):
        with raises_with(kind, text):
            run_on(make, [np.zeros((1, 1, 10), U8)], "XYZ")


def _draw(make: Callable[[], Any]) -> None:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=1)
    with pipe:
        pipe.set_outputs(make())
    pipe.run()


@pytest.mark.parametrize("make,facts", [
    (lambda: fn.random.beta(alpha=0, beta=1), ("`alpha` is 0 for sample 0", "positive float32")),
    (lambda: fn.random.beta(alpha=1, beta=-0.1), ("`beta` is -0.1 for sample 0", "positive float32")),
    (lambda: fn.random.beta(alpha=1e100, beta=5), ("`alpha` is inf for sample 0", "positive float32")),
    (lambda: fn.random.beta(alpha=float("nan"), beta=5), ("`alpha` is nan for sample 0", "positive float32")),
    (lambda: fn.random.beta(dtype=types.FLOAT16), ("`dtype` must be FLOAT or FLOAT64", "got float16")),
    (lambda: fn.random.beta(dtype=types.INT32), ("`dtype` must be FLOAT or FLOAT64", "got int32")),
    (lambda: fn.random.beta(alpha=np.full((2, 2), 1)), ("`alpha` takes one number per sample", "has 2 dimensions")),
    (lambda: fn.random.beta(beta=np.full((2,), 1)), ("`beta` takes one number per sample", "has 1 dimension,")),
    (lambda: fn.random.beta(beta=np.full((1, 1), 1)), ("`beta` takes one number per sample", "has 2 dimensions")),
    (lambda: fn.random.normal(mean=np.full((2, 2), 1.0)), ("`mean` takes one number per sample", "has 2 dimensions")),
    (lambda: fn.random.coin_flip(probability=np.full((2,), 0.5)),
     ("`probability` takes one number per sample", "has 1 dimension,")),
])
def test_random_argument_errors(make: Any, facts: tuple) -> None:
    with raises_with(RuntimeError, *facts):
        _draw(make)


def test_beta_keeps_the_value_given_next_to_its_float32_reading() -> None:
    with pytest.raises(RuntimeError, match=r"`alpha` is inf for sample 0 \(given 1e\+100\)"):
        _draw(lambda: fn.random.beta(alpha=1e100, beta=5))


def _es(**kw: Any) -> Pipeline:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, prefetch_queue_depth=1)
    with pipe:
        pipe.set_outputs(fn.external_source(**kw))
    return pipe


def test_external_source_type_errors() -> None:
    with raises_with(RuntimeError, "the data are float", "the `dtype` argument is uint8"):
        _es(source=[[np.ones(3, np.float32)] * 2], dtype=types.UINT8).run()
    pipe = _es(source=[[np.ones(3, np.float64)] * 2, [np.ones(3, np.int64)] * 2])
    pipe.run()
    with raises_with(RuntimeError, "this batch is int64, the earlier ones were double"):
        pipe.run()


def test_external_source_dimensionality_errors() -> None:
    with raises_with(RuntimeError, "the data have 2 dimensions", "the `ndim` argument is 3"):
        _es(source=[[np.ones((4, 4), U8)] * 2], ndim=3).run()
    pipe = _es(source=[[np.ones((4, 4, 3), U8)] * 2, [np.ones((4, 4), U8)] * 2])
    pipe.run()
    with raises_with(RuntimeError, "this batch's samples have 2 dimensions, the earlier batches' 3"):
        pipe.run()
    for kind in (RuntimeError, ValueError):
        with raises_with(kind, "`layout` 'HWC' has 3 dimensions, but `ndim` is 2"):
            _es(layout="HWC", ndim=2).build()


def test_external_source_layout_errors() -> None:
    pipe = _es(name="in", layout="H")
    pipe.feed_input("in", [np.zeros(1)] * 2, layout="W")
    with raises_with(RuntimeError, "the batch was fed with layout 'W', the `layout` argument is 'H'"):
        pipe.run()
    pipe = _es(name="in")
    pipe.feed_input("in", [np.zeros(1)] * 2, layout="W")
    pipe.feed_input("in", [np.zeros(1)] * 2, layout="H")
    pipe.run()
    with raises_with(RuntimeError, "this batch's layout is 'H', the earlier batches' 'W'"):
        pipe.run()
    pipe = _es(name="in")
    with raises_with(RuntimeError, "layout 'W' is for 1-dimensional samples", "have 2 dimensions"):  # at feed_input
        pipe.feed_input("in", [np.zeros((1, 2))] * 2, layout="W")
    with raises_with(RuntimeError, "layout 'HW' is for 2-dimensional samples", "have 1 dimensions"):  # a dense batch
        pipe.feed_input("in", np.zeros((2, 3)), layout="HW")


def test_external_source_empty_batch() -> None:
    with raises_with(RuntimeError, "the source gave an empty batch (0 samples)"):
        _es(source=lambda: []).run()


def _star(*args: Any) -> None: ...
def _kw(**kwargs: Any) -> None: ...
def _kw_only(*, kw_only: int = 10) -> None: ...
def _three(arg: Any, a: Any, b: Any, /) -> None: ...


@pytest.mark.parametrize("source,text", [
    (_star, "`source` _star has the parameter `*args` (var-positional)"),
    (_kw, "`source` _kw has the parameter `**kwargs` (var-keyword)"),
    (_kw_only, "`source` _kw_only has the parameter `kw_only` (keyword-only)"),
    (_three, "`source` _three has 3 parameters (arg, a, b, defaults included)"),
])
def test_source_signature_refusals_are_type_errors(source: Any, text: str) -> None:
    with raises_with(TypeError, text, "takes no argument or one"):
        _es(source=source, batch=False).build()


def test_unused_outputs_warning() -> None:
    def gen_fun_source() -> Any:
        return [np.zeros(1)] * 2, [np.zeros(1)] * 2, [np.zeros(1)] * 2

    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.external_source(gen_fun_source, num_outputs=3)[0])
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        pipe.build()
    text = " ".join(str(w.message) for w in got)
    assert re.search(r"the source .*gen_fun_source.* gives 3 outputs and its outputs at the indices 1, 2 are not "
                     r"used by the pipeline", text), text
