"""`parallel=True` external sources as DALI 2.4's test_external_source_parallel.py sees them
(torch_dali runs them on the pipeline's threads; what user code sees should match)."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, ops
from torch_dali.pipeline import Pipeline


class _Batches:
    def __iter__(self):
        return self

    def __next__(self):
        return [np.zeros(2, np.int32)]


def _gen():
    while True:
        yield [np.zeros(2, np.int32)]


def _define(source, **kwargs):
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, py_num_workers=1, py_start_method="spawn")
    with pipe:
        pipe.set_outputs(fn.external_source(source, parallel=True, **kwargs))
    return pipe


@pytest.mark.parametrize("source", [_Batches(), _gen, _gen(), [[np.zeros(2, np.int32)]]],
                         ids=["iterable", "generator_function", "generator", "list"])
def test_parallel_batch_source_with_batch_false_is_a_type_error_at_definition(source):
    # DALI 2.4 (measured): fn.external_source(src, parallel=True, batch=False) raises TypeError at
    # the call for iterables (lists, generator objects included) and generator functions
    with pytest.raises(TypeError, match="batch"):
        _define(source, batch=False)
    with pytest.raises(TypeError, match="batch"):
        ops.ExternalSource(source=source, parallel=True, batch=False)


@pytest.mark.parametrize("batch", [None, True])
def test_parallel_batch_source_in_batch_mode_still_runs(batch):
    # DALI 2.4 (measured): without batch or with batch=True the same sources run, one batch a call
    kwargs = {} if batch is None else {"batch": batch}
    pipe = _define(_Batches(), **kwargs)
    pipe.build()
    out, = pipe.run()
    assert np.asarray(out.at(0)).tolist() == [0, 0]


def test_external_source_shm_statistics_has_dali_keys_and_no_chunks():
    # DALI 2.4 (measured): a pipeline without parallel sources returns
    # {'capacities': [], 'per_sample_capacities': []}; torch_dali never uses shared memory, so the
    # lists stay empty for parallel sources too (conformance/on_purpose.md)
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.external_source(lambda info: np.zeros(3, np.uint8), batch=False))
    assert pipe.external_source_shm_statistics() == {"capacities": [], "per_sample_capacities": []}
    pipe.build()
    pipe.run()
    assert pipe.external_source_shm_statistics() == {"capacities": [], "per_sample_capacities": []}


class _Counting:
    """An iterator whose __iter__ does not rewind: once spent, a restart gives nothing."""

    def __init__(self, n):
        self.n, self.count = n, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.count >= self.n:
            raise StopIteration
        self.count += 1
        return [np.full(2, self.count, np.int32)]


def _empty_gen():
    return
    yield


def _run_quiet(source, parallel, runs):
    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, py_num_workers=1, py_start_method="spawn",
                    prefetch_queue_depth=1)
    with pipe:
        pipe.set_outputs(fn.external_source(source, parallel=parallel, batch=True, cycle="quiet"))
    pipe.build()
    seen = []
    for _ in range(runs):
        try:
            seen.append(int(np.asarray(pipe.run()[0].at(0))[0]))
        except StopIteration:
            seen.append("SI")
            pipe.reset()
    return seen


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("make, expected", [
    (lambda: _Counting(0), ["SI", "SI", "SI"]),
    (lambda: [], ["SI", "SI", "SI"]),
    (lambda: _empty_gen, ["SI", "SI", "SI"]),
    (lambda: _Counting(1), [1, "SI", "SI"]),
    (lambda: _Counting(2), [1, 2, "SI", "SI"]),
], ids=["iterator0", "list0", "genfn0", "iterator1", "iterator2"])
def test_cycle_quiet_restart_that_gives_nothing_ends_the_epoch(make, expected, parallel):
    # DALI 2.4 (measured, prefetch_queue_depth 1 and 2 alike): with cycle="quiet", a source that is
    # still empty when started over raises StopIteration at run() (again after each reset), where
    # torch_dali raised a DataError; DALI's test_external_source_parallel.py
    # ::test_cycle_quiet_non_resetable relies on it
    assert _run_quiet(make(), parallel, len(expected)) == expected


def _cb(info):
    return np.full(2, info.idx_in_epoch, np.int32)


def test_callback_pickler_and_pickle_by_value_as_dali():
    # DALI 2.4 (measured, CPU): py_callback_pickler with the 'fork' start method (the default) is
    # a ValueError when the Pipeline is made; with 'spawn', a value without dumps/loads that is no
    # tuple or list is a ValueError at build of a pipeline with a parallel source
    import pickle

    from torch_dali import pickling
    with pytest.raises(ValueError, match="py_callback_pickler"):
        Pipeline(batch_size=1, num_threads=1, device_id=None, py_callback_pickler=pickle)
    for pickler, ok in ((pickle, True), ((pickle, {}, {}), True), (5, False)):
        pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, py_start_method="spawn",
                        py_callback_pickler=pickler)
        with pipe:
            pipe.set_outputs(fn.external_source(_cb, batch=False, parallel=True))
        if ok:
            pipe.build()
            assert [t.tolist() for t in pipe.run()[0]] == [[0, 0], [1, 1]]
        else:
            with pytest.raises(ValueError, match="py_callback_pickler"):
                pipe.build()
    # nvidia.dali.pickling.pickle_by_value: marks functions (lambdas too), refuses other callables
    assert pickling.pickle_by_value(_cb) is _cb and _cb._dali_pickle_by_value is True
    pickling.pickle_by_value(lambda x: x)
    for bad in (len, _Batches(), _Batches().__next__):
        with pytest.raises(TypeError):
            pickling.pickle_by_value(bad)
