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
