"""Behaviours DALI's PyTorch documentation programs rely on (hid-23's notebook pass)."""
from __future__ import annotations

import random

import numpy as np

from torch_dali import fn
from torch_dali.pipeline import Pipeline


def test_unseeded_pipeline_leaves_python_random_alone():
    # DALI 2.4 (measured): Pipeline(3, 2, None) without a seed does not draw from Python's global
    # `random`; the PyTorch external-input notebook seeds/uses `random.shuffle` around it
    random.seed(5)
    expected = random.random()
    random.seed(5)
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        pipe.set_outputs(fn.external_source(source=lambda: [np.zeros(1, np.uint8)] * 2))
    pipe.build()
    pipe.run()
    assert random.random() == expected
    # and unseeded pipelines still differ from each other
    seeds = {Pipeline(batch_size=1, num_threads=1, device_id=None).seed for _ in range(4)}
    assert len(seeds) > 1


def _per_sample(info):
    return np.full((2,), info.idx_in_epoch, np.int32)


def test_start_py_workers_is_accepted_like_dali():
    # DALI 2.4 (measured): start_py_workers() returns None before build, after build, twice, and on
    # a pipeline without parallel sources; the parallel source then runs as usual
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, py_num_workers=2, py_start_method="spawn")
    with pipe:
        pipe.set_outputs(fn.external_source(source=_per_sample, batch=False, parallel=True))
    assert pipe.start_py_workers() is None
    assert pipe.start_py_workers() is None
    pipe.build()
    assert pipe.start_py_workers() is None
    out, = pipe.run()
    assert np.asarray(out.at(1)).tolist() == [1, 1]


def test_loader_evaluator_replay_and_log():
    # DALI 2.4's LoaderEvaluator (measured on a list of batches): replay keeps the last
    # num_cached_batches batches and yields len(loader) of them cyclically; log passes through
    import importlib
    mod = importlib.import_module("torch_dali.plugin.pytorch.loader_evaluator")
    loader = [("b", i) for i in range(5)]
    rep = mod.LoaderEvaluator(loader, mode="replay", num_cached_batches=2)
    assert len(rep) == 5 and rep.cache_ready
    assert [b[1] for b in rep] == [3, 4, 3, 4, 3]
    m = rep.get_metrics()
    assert (m["mode"], m["total_batches"], m["cached_batches"]) == ("replay", 5, 2)
    log = mod.LoaderEvaluator(loader, mode="other")
    assert log.get_metrics() == {}
    assert [b[1] for b in log] == [0, 1, 2, 3, 4] and log.get_metrics()["total_batches"] == 5
    empty = mod.LoaderEvaluator(loader, mode="replay", num_cached_batches=0)
    assert not empty.cache_ready
    try:
        list(empty)
    except RuntimeError:
        pass
    else:
        raise AssertionError("replay with nothing cached must raise RuntimeError")


def _run_one(samples, layout=None):
    pipe = Pipeline(batch_size=len(samples), num_threads=1, device_id=None, seed=1)
    with pipe:
        pipe.set_outputs(fn.external_source(source=lambda: samples, layout=layout))
    pipe.build()
    return pipe.run()[0]


def test_batch_print_and_repr_as_dali():
    # texts printed by DALI 2.4 for the same batches (measured); DALI's autoaugment notebook prints
    # its policy ids this way
    ids = _run_one([np.int32(v) for v in (0, 6, 1)])
    assert str(ids) == ('TensorListCPU(\n    [0, 6, 1],\n    dtype=DALIDataType.INT32,\n    device="cpu",\n'
                        '    num_samples=3,\n    shape=[(), (), ()])')
    ragged = _run_one([np.arange(i + 2, dtype=np.float32) for i in range(2)])
    assert str(ragged) == ('TensorListCPU(\n    [[0. 1.],\n    [0. 1. 2.]],\n    dtype=DALIDataType.FLOAT,\n'
                           '    device="cpu",\n    num_samples=2,\n    shape=[(2,), (3,)])')
    hwc = _run_one([np.full((2, 1, 1), i, np.uint8) for i in range(2)], layout="HWC")
    assert str(hwc) == ('TensorListCPU(\n    [[[[0]]\n\n     [[0]]],\n\n\n    [[[1]]\n\n     [[1]]]],\n'
                        '    dtype=DALIDataType.UINT8,\n    layout="HWC",\n    device="cpu",\n    num_samples=2,\n'
                        '    shape=[(2, 1, 1), (2, 1, 1)])')
    assert repr(hwc) == ('TensorListCPU(\n    dtype=DALIDataType.UINT8,\n    layout="HWC",\n    device="cpu",\n'
                         '    num_samples=2,\n    shape=[(2, 1, 1), (2, 1, 1)])')
    many = _run_one([np.float32(i) for i in range(20)])
    assert repr(many).endswith("num_samples=20,\n    shape=[(), (), ..., (), ()])")
    big = str(_run_one([np.full((300,), i, np.int16) for i in range(6)]))
    assert big.count("...") == 1 and "\n    ...,\n" in big  # samples 2 and 3 elided (DALI: the same)


class _CountingIterable:
    def __init__(self):
        self.calls = []

    def __iter__(self):
        self.calls.append(len(self.calls))
        self.i = 0
        return self

    def __next__(self):
        if self.i >= 2:
            raise StopIteration
        self.i += 1
        return [np.full((1,), self.i, np.int32)] * 2


def test_iterable_source_is_started_at_definition():
    # DALI 2.4 (measured): fn.external_source(source=iterable) calls iter() while the pipeline is
    # defined, not at build; build and reset() do not call it again
    src = _CountingIterable()
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, prefetch_queue_depth=1)
    with pipe:
        out = fn.external_source(source=src)
        assert src.calls == [0]
        pipe.set_outputs(out)
    pipe.build()
    assert src.calls == [0]
    assert [int(np.asarray(pipe.run()[0].at(0))[0]) for _ in range(2)] == [1, 2]
    assert src.calls == [0]
