"""Errors whose text DALI's own tests search for carry DALI's sentence (as DALI 2.4 raises it, with
its error type), after our own detail: squeeze, reshape, random.beta, scalar arguments and
external_source."""
from __future__ import annotations

import re
import warnings
from typing import Any, Callable

import numpy as np
import pytest

from torch_dali import fn, types
from torch_dali.pipeline import Pipeline

U8 = np.uint8


def _run(make: Callable[[Any], Any], samples: list[np.ndarray], layout: str | None = None) -> None:
    pipe = Pipeline(batch_size=len(samples), num_threads=1, device_id=None, seed=1)
    with pipe:
        src = fn.external_source(lambda: samples, layout=layout)
        pipe.set_outputs(make(src))
    pipe.run()


def _raises(kind: type, sentence: str) -> Any:
    return pytest.raises(kind, match=re.escape(sentence))


@pytest.mark.parametrize("make,shape,layout,sentence", [
    (lambda x: fn.squeeze(x, axes=[1, 1]), (3, 1, 2), None, "Specified at least twice same dimension to remove."),
    (lambda x: fn.squeeze(x, axes=[1]), (10, 10, 10), None,
     "[10, 10, 10]: The volume of the new shape should match the one of the original shape. Requested a shape "
     "with 100 elements but the original shape has 1000 elements."),
    (lambda x: fn.squeeze(x, axes=[2, 1]), (100, 0, 0), None,
     "Requested a shape with 100 elements but the original shape has 0 elements."),
    (lambda x: fn.squeeze(x, axis_names="W"), (1, 1, 10), "XYZ", "Axis 'W' is not present in the input layout"),
    (lambda x: fn.reshape(x, rel_shape=[1, -1, 1]), (4, 5), None,
     "`rel_shape` has more elements (3) than there are dimensions in the input (2). To add new dimensions, use "
     "`src_dims` to specify the mapping between input and output dimensions"),
    (lambda x: fn.reshape(x, src_dims=[2, 0, 1], rel_shape=[1, -1]), (1, 2, 3), None,
     "`src_dims` and `rel_shape` have different lengths: 3 vs 2"),
    (lambda x: fn.reshape(x, src_dims=[0, 1, 3]), (1, 2, 3), None,
     "`src_dims[2] == 3` is out of bounds. The indices in `src_dims` should be either valid dimension indices in "
     "range [0..2] or -1 to insert a new dimension."),
    (lambda x: fn.reshape(x, rel_shape=[-1, 1]), (320, 0), None,
     "Cannot infer the extent of dimension 0 when the volume of remaining dimensions is 0. Input shape: 320 x 0"),
    (lambda x: fn.reshape(x, src_dims=[0, -1, 1], rel_shape=[1, -1, 1]), (320, 0), None,
     "Cannot infer the extent of dimension 1 for 3D output and 2D input. Use `src_dims` to achieve more complex "
     "mapping of input to output dimensions."),
    (lambda x: fn.reshape(x, src_dims=[2, 0]), (20, 10, 20), None,
     "The volume of the new shape should match the one of the original shape. Requested a shape with 400 "
     "elements but the original shape has 4000 elements."),
    (lambda x: fn.reshape(x, shape=[7]), (4, 5), None,
     "[7] (7 elements): Input and output samples must occupy the same size in bytes."),
    (lambda x: fn.reshape(x, shape=[3, -1]), (4, 5), None,
     "Input and output samples must occupy the same size in bytes."),
    (lambda x: fn.reshape(x, shape=[-1, -1]), (4, 5), None,
     "Only one negative extent is allowed; got: `shape` [-1, -1]"),
    (lambda x: fn.reshape(x, shape=[20], layout="AB"), (4, 5), None,
     "Requested layout 'AB' is not compatible with a 1D shape"),
])
def test_shape_op_errors_as_they_run(make: Any, shape: tuple, layout: str | None, sentence: str) -> None:
    with _raises(RuntimeError, sentence):
        _run(make, [np.zeros(shape, U8)], layout)


@pytest.mark.parametrize("make,sentence", [
    (lambda x: fn.squeeze(x, axes=[2], axis_names="Z"), "Provided both ``axes`` and ``axis_names`` arguments"),
    (lambda x: fn.squeeze(x), "Missing argument ``axes`` or ``axis_names``."),
    (lambda x: fn.reshape(x, shape=[20], rel_shape=[1]),
     "Shape input, `shape` argument and `rel_shape` argument are mutually exclusive"),
])
def test_shape_op_errors_at_build_are_runtime_and_value_errors(make: Any, sentence: str) -> None:
    for kind in (RuntimeError, ValueError):
        with _raises(kind, sentence):
            _run(make, [np.zeros((1, 1, 10), U8)], "XYZ")


def _draw(make: Callable[[], Any]) -> None:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=1)
    with pipe:
        pipe.set_outputs(make())
    pipe.run()


