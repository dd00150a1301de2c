"""`select` and the ops behind it (`_conditional.route` / `_conditional.pick`): each sample's work
is done only in the branch it chose (the other branches get a one-pixel stand-in of it), the
right sample comes out, errors are clear; pipelines with automatic augmentations serialize to
YAML and resume from checkpoints."""
from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types
from torch_dali.auto_aug import trivial_augment as ta
from torch_dali.auto_aug.core import augmentation, select
from torch_dali.errors import ArgumentError, ArgumentTypeError, PipelineError
from torch_dali.pipeline import Pipeline

_SEEN: dict[str, list[tuple[int, ...]]] = {}
_LOCK = threading.Lock()


def _recorder(tag: str) -> Any:
    def record(x: np.ndarray) -> np.ndarray:
        with _LOCK:
            _SEEN.setdefault(tag, []).append(tuple(x.shape))
        return x
    return record


def _branch(k: int) -> Any:
    def op(data: Any, _: Any) -> Any:
        return fn.python_function(data, function=_recorder(f"b{k}")) + np.uint8(k)
    return augmentation(op, name=f"b{k}")


def _run(graph: Any, batch: list[np.ndarray], layout: str, idx: list[int], threads: int = 1) -> list[np.ndarray]:
    @pipeline_def(batch_size=len(batch), num_threads=threads, device_id=None, seed=1, exec_async=False,
                  exec_pipelined=False)
    def pipe():
        x = fn.external_source(source=lambda: batch, batch=True, layout=layout)
        i = fn.external_source(source=lambda: [np.int32(v) for v in idx], batch=True)
        return graph(x, i)

    p = pipe()
    p.build()
    out, = p.run()
    return [np.asarray(out.at(k)) for k in range(len(batch))]


@pytest.mark.parametrize("layout, standin", [("HWC", (1, 1, 3)), ("CHW", (3, 1, 1)), ("", (1, 1, 3))])
def test_a_branch_works_only_on_its_own_samples(layout: str, standin: tuple[int, ...]) -> None:
    shape = (5, 7, 3) if layout != "CHW" else (3, 5, 7)
    batch = [np.full(shape, 10 * k, np.uint8) for k in range(5)]
    idx = [0, 2, 1, 2, 0]
    _SEEN.clear()
    out = _run(lambda x, i: select([_branch(0), _branch(1), _branch(2)], i, x), batch, layout, idx)
    for k, (img, o) in enumerate(zip(batch, out)):
        assert np.array_equal(o, img + idx[k]), k
    for b in range(3):
        mine = sorted(shape if idx[k] == b else standin for k in range(5))
        assert sorted(_SEEN[f"b{b}"]) == mine, (b, _SEEN[f"b{b}"])


def test_pick_takes_each_sample_from_its_branch() -> None:
    batch = [np.full((4, 4, 3), k, np.uint8) for k in range(4)]

    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: batch, batch=True, layout="HWC")
        i = fn.external_source(source=lambda: [np.int32(k % 2) for k in range(4)], batch=True)
        return select([augmentation(lambda d, _: d), augmentation(lambda d, _: d + np.uint8(1))], i, x)

    p = pipe()
    p.build()
    out, = p.run()
    assert out.is_dense_tensor() and out.layout() == "HWC"
    assert [int(out.at(k)[0, 0, 0]) for k in range(4)] == [0, 2, 2, 4]


def test_pick_of_dense_branches() -> None:
    """Branches whose outputs are dense batches (on the GPU, routed data stays dense) are merged
    as whole tensors."""
    idx = [2, 0, 1, 2, 0]

    @pipeline_def(batch_size=5, num_threads=1, device_id=None, seed=1)
    def pipe():
        i = fn.external_source(source=lambda: [np.int32(v) for v in idx], batch=True)
        ops = [augmentation(lambda d, _, k=k: types.Constant(np.full((2, 3), k, np.int16), device="cpu"))
               for k in range(3)]
        return select(ops, i, i)

    p = pipe()
    p.build()
    out, = p.run()
    assert [np.asarray(out.at(k)).tolist() for k in range(5)] == [[[v] * 3] * 2 for v in idx]
    assert out.dtype == types.INT16


