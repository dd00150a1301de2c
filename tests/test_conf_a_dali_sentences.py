"""Errors and warnings carry DALI 2.4's sentence (the texts below are what DALI 2.4 raises for the same
inputs), with our detail after it: a DataNode's truth value, arithmetic broadcasting, slice's
arguments, `axes` out of range, inputs on the wrong device, per-frame counts and deprecated names."""
from __future__ import annotations

import re
import warnings
from typing import Any, Callable

import numpy as np
import pytest

from torch_dali import fn, ops, types
from torch_dali.pipeline import DataNode, Pipeline

F32 = np.float32
TRUTH = ('"DataNode" was used in conditional context - it might have been used in truth evaluation for `if` '
         "statement, logical expression or cast to a boolean. To use conditional execution via `if` statements you "
         "need to specify `enable_conditionals=True` in `@nvidia.dali.pipeline_def` decorator. You can read more "
         "about conditional execution in specific section of the Pipeline documentation. Bool conversion can be "
         "achieved with the `cast` operator.")


def _raises(kind: type, sentence: str) -> Any:
    return pytest.raises(kind, match=re.escape(sentence))


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
    with _raises(TypeError, TRUTH):
        bool(node)


def test_min_max_of_data_nodes_are_dalis_type_error() -> None:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with pipe:
        a = fn.external_source(lambda: [np.int32([1])])
        b = fn.external_source(lambda: [np.int32([2])])
        for f in (min, max):
            with _raises(TypeError, TRUTH):
                f(a, b)


@pytest.mark.parametrize("use", [lambda d: fn.cast(d, dtype=types.INT32), lambda d: d])
def test_a_data_node_without_an_op_cannot_feed_or_be_an_output(use: Callable[[Any], Any]) -> None:
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None)
    with _raises(RuntimeError, "Pipeline encountered an Edge with no source op."):  # DALI: at build
        with pipe:
            pipe.set_outputs(use(DataNode("dummy")))
        pipe.build()


# -- arithmetic broadcasting ------------------------------------------------------------------------

@pytest.mark.parametrize("a,b,text", [
    ([np.zeros((2, 3, 4), F32)], [np.zeros((2, 3, 3), F32)],  # a dense batch
     "Can't broadcast shapes: \n2 x 3 x 4 (d=2, belonging to sample_idx=0)\n"
     "2 x 3 x 3 (d=2, belonging to sample_idx=0)\n"),
    ([np.zeros((2, 3, 4), F32), np.zeros((2, 5, 4), F32)], [np.zeros((3, 4), F32)] * 2,  # ragged: sample 1 fails
     "Can't broadcast shapes: \n2 x 5 x 4 (d=1, belonging to sample_idx=1)\n"
     "3 x 4 (d=0, belonging to sample_idx=1)\n"),
    ([np.zeros(4, np.int32)], [np.zeros(3, np.int32)],
     "Can't broadcast shapes: \n4 (d=0, belonging to sample_idx=0)\n3 (d=0, belonging to sample_idx=0)\n"),
])
def test_broadcast_error_lists_shapes_dimension_and_sample(a: list, b: list, text: str) -> None:
    with _raises(RuntimeError, text):
        _run(lambda x, y: x + y, a, b)


# -- slice -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw,text", [
    (dict(start=[1, 2], rel_start=[0.1, 0.1], shape=[1, 1]),
     '"start" and "rel_start" arguments are mutually exclusive'),
    (dict(start=[1, 2], end=[4, 3], shape=[3, 1]),
     '"end", "rel_end", "shape", and "rel_shape" arguments are mutually exclusive'),
    (dict(start=[1, 2], rel_end=[0.5, 0.5], rel_shape=[0.1, 0.1]),
     '"end", "rel_end", "shape", and "rel_shape" arguments are mutually exclusive'),
])
def test_slice_exclusive_arguments(kw: dict, text: str) -> None:
    with _raises(RuntimeError, text):
        _run(lambda x: fn.slice(x, axes=(0, 1), **kw), [np.zeros((5, 4, 3), np.uint8)], layouts=("HWC",))


