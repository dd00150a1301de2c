"""nvidia.dali.plugin.jax's iterator over torch_dali pipelines: one dict of JAX arrays a step,
DALI's epochs and last-batch policies (PARTIAL refused), several pipelines joined, the
data_iterator decorator. DALI's own JAX cases (test_fw_iterators, checkpointing) run in
`python -m conformance`."""
from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from torch_dali import fn, pipeline_def  # noqa: E402
from torch_dali.plugin.base_iterator import LastBatchPolicy  # noqa: E402
from torch_dali.plugin.jax import DALIGenericIterator, data_iterator  # noqa: E402


@pipeline_def
def labels(n=11, shard_id=0, num_shards=1, pad=True):
    _, ls = fn.readers.file(files=[__file__] * n, labels=list(range(n)), name="reader", pad_last_batch=pad,
                            shard_id=shard_id, num_shards=num_shards)
    return ls, ls * 10


def _pipe(**kw):
    return labels(batch_size=2, device_id=None, num_threads=1, **kw)


def _values(batch, name="data"):
    assert isinstance(batch[name], jax.Array)
    return np.asarray(batch[name]).ravel().tolist()


@pytest.mark.parametrize("policy,want", [
    (LastBatchPolicy.FILL, [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 10]]),
    (LastBatchPolicy.DROP, [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]),
])
def test_epochs_by_reader_with_each_policy(policy, want):
    it = DALIGenericIterator(_pipe(), ["data", "tens"], reader_name="reader", last_batch_policy=policy,
                             auto_reset=True)
    assert len(it) == len(want)
    for _ in range(2):  # auto_reset: the next `for` is the next epoch, the same samples
        got = [b for b in it]
        assert [_values(b) for b in got] == want
        assert [_values(b, "tens") for b in got] == [[10 * v for v in w] for w in want]


def test_several_pipelines_stack_on_a_new_leading_axis():
    pipes = [_pipe(shard_id=i, num_shards=2) for i in range(2)]
    it = DALIGenericIterator(pipes, ["data", "tens"], reader_name="reader")
    got = [b["data"] for b in it]
    assert all(a.shape == (2, 2, 1) for a in got)
    # shards of 5 and 6 samples (DALI's split), the shorter one padded with its last sample
    assert [np.asarray(a).reshape(2, 2).tolist() for a in got] == [[[0, 1], [5, 6]], [[2, 3], [7, 8]],
                                                                  [[4, 4], [9, 10]]]


def test_arrays_are_copies_that_outlive_the_step():
    it = DALIGenericIterator(_pipe(n=40), ["data", "tens"], reader_name="reader")
    first = next(it)["data"]
    for _ in range(10):
        next(it)
    assert _values({"data": first}) == [0, 1]


@pytest.mark.parametrize("kw,msg", [
    (dict(last_batch_policy=LastBatchPolicy.PARTIAL), "partial last batch"),
    (dict(output_map=["data", "data"]), "distinct"),
    (dict(sharding="batch"), "sharding"),
])
def test_refusals_are_assertion_errors_as_dalis(kw, msg):
    kw = {"output_map": ["data", "tens"], "reader_name": "reader", **kw}
    with pytest.raises(AssertionError, match=msg):
        DALIGenericIterator(_pipe(), **kw)


def _two_outputs(n):
    _, ls = fn.readers.file(files=[__file__] * n, labels=list(range(n)), name="reader")
    return ls, ls + 1


def test_data_iterator_builds_the_pipeline_and_the_iterator():
    make = data_iterator(_two_outputs, output_map=["x", "y"], reader_name="reader", device_id=None, num_threads=1)
    assert [_values(b, "y") for b in make(4, batch_size=2)] == [[1, 2], [3, 4]]
    with pytest.raises(ValueError, match="num_threads"):  # a pipeline argument given twice
        make(4, batch_size=2, num_threads=2)


def test_iterator_submodule_as_dalis_package():
    # DALI 2.4's plugin.jax is a package: its JAX tests import
    # `from nvidia.dali.plugin.jax.iterator import DALIGenericIterator`
    import torch_dali.plugin.jax as package
    from torch_dali.plugin.jax import iterator
    assert iterator.DALIGenericIterator is package.DALIGenericIterator is DALIGenericIterator
    assert iterator.data_iterator is data_iterator
