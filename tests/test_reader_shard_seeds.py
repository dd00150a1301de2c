"""Sharded `random_shuffle` readers built with the DALI Pipeline API: the ranks' shards stay
disjoint and cover the data set whatever the pipeline seeds are, as in DALI 2.4 (measured: 4
shards of 40 files with pipeline seeds 12..15, or none, read all 40 in one epoch). DALI code gives
each rank its own pipeline seed (`seed=12 + rank`) or none; torch_dali's global permutation is
therefore drawn from a seed every rank shares."""
from __future__ import annotations

import pytest
import torch
from torch.utils.data import DistributedSampler

from torch_dali import fn, pipeline_def

N, R, BATCH = 40, 4, 10


@pipeline_def(batch_size=BATCH, num_threads=1, device_id=None)
def _labels(files, shard_id, reader_seed=None):
    extra = {} if reader_seed is None else {"seed": reader_seed}
    _, label = fn.readers.file(files=files, labels=list(range(N)), shard_id=shard_id, num_shards=R,
                               random_shuffle=True, name="Reader", **extra)
    return label


def _epochs(files, seeds, reader_seed=None, epochs=2):
    pipes = [_labels(files, r, reader_seed, seed=s) for r, s in enumerate(seeds)]
    seen = [[[] for _ in pipes] for _ in range(epochs)]
    for e in range(epochs):
        for r, p in enumerate(pipes):
            (out,) = p.run()
            seen[e][r] = [int(torch.as_tensor(x).reshape(-1)[0]) for x in out]
    return seen


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("shard_seeds")
    paths = []
    for i in range(N):
        p = root / f"{i:03d}.bin"
        p.write_bytes(bytes([i]))
        paths.append(str(p))
    return paths


@pytest.mark.parametrize("seeds", [[12 + r for r in range(R)], [-1] * R], ids=["per-rank", "none"])
def test_shards_cover_the_data_set_whatever_the_pipeline_seeds(files, seeds):
    for epoch in _epochs(files, seeds):
        assert sorted(i for shard in epoch for i in shard) == list(range(N))


def test_a_seed_given_to_the_reader_is_the_distributed_sampler_seed(files):
    seen = _epochs(files, [12 + r for r in range(R)], reader_seed=5)
    for e, epoch in enumerate(seen):
        for r, shard in enumerate(epoch):
            s = DistributedSampler(range(N), num_replicas=R, rank=r, shuffle=True, seed=5)
            s.set_epoch(e)
            assert shard == list(s)


def test_one_shard_still_follows_the_pipeline_seed(files):
    @pipeline_def(batch_size=N, num_threads=1, device_id=None)
    def one():
        _, label = fn.readers.file(files=files, labels=list(range(N)), random_shuffle=True)
        return label

    def order(seed):
        (out,) = one(seed=seed).run()
        return [int(torch.as_tensor(x).reshape(-1)[0]) for x in out]

    assert order(1) == order(1)
    assert order(1) != order(2)