@pytest.mark.parametrize("axis", [-7, -4, 3, 5])
@pytest.mark.parametrize("named", [False, True])
def test_axes_out_of_range(axis: int, named: bool) -> None:
    def make(x: Any) -> Any:
        if named:
            return fn.slice(x, start=[1], shape=[2], axes=[axis])
        return fn.slice(x, np.array([1], F32), np.array([2], F32), axes=[axis])
    with _raises(RuntimeError, f"Axis {axis} out of range. Expected range is [-3, 2] for a 3D input"):
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
    with _raises(RuntimeError, 'The input 1 for cpu operator `nvidia.dali.fn.slice` is stored on incompatible device '
                               '"gpu". Valid device is "cpu".'):
        _slice_fed_from_gpu(named=False)
    with _raises(ValueError, "Invalid device \"gpu\" for argument 'rel_s"):  # DALI: a ValueError
        _slice_fed_from_gpu(named=True)


# -- per-frame counts -------------------------------------------------------------------------------

def _seq(*frames: int) -> list[np.ndarray]:
    return [np.zeros((f, 2, 3), F32) for f in frames]


def test_sequence_inputs_with_different_frame_counts() -> None:
    with _raises(RuntimeError, "The input 0 and the input 1 have different number of frames for sample 1, "
                               "respectively: 3 and 2"):
        _run(lambda a, b: fn.transforms.combine(a, b), _seq(3, 3), _seq(3, 2), layouts=("F**", "F**"))


def test_per_frame_argument_count() -> None:
    ang = [np.zeros(3, F32), np.zeros(2, F32)]
    with _raises(RuntimeError, "The sample 1 of tensor argument `angle` contains 2 per-frame parameters, but there "
                               "are 3 frames in the corresponding sample of input 0. The numbers should match."):
        _run(lambda m, a: fn.transforms.rotation(m, angle=fn.per_frame(a)), _seq(3, 3), ang, layouts=("F**",))
    centers = [np.zeros((3, 2), F32), np.zeros((2, 2), F32)]
    with _raises(RuntimeError, "The sample 1 of tensor argument `center` contains 2 per-frame parameters, but there "
                               "are 3 frames in the corresponding sample of argument `angle`."):
        _run(lambda a, c: fn.transforms.rotation(angle=fn.per_frame(a), center=fn.per_frame(c)),
             [np.zeros(3, F32)] * 2, centers)
    video = [np.zeros((3, 8, 8), F32)]
    with _raises(RuntimeError, "The sample 0 of tensor argument `window_size` contains 2 per-frame parameters, but "
                               "there are 3 frames in the corresponding sample of input 0."):
        _run(lambda v, w: fn.gaussian_blur(v, window_size=fn.per_frame(w)), video, [np.int32([3, 5])],
             layouts=("FHW",))


# -- deprecated names -------------------------------------------------------------------------------

@pytest.mark.parametrize("call,text", [
    (lambda: fn.transform_translation(offset=(0, 1)),
     "WARNING: `nvidia.dali.fn.transform_translation` is now deprecated. Use `nvidia.dali.fn.transforms.translation` "
     "instead."),
    (lambda: ops.TransformTranslation(offset=(0, 1))(),
     "WARNING: `nvidia.dali.ops.TransformTranslation` is now deprecated. Use `nvidia.dali.fn.transforms.translation` "
     "instead."),
    (lambda: ops.NormalDistribution()(),
     "WARNING: `nvidia.dali.ops.NormalDistribution` is now deprecated. Use `nvidia.dali.fn.random.normal` instead."),
    (lambda: fn.experimental.equalize(fn.external_source(lambda: [np.zeros((2, 2, 1), np.uint8)])),
     "WARNING: `nvidia.dali.fn.experimental.equalize` is now deprecated. Use `nvidia.dali.fn.equalize` instead."),
    (lambda: fn.shapes(fn.external_source(lambda: [np.zeros(2)])),
     "WARNING: `nvidia.dali.fn.shapes` is now deprecated."),
])
def test_deprecation_warnings(call: Callable[[], Any], text: str) -> None:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        with Pipeline(batch_size=1, num_threads=1, device_id=None):
            call()
    assert [str(w.message) for w in got if issubclass(w.category, DeprecationWarning)] == [text]
