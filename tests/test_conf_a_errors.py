"""Errors and warnings where torch_dali raises what DALI 2.4 raises for the same inputs (error type,
where it is raised), in our own words with the facts: a DataNode's truth value, arithmetic
broadcasting, slice's arguments, `axes` out of range, inputs on the wrong device, per-frame counts
and deprecated names."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

from torch_dali import fn, ops, types
from torch_dali.pipeline import DataNode, Pipeline
from error_facts import raises_with

F32 = np.float32
TRUTH = ("DataNode 'dummy'", "no truth value", "enable_conditionals=True", "fn.cast")


def _constant(batch: list[np.ndarray]) -> Callable[[], list[np.ndarray]]:
    return lambda: batch


def _run(make: Callable[..., Any], *feeds: list[np.ndarray], layouts: tuple = (), batch: int | None = None) -> None:
    n = batch or len(feeds[0])
    pipe = Pipeline(batch_size=n, num_threads=1, device_id=None, seed=1)
    with pipe:
        srcs = [fn.external_source(_constant(d), layout=(layouts[k] if k < len(layouts) else None))
                for k, d in enumerate(feeds)]
        pipe.set_outputs(make(*srcs))
    pipe.run()


# -- a DataNode has no truth value; DALI's DataNode(name) constructor --------------------------------

def test_bool_of_a_hand_made_data_node_is_dalis_type_error() -> None:
    node = DataNode("dummy")
    assert node.name == "dummy" and node.device == "cpu"
    with raises_with(TypeError, *TRUTH):
        bool(node)


def test_min_max_of_data_nodes_are_dalis_type_error() -> None:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        a = fn.external_source(lambda: [np.int32([1])])
        b = fn.external_source(lambda: [np.int32([2])])
        for f in (min, max):
            with raises_with(TypeError, "no truth value", "enable_conditionals=True"):
                f(a, b)


@pytest.mark.parametrize("use", [lambda d: fn.cast(d, dtype=types.INT32), lambda d: d])
def test_a_data_node_without_an_op_cannot_feed_or_be_an_output(use: Callable[[Any], Any]) -> None:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with raises_with(RuntimeError, "DataNode 'dummy'", "no op that produces it"):  # DALI: at build
        with pipe:
            pipe.set_outputs(use(DataNode("dummy")))
        pipe.build()


# -- arithmetic broadcasting ------------------------------------------------------------------------

@pytest.mark.parametrize("a,b,facts", [
    ([np.zeros((2, 3, 4), F32)], [np.zeros((2, 3, 3), F32)],  # a dense batch
     ("[2, 3, 4] and [2, 3, 3] of sample 0", "4 at dimension 2 of [2, 3, 4], 3 at dimension 2 of [2, 3, 3]")),
    ([np.zeros((2, 3, 4), F32), np.zeros((2, 5, 4), F32)], [np.zeros((3, 4), F32)] * 2,  # ragged: sample 1 fails
     ("[2, 5, 4] and [3, 4] of sample 1", "5 at dimension 1 of [2, 5, 4], 3 at dimension 0 of [3, 4]")),
    ([np.zeros(4, np.int32)], [np.zeros(3, np.int32)],
     ("[4] and [3] of sample 0", "4 at dimension 0 of [4], 3 at dimension 0 of [3]")),
])
def test_broadcast_error_lists_shapes_dimension_and_sample(a: list, b: list, facts: tuple) -> None:
    with raises_with(RuntimeError, "cannot be broadcast", *facts):
        _run(lambda x, y: x + y, a, b)


# -- slice -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw,text", [
    (dict(start=[1, 2], rel_start=[0.1, 0.1], shape=[1, 1]),
     "`start` and `rel_start` are mutually exclusive"),
    (dict(start=[1, 2], end=[4, 3], shape=[3, 1]),
     "`end`, `rel_end`, `shape` and `rel_shape` are mutually exclusive, got end, shape"),
    (dict(start=[1, 2], rel_end=[0.5, 0.5], rel_shape=[0.1, 0.1]),
     "`end`, `rel_end`, `shape` and `rel_shape` are mutually exclusive, got rel_end, rel_shape"),
])
def test_slice_exclusive_arguments(kw: dict, text: str) -> None:
    with raises_with(RuntimeError, text):
        _run(lambda x: fn.slice(x, axes=(0, 1), **kw), [np.zeros((5, 4, 3), np.uint8)], layouts=("HWC",))


@pytest.mark.parametrize("axis", [-7, -4, 3, 5])
@pytest.mark.parametrize("named", [False, True])
def test_axes_out_of_range(axis: int, named: bool) -> None:
    def make(x: Any) -> Any:
        if named:
            return fn.slice(x, start=[1], shape=[2], axes=[axis])
        return fn.slice(x, np.array([1], F32), np.array([2], F32), axes=[axis])
    with raises_with(RuntimeError, f"`axes` [{axis}] holds {axis}, out of range", "3-dimensional", "-3 to 2"):
        _run(make, [np.zeros((5, 4, 3), np.uint8)], layouts=("HWC",))


def _slice_fed_from_gpu(named: bool) -> None:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=0)
    with pipe:
        data = types.Constant(0, shape=[10, 10, 3], dtype=types.FLOAT, device="cpu")
        start = fn.random.uniform(range=[0.0, 0.3], shape=(2,), dtype=types.FLOAT, device="gpu")
        shape = fn.random.uniform(range=[0.4, 0.6], shape=(2,), dtype=types.FLOAT, device="gpu")
        out = (fn.slice(data, rel_start=start, rel_shape=shape, device="cpu") if named
               else fn.slice(data, start, shape, device="cpu"))
        pipe.set_outputs(out)


def test_gpu_inputs_to_a_cpu_op() -> None:
    with raises_with(RuntimeError, "input 1", "is on the GPU", "runs on the CPU"):
        _slice_fed_from_gpu(named=False)
    with raises_with(ValueError, "per-sample argument `rel_s", "is on the GPU", "CPU op"):  # DALI: a ValueError
        _slice_fed_from_gpu(named=True)


# -- per-frame counts -------------------------------------------------------------------------------

def _seq(*frames: int) -> list[np.ndarray]:
    return [np.zeros((f, 2, 3), F32) for f in frames]


def test_sequence_inputs_with_different_frame_counts() -> None:
    with raises_with(RuntimeError, "sample 1 has 2 frames in input 1 but 3 in input 0"):
        _run(lambda a, b: fn.transforms.combine(a, b), _seq(3, 3), _seq(3, 2), layouts=("F**", "F**"))


def test_per_frame_argument_count() -> None:
    ang = [np.zeros(3, F32), np.zeros(2, F32)]
    with raises_with(RuntimeError, "sample 1 of the per-frame argument `angle` has 2 values, but sample 1 of input 0 "
                               "has 3 frames"):
        _run(lambda m, a: fn.transforms.rotation(m, angle=fn.per_frame(a)), _seq(3, 3), ang, layouts=("F**",))
    centers = [np.zeros((3, 2), F32), np.zeros((2, 2), F32)]
    with raises_with(RuntimeError, "sample 1 of the per-frame argument `center` has 2 values, but sample 1 of "
                               "argument `angle` has 3 frames"):
        _run(lambda a, c: fn.transforms.rotation(angle=fn.per_frame(a), center=fn.per_frame(c)),
             [np.zeros(3, F32)] * 2, centers)
    video = [np.zeros((3, 8, 8), F32)]
    with raises_with(RuntimeError, "sample 0 of the per-frame argument `window_size` has 2 values, but sample 0 of "
                               "input 0 has 3 frames"):
        _run(lambda v, w: fn.gaussian_blur(v, window_size=fn.per_frame(w)), video, [np.int32([3, 5])],
             layouts=("FHW",))


# -- deprecated names -------------------------------------------------------------------------------

@pytest.mark.parametrize("call,text", [
    (lambda: fn.transform_translation(offset=(0, 1)),
     "fn.transform_translation is deprecated in DALI; use fn.transforms.translation"),
    (lambda: ops.TransformTranslation(offset=(0, 1))(),
     "ops.TransformTranslation is deprecated in DALI; use fn.transforms.translation"),
    (lambda: ops.NormalDistribution()(),
     "ops.NormalDistribution is deprecated in DALI; use fn.random.normal"),
    (lambda: fn.experimental.equalize(fn.external_source(lambda: [np.zeros((2, 2, 1), np.uint8)])),
     "fn.experimental.equalize is deprecated in DALI; use fn.equalize"),
    (lambda: fn.shapes(fn.external_source(lambda: [np.zeros(2)])),
     "fn.shapes is deprecated in DALI"),
])
def test_deprecation_warnings(call: Callable[[], Any], text: str) -> None:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        with Pipeline(batch_size=1, num_threads=1, device_id=None):
            call()
    assert [str(w.message) for w in got if issubclass(w.category, DeprecationWarning)] == [text]