@pytest.mark.parametrize("make,sentence", [
    (lambda: fn.random.beta(alpha=0, beta=1), "The `alpha` must be a positive float32, got `0` for sample at index 0"),
    (lambda: fn.random.beta(alpha=1, beta=-0.1), "The `beta` must be a positive float32, got `-0.1` for sample"),
    (lambda: fn.random.beta(alpha=1e100, beta=5), "The `alpha` must be a positive float32, got `inf`"),
    (lambda: fn.random.beta(alpha=float("nan"), beta=5), "The `alpha` must be a positive float32, got `nan`"),
    (lambda: fn.random.beta(dtype=types.FLOAT16),
     "Data type float16 is not supported. Supported types are : float, double"),
    (lambda: fn.random.beta(dtype=types.INT32), "Data type int32 is not supported."),
    (lambda: fn.random.beta(alpha=np.full((2, 2), 1)),
     "Input with dimension (2) cannot be converted to dimension (0)."),
    (lambda: fn.random.beta(beta=np.full((2,), 1)), "Input with dimension (1) cannot be converted to dimension (0)."),
    (lambda: fn.random.beta(beta=np.full((1, 1), 1)), "Input with dimension (2) cannot be converted to dimension (0)."),
    (lambda: fn.random.normal(mean=np.full((2, 2), 1.0)), "Input with dimension (2) cannot be converted"),
    (lambda: fn.random.coin_flip(probability=np.full((2,), 0.5)), "Input with dimension (1) cannot be converted"),
])
def test_random_argument_errors(make: Any, sentence: str) -> None:
    with _raises(RuntimeError, sentence):
        _draw(make)


def test_beta_keeps_the_value_given_next_to_its_float32_reading() -> None:
    with pytest.raises(RuntimeError, match=r"got `inf` for sample at index 0 \(given 1e\+100\)"):
        _draw(lambda: fn.random.beta(alpha=1e100, beta=5))


def _es(**kw: Any) -> Pipeline:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, prefetch_queue_depth=1)
    with pipe:
        pipe.set_outputs(fn.external_source(**kw))
    return pipe


def test_external_source_type_errors() -> None:
    with _raises(RuntimeError, "ExternalSource expected data of type uint8 and got: float"):
        _es(source=[[np.ones(3, np.float32)] * 2], dtype=types.UINT8).run()
    pipe = _es(source=[[np.ones(3, np.float64)] * 2, [np.ones(3, np.int64)] * 2])
    pipe.run()
    with _raises(RuntimeError, "Type of the data fed to the external source has changed from the previous "
                               "iteration. Type in the previous iteration was double and the current type is int64."):
        pipe.run()


def test_external_source_dimensionality_errors() -> None:
    with _raises(RuntimeError, "ExternalSource expected data with 3 dimensions and got 2 dimensions"):
        _es(source=[[np.ones((4, 4), U8)] * 2], ndim=3).run()
    pipe = _es(source=[[np.ones((4, 4, 3), U8)] * 2, [np.ones((4, 4), U8)] * 2])
    pipe.run()
    with _raises(RuntimeError, "Number of dimensions of the data fed to the external source has changed from "
                               "previous iteration. Dimensionality in the previous iteration was 3 and the "
                               "current is 2."):
        pipe.run()
    for kind in (RuntimeError, ValueError):
        with _raises(kind, 'Number of dimensions in the provided layout does not match the ndim argument. The '
                           'arguments provided:\n ndim = 2,\n layout: "HWC".'):
            _es(layout="HWC", ndim=2).build()


def test_external_source_layout_errors() -> None:
    pipe = _es(name="in", layout="H")
    pipe.feed_input("in", [np.zeros(1)] * 2, layout="W")
    with _raises(RuntimeError, 'Expected data with layout: "H" and got: "W"'):
        pipe.run()
    pipe = _es(name="in")
    pipe.feed_input("in", [np.zeros(1)] * 2, layout="W")
    pipe.feed_input("in", [np.zeros(1)] * 2, layout="H")
    pipe.run()
    with _raises(RuntimeError, 'Layout of the data fed to the external source has changed from previous iteration. '
                               'Layout in the previous iteration was "W" and the current is "H".'):
        pipe.run()
    pipe = _es(name="in")
    with _raises(RuntimeError, "The layout 'W' cannot describe 2-dimensional data"):  # at feed_input, as DALI
        pipe.feed_input("in", [np.zeros((1, 2))] * 2, layout="W")
    with _raises(RuntimeError, "The layout 'HW' cannot describe 1-dimensional data"):  # a dense batch
        pipe.feed_input("in", np.zeros((2, 3)), layout="HW")


def test_external_source_empty_batch() -> None:
    with _raises(RuntimeError, "ExternalSource expects non-empty batches to be provided as the input. Got batch "
                               "with 0 samples."):
        _es(source=lambda: []).run()


def _star(*args: Any) -> None: ...
def _kw(**kwargs: Any) -> None: ...
def _kw_only(*, kw_only: int = 10) -> None: ...
def _three(arg: Any, a: Any, b: Any, /) -> None: ...


@pytest.mark.parametrize("source,sentence", [
    (_star, "Found var-positional argument `*args` which is not allowed."),
    (_kw, "Found var-keyword argument `**kwargs` which is not allowed."),
    (_kw_only, "Found keyword-only argument `kw_only` which is not allowed."),
    (_three, "Found more than one positional argument, which is not allowed."),
])
def test_source_signature_refusals_are_type_errors(source: Any, sentence: str) -> None:
    lead = ("The `source` callable must accept either 0 or 1 positional arguments to indicate whether it accepts "
            "the batch or sample indexing information. ")
    with _raises(TypeError, lead + sentence):
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
    assert re.search(r"The external source node '.*gen_fun_source.*' produces 3 outputs, but the outputs at the "
                     r"indices 1, 2 are not used\. For best performance", text), text
