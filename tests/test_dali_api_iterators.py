"""DALI's framework iterators without a reader: the epoch ends when the pipeline raises
StopIteration (an external source ran out), with DALI 2.4's counts for every combination of
epochs, iterations and auto_reset; plus DALIRaggedIterator and feed_ndarray."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from torch_dali import fn
from torch_dali.pipeline import Pipeline
from torch_dali.plugin.pytorch import DALIGenericIterator, DALIRaggedIterator, feed_ndarray
from torch_dali.tensors import TensorCPU


class _Source:
    """`n` batches per epoch, then StopIteration (and it starts over); `total` batches at most."""

    def __init__(self, n: int, bs: int, total: int = -1) -> None:
        self.n, self.bs, self.total, self.i = n, bs, total, 0

    def __iter__(self):
        self.i = 0
        return self

    def __next__(self):
        if self.i < self.n and self.total != 0:
            self.i += 1
            self.total -= 1
            return [np.arange(3, dtype=np.uint8)] * self.bs
        self.i = 0
        raise StopIteration


def _pipe(src, bs):
    pipe = Pipeline(batch_size=bs, num_threads=2, device_id=None, prefetch_queue_depth=1)
    with pipe:
        out = fn.external_source(source=src)
    pipe.set_outputs(out)
    return pipe


@pytest.mark.parametrize("epochs,n,total,auto_reset,size", [
    (3, 2, -1, True, -1), (3, 2, -1, False, -1), (3, 2, 3, False, -1), (3, 2, 3, True, -1),
    (3, 2, -1, False, "n"), (3, 2, 3, False, "n"), (6, 9, 17, True, "n"), (1, 1, -1, True, -1),
])
def test_epochs_end_on_stop_iteration(epochs, n, total, auto_reset, size):
    bs = 2
    src = _Source(n, bs, total)
    loader = DALIGenericIterator(_pipe(src, bs), ["data"], size=n * bs if size == "n" else size,
                                 auto_reset=auto_reset)
    count = 0
    for _ in range(epochs):
        for _ in loader:
            count += 1
        if not auto_reset:
            loader.reset()
    assert count == (n * epochs if total < 0 else min(total, n * epochs))


def test_size_rules():
    with pytest.raises(ValueError, match="single pipeline"):
        DALIGenericIterator([_pipe(_Source(1, 1), 1), _pipe(_Source(1, 1), 1)], ["x"], size=-1)
    with pytest.raises(ValueError, match="Size cannot be 0"):
        DALIGenericIterator(_pipe(_Source(1, 1), 1), ["x"], size=0)
    it = DALIGenericIterator(_pipe(_Source(2, 1), 1), ["x"])
    assert len(it) == 0 and [b[0]["x"].shape for b in it] == [(1, 3), (1, 3)]


def test_ragged_iterator_and_feed_ndarray():
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pipe:
        ragged = fn.external_source(lambda: [np.ones((1, 2), np.float32), np.ones((3, 2), np.float32)])
        dense = fn.external_source(lambda: [np.zeros(2, np.int32), np.ones(2, np.int32)])
    pipe.set_outputs(ragged, ragged, dense)
    it = DALIRaggedIterator(pipe, ["coo", "list", "ids"], output_types=[
        DALIRaggedIterator.SPARSE_COO_TAG, DALIRaggedIterator.SPARSE_LIST_TAG, DALIRaggedIterator.DENSE_TAG], size=4)
    batch = next(it)[0]
    assert batch["coo"].is_sparse and len(batch["coo"]) == 2 and batch["coo"].to_dense().shape == (2, 3, 2)
    assert [t.shape for t in batch["list"]] == [(1, 2), (3, 2)] and not batch["ids"].is_sparse
    arr = np.arange(6, dtype=np.int16).reshape(2, 3)
    target = torch.empty(2, 3, dtype=torch.int16)
    assert feed_ndarray(TensorCPU(arr), target) is target and target.tolist() == arr.tolist()
    with pytest.raises(ValueError, match="element types differ"):
        feed_ndarray(TensorCPU(arr), torch.empty(2, 3))


@pytest.mark.parametrize("auto_reset", [True, False])
def test_next_after_the_end(auto_reset):
    """With auto_reset the iterator starts the next epoch itself: next() goes on without iter()."""
    loader = DALIGenericIterator(_pipe(_Source(2, 1), 1), ["data"], auto_reset=auto_reset)
    assert len(list(loader)) == 2
    if auto_reset:
        assert next(loader)[0]["data"].shape == (1, 3)
    else:
        with pytest.raises(StopIteration):
            next(loader)


def test_reset_starts_every_source_over():
    """Two sources ending together (a list and a generator function, cycle='raise'): the one
    that raised first and the other both start the next epoch (DALI's epochs are the pipeline's)."""
    batches = [[np.float32([1.5])], [np.float32([2.5])]]

    def gen():
        yield from batches

    pipe = Pipeline(batch_size=1, num_threads=1, device_id=None, prefetch_queue_depth=1)
    pipe.set_outputs(fn.external_source(batches, cycle="raise"), fn.external_source(gen, cycle="raise"))
    for _ in range(3):
        for b in batches:
            a, g = pipe.run()
            assert a.at(0).tolist() == g.at(0).tolist() == b[0].tolist()
        with pytest.raises(StopIteration):
            pipe.run()
        pipe.reset()
