"""Behaviours DALI's serialization, parallel external source and multi-GPU notebooks rely on
(hid-29's notebook pass); each fact was measured with DALI 2.4's CPU backend."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, ops
from torch_dali.pipeline import Pipeline


class _Sample:
    def __call__(self, info):
        return np.full((1,), info.idx_in_epoch, np.int32)


def _parallel_pipe(**pipe_kwargs):
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, **pipe_kwargs)
    with pipe:
        pipe.set_outputs(fn.external_source(source=_Sample(), batch=False, parallel=True))
    return pipe


def test_py_worker_settings_are_kept():
    # DALI 2.4: Pipeline(py_num_workers=3, py_start_method="spawn").py_num_workers == 3, .py_start_method == "spawn"
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, py_num_workers=3, py_start_method="spawn")
    assert (pipe.py_num_workers, pipe.py_start_method) == (3, "spawn")
    default = Pipeline(batch_size=1, num_threads=1, device_id=None)
    assert (default.py_num_workers, default.py_start_method) == (1, "fork")


@pytest.mark.parametrize("workers", [0, -1])
def test_parallel_source_needs_a_worker(workers):
    # DALI 2.4: a parallel=True source with py_num_workers 0 or -1 is a RuntimeError at build
    with pytest.raises(RuntimeError, match="py_num_workers"):
        _parallel_pipe(py_num_workers=workers).build()


def test_zero_workers_without_parallel_source_builds():
    # DALI 2.4: py_num_workers=0 (and any py_start_method) is fine when no source is parallel
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, py_num_workers=0, py_start_method="bogus")
    with pipe:
        pipe.set_outputs(fn.external_source(source=_Sample(), batch=False))
    pipe.build()
    assert np.asarray(pipe.run()[0].at(1)).tolist() == [1]


def test_unknown_start_method_with_parallel_source():
    # DALI 2.4: ValueError at build (multiprocessing has no such context)
    with pytest.raises(ValueError, match="py_start_method"):
        _parallel_pipe(py_start_method="bogus").build()
    _parallel_pipe(py_start_method="forkserver").build()


@pytest.mark.parametrize("batch", [False, True])
def test_parallel_callable_without_parameters_is_refused_at_definition(batch):
    # DALI 2.4: TypeError when fn.external_source(parallel=True) is called (before build), for a
    # callable taking no argument, with batch=False or True; the same callable is fine serially
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        with pytest.raises(TypeError, match="parallel=True"):
            fn.external_source(source=lambda: np.zeros(2), parallel=True, batch=batch)
        with pytest.raises(TypeError, match="parallel=True"):
            ops.ExternalSource(source=lambda: np.zeros(2), parallel=True, batch=batch)
        with pytest.raises(TypeError, match="parallel=True"):
            ops.ExternalSource(parallel=True, batch=batch)(source=lambda: np.zeros(2))
        pipe.set_outputs(fn.external_source(source=lambda: np.zeros(2), batch=False))
    pipe.build()
    assert np.asarray(pipe.run()[0].at(0)).tolist() == [0.0, 0.0]


# -- serialization (DALI's Serialization notebook and what loading keeps) ------------------------

def _rand_pipe(seed=5, **kwargs):
    pipe = Pipeline(batch_size=3, num_threads=2, device_id=None, seed=seed, **kwargs)
    with pipe:
        pipe.set_outputs(fn.random.uniform(range=[0, 1]), fn.random.uniform(range=[0, 1], seed=1234))
    return pipe


def _values(pipe):
    pipe.build()
    a, b = pipe.run()
    return [float(a.at(i)) for i in range(len(a))], [float(b.at(i)) for i in range(len(b))]


def test_deserialize_and_build_takes_unset_settings_from_the_file():
    # DALI 2.4: Pipeline() (nothing given) + deserialize_and_build takes batch size, threads and seed
    # from the serialized pipeline; what the pipeline was given stays (batch_size=2 -> 2 samples)
    text = _rand_pipe(exec_async=False, exec_pipelined=False, prefetch_queue_depth=3).serialize()
    q = Pipeline()
    q.deserialize_and_build(text)
    assert (q.batch_size, q.num_threads, q.seed) == (3, 2, 5)
    assert (q.exec_async, q.exec_pipelined, q.prefetch_queue_depth) == (True, True, 2)  # its own
    assert [float(x) for x in q.run()[0]] == _values(_rand_pipe())[0]
    r = Pipeline(batch_size=2, num_threads=1, device_id=None)
    r.deserialize_and_build(text)
    assert (r.batch_size, r.num_threads, r.seed) == (2, 1, 5) and len(r.run()[0]) == 2


def test_serialized_pipeline_refusals_are_runtime_errors():
    # DALI 2.4: a serialized pipeline that does not parse is a RuntimeError; ours also say what it is
    with pytest.raises(RuntimeError, match="protobuf"):
        Pipeline.deserialize(b"\x08\x01\x10\x02*\x9d\x04\n\x0frandom__Uniform")
    with pytest.raises(RuntimeError, match="YAML"):
        Pipeline.deserialize("hello: [world")
