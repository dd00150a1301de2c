"""External source `source` callables run on the thread that runs the pipeline, when DALI 2.4 runs
them: the first run() fetches prefetch_queue_depth iterations, each later run() one more, DALI's
iterators one more after each batch; an error raised by the source reaches run() as it was raised.
(Counts below are DALI 2.4's for the same programs.)"""
from __future__ import annotations

import threading

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.plugin.pytorch import DALIGenericIterator


class _Counting:
    def __init__(self) -> None:
        self.calls: list[tuple[int, bool]] = []

    def __call__(self, info: int):
        self.calls.append((info, threading.current_thread() is threading.main_thread()))
        return [np.full(1, info, np.int32)] * 2


def _pipe(source, depth=2, **kw):
    @pipeline_def(batch_size=2, num_threads=2, device_id=None, prefetch_queue_depth=depth)
    def p():
        return fn.external_source(source, **kw)
    return p()


def test_run_fetches_depth_then_one_per_run_on_the_callers_thread():
    cb = _Counting()
    pipe = _pipe(cb)
    pipe.build()
    assert cb.calls == []
    seen = []
    for _ in range(3):
        seen.append((int(pipe.run()[0].at(0)[0]), len(cb.calls)))
    assert seen == [(0, 2), (1, 3), (2, 4)]  # DALI 2.4
    assert all(main for _, main in cb.calls)


def test_iterators_fetch_one_more_after_each_batch():
    cb = _Counting()
    it = DALIGenericIterator(_pipe(cb), ["x"])
    counts = [len(cb.calls)]
    for _ in range(3):
        next(it)
        counts.append(len(cb.calls))
    assert counts == [3, 3, 4, 5]  # DALI 2.4


def test_schedule_run_and_share_outputs():
    cb = _Counting()
    pipe = _pipe(cb, depth=1)
    pipe.schedule_run()
    assert len(cb.calls) == 1 and not pipe.empty()
    assert int(pipe.share_outputs()[0].at(0)[0]) == 0 and pipe.empty()
    pipe.schedule_run()
    assert len(cb.calls) == 2


def test_an_error_of_the_source_reaches_run_as_raised():
    class Boom(Exception):
        pass

    def bad(info):
        if info == 1:
            raise Boom("from the source")
        return [np.zeros(1)] * 2

    with pytest.raises(Boom):  # DALI 2.4: the source's own exception, from the first run()
        _pipe(bad).run()


def test_state_is_where_the_caller_stands_although_data_are_fetched_ahead():
    cb = _Counting()
    pipe = _pipe(cb, depth=3)
    for _ in range(2):
        pipe.run()
    state = pipe.state_dict()  # 4 iterations fetched, 2 taken
    again = _pipe(_Counting(), depth=3)
    again.build()
    again.load_state_dict(state)
    assert int(again.run()[0].at(0)[0]) == 2 == int(pipe.run()[0].at(0)[0])


def test_parallel_sample_sources_still_run_on_the_pipelines_threads():
    threads = set()

    def sample(si):
        threads.add(threading.current_thread() is threading.main_thread())
        return np.full(1, si.idx_in_epoch, np.int32)

    out = _pipe(sample, batch=False, parallel=True).run()[0]
    assert [int(t[0]) for t in out] == [0, 1] and threads == {False}


class _FedBySetup:
    """A pipeline fed in iter_setup(), which raises StopIteration after 3 batches (DALI's pattern)."""

    @staticmethod
    def make(depth: int):
        from torch_dali.pipeline import Pipeline

        class P(Pipeline):
            def __init__(self) -> None:
                super().__init__(batch_size=2, num_threads=1, device_id=None, prefetch_queue_depth=depth)
                self.k = self.calls = 0

            def define_graph(self):
                return fn.external_source(name="x")

            def iter_setup(self):
                self.calls += 1
                if self.k >= 3:
                    self.k = 0
                    raise StopIteration
                self.feed_input("x", [np.full(1, self.k, np.int32)] * 2)
                self.k += 1
        return P()


@pytest.mark.parametrize("depth", [1, 2])
def test_iter_setup_ending_an_epoch_keeps_the_batches_before(depth):
    pipe = _FedBySetup.make(depth)
    it = DALIGenericIterator(pipe, ["x"])
    seen = []
    for _ in range(2):
        seen.append(([int(b[0]["x"][0]) for b in it], pipe.calls))
        it.reset()
    assert seen == [([0, 1, 2], 4), ([0, 1, 2], 8)]  # DALI 2.4
    plain = _FedBySetup.make(depth)
    got = [int(np.array(plain.run()[0][0])[0]) for _ in range(3)]
    with pytest.raises(StopIteration):
        plain.run()
    assert got == [0, 1, 2] and plain.calls == 4