def test_an_index_out_of_range_is_an_error_naming_the_branches() -> None:
    batch = [np.zeros((2, 2, 3), np.uint8)] * 2
    with pytest.raises(PipelineError, match="chose branch 3, but there are 2"):
        _run(lambda x, i: select([_branch(0), _branch(1)], i, x), batch, "HWC", [0, 3])


def test_branches_giving_different_types_are_an_error() -> None:
    batch = [np.zeros((2, 2, 3), np.uint8)] * 2
    to_float = augmentation(lambda d, _: fn.cast(d, dtype=types.FLOAT))
    with pytest.raises(PipelineError, match="different element types"):
        _run(lambda x, i: select([augmentation(lambda d, _: d), to_float], i, x), batch, "HWC", [0, 1])


def test_select_checks_its_arguments() -> None:
    ops = [_branch(0), _branch(1)]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe(index: Any):
        x = fn.external_source(source=lambda: [np.zeros((2, 2, 3), np.uint8)] * 2, batch=True, layout="HWC")
        return select(ops, index, x) if not callable(index) else select(ops, index(x), x)

    with pytest.raises(ArgumentError, match="empty"):
        select([], 0)
    with pytest.raises(ArgumentError, match="out of range"):
        pipe(5)
    with pytest.raises(ArgumentTypeError, match="DataNode of integers"):
        pipe(1.5)
    with pytest.raises(ArgumentError, match="on the CPU"):
        pipe(lambda x: fn.random.uniform(values=[0, 1], dtype=types.INT32).gpu())
    p = pipe(1)  # a Python int: the same op for every sample, no routing
    p.build()
    assert int(p.run()[0].at(0)[0, 0, 0]) == 1


# -- pipelines with automatic augmentations: YAML and checkpoints ------------------------------------------

def _image_pipe(**kw: Any) -> Pipeline:
    img = np.arange(6 * 8 * 3, dtype=np.uint8).reshape(6, 8, 3) * 3

    @pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=17, enable_conditionals=True, **kw)
    def pipe():
        x = types.Constant(img, layout="HWC", device="cpu")
        return ta.trivial_augment_wide(x, num_magnitude_bins=5)

    return pipe()


def _batches(p: Pipeline, n: int) -> list[list[np.ndarray]]:
    p.build()
    return [[np.asarray(o.at(i)) for i in range(len(o))] for o in (p.run()[0] for _ in range(n))]


def test_yaml_round_trip_gives_the_same_batches() -> None:
    p = _image_pipe()
    text = p.serialize()
    assert "_conditional.route" in text and "_tensor_subscript" in text
    again = Pipeline.deserialize(text)
    want, got = _batches(p, 3), _batches(again, 3)
    assert all(np.array_equal(x, y) for bw, bg in zip(want, got) for x, y in zip(bw, bg))
    assert any(not np.array_equal(want[0][0], s) for s in want[0][1:])  # samples differ


def test_checkpoint_resumes_with_the_same_batches() -> None:
    p = _image_pipe(enable_checkpointing=True)
    _batches(p, 2)
    restored = _image_pipe(enable_checkpointing=True, checkpoint=p.checkpoint())
    want, got = _batches(p, 3), _batches(restored, 3)
    assert all(np.array_equal(x, y) for bw, bg in zip(want, got) for x, y in zip(bw, bg))


@augmentation(mag_range=(0, 10))
def _brighter_above_five(data: Any, level: Any) -> Any:
    if level > 5:  # an `if` on a DataNode inside a custom augmentation, as DALI allows
        data = data + np.uint8(100)
    return data


def test_an_if_inside_a_custom_augmentation_works_per_sample() -> None:
    batch = [np.zeros((2, 3, 3), np.uint8)] * 4
    bins = [0, 8, 10, 5]

    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=1, enable_conditionals=True)
    def pipe():
        x = fn.external_source(source=lambda: batch, batch=True, layout="HWC")
        b = fn.external_source(source=lambda: [np.int32(v) for v in bins], batch=True)
        return _brighter_above_five(x, magnitude_bin=b, num_magnitude_bins=11)

    p = pipe()
    p.build()
    out, = p.run()
    assert [int(out.at(k)[0, 0, 0]) for k in range(4)] == [0, 100, 100, 0]
