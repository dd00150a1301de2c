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
