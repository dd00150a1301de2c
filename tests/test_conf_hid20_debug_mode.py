"""Debug mode, DALI's experimental `@pipeline_def(debug=True)` (also `pipe_fn(debug=True)` at call
time; its debug-mode notebook does both): run() calls the definition, every op in it runs at
once and returns a DataNodeDebug that holds its batch (`.get()`, printable), Python code in the
definition can look at the data, and the returned nodes' batches are the outputs. Readers and
random ops keep their state across iterations. DALI's own debug mode needs a CUDA driver even for
CPU ops (measured here: 'CUDA driver version is insufficient'), so these facts come from its
documentation and the notebook; the outputs are checked against the same definition run normally."""
from __future__ import annotations

import io
import contextlib

import numpy as np
import pytest

from torch_dali import fn, types
from torch_dali.pipeline.experimental import pipeline_def
from torch_dali.tensor_list import TensorListCPU

RNG = np.random.default_rng(0)
DATA = [RNG.integers(0, 256, (6 + i, 9, 3)).astype(np.uint8) for i in range(6)]


def _source():
    it = iter(range(10**6))

    def batch():
        c = next(it)
        return [DATA[(c * 2 + k) % len(DATA)] for k in range(2)]
    return batch


def _graph(seen=None):
    images = fn.external_source(source=_source(), batch=True, layout="HWC")
    if seen is not None:
        seen.append(images)
    flipped = fn.flip(images, horizontal=1)
    return flipped + 10, fn.cast(images, dtype=types.FLOAT) * 0.5


def test_decorator_and_call_time_flag_give_the_normal_outputs():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, debug=True)
    def deco():
        return _graph()

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def plain():
        return _graph()

    normal = plain()
    normal.build()
    for pipe in (deco(), plain(debug=True)):
        pipe.build()
        ref = plain()
        ref.build()
        for _ in range(3):  # the source goes on, as in a normal pipeline
            got, want = pipe.run(), ref.run()
            assert len(got) == len(want) == 2
            for g, w in zip(got, want):
                assert isinstance(g, TensorListCPU) and g.layout() == w.layout()
                for i in range(2):
                    np.testing.assert_array_equal(np.asarray(g.at(i)), np.asarray(w.at(i)))


def test_the_definition_sees_data():
    seen, printed = [], io.StringIO()

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, debug=True)
    def pipe_fn():
        images = fn.external_source(source=_source(), batch=True, layout="HWC")
        print(images)
        seen.append(np.asarray(images.get().at(1)).shape)
        if images.get().at(0).shape[0] > 6:  # plain Python on the data
            return images
        return fn.flip(images, vertical=1, horizontal=0)

    pipe = pipe_fn()
    assert seen == []  # nothing runs before run()
    pipe.build()
    with contextlib.redirect_stdout(printed):
        first = pipe.run()[0]
        second = pipe.run()[0]
    assert seen == [DATA[1].shape, DATA[3].shape]
    np.testing.assert_array_equal(np.asarray(first.at(0)), DATA[0][::-1])  # 6 rows: flipped
    np.testing.assert_array_equal(np.asarray(second.at(0)), DATA[2])  # 8 rows: as it is
    text = printed.getvalue()
    assert text.count("DataNodeDebug(") == 2 and "TensorListCPU" in text


def test_random_ops_draw_per_iteration_and_follow_the_seed():
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=7, debug=True)
    def pipe_fn():
        return fn.random.uniform(range=(0, 1)), fn.random.coin_flip()

    a, b = pipe_fn(), pipe_fn()
    a.build()
    b.build()
    runs_a = [[np.asarray(t.as_array()) for t in a.run()] for _ in range(2)]
    runs_b = [[np.asarray(t.as_array()) for t in b.run()] for _ in range(2)]
    np.testing.assert_array_equal(runs_a[0][0], runs_b[0][0])
    np.testing.assert_array_equal(runs_a[1][0], runs_b[1][0])
    assert not np.array_equal(runs_a[0][0], runs_a[1][0])
    assert runs_a[0][0].shape == (4,) and ((runs_a[0][0] >= 0) & (runs_a[0][0] < 1)).all()


def test_only_run():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, debug=True)
    def pipe_fn():
        return _graph()

    pipe = pipe_fn()
    pipe.build()
    with pytest.raises(Exception, match="run"):
        pipe.schedule_run()


def test_samples_edited_in_python_feed_the_next_op():
    """The notebook's last cell: take the decoded batch as arrays, change them, rotate the list."""
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, debug=True)
    def pipe_fn():
        images = fn.external_source(source=_source(), batch=True, layout="HWC")
        arrays = [np.array(t) for t in images.get()]
        for a in arrays:
            a[:, :, [0, 2]] = 0
        return fn.flip(arrays, horizontal=1), images

    pipe = pipe_fn()
    pipe.build()
    out, images = pipe.run()
    for i in range(2):
        want = np.asarray(images.at(i))[:, ::-1].copy()
        want[:, :, [0, 2]] = 0
        np.testing.assert_array_equal(np.asarray(out.at(i)), want)
    np.testing.assert_array_equal(np.asarray(images.at(0)), DATA[0])  # the source's batch is untouched
