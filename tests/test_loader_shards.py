"""DataLoader(seed=s) reads exactly torch's DistributedSampler(shuffle=True, seed=s) shards, for
several world sizes, seeds and epochs; a DistributedSampler passed as `sampler` gives the same."""
from __future__ import annotations

import pytest
import torch
from torch.utils.data import DistributedSampler

import torch_dali
from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError

N = 23  # no world size below divides it: DistributedSampler pads by wrapping around


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("shards")
    out = []
    for i in range(N):  # the reader only lists and reads bytes here: no decoding
        p = d / f"{i:03d}.jpg"
        p.write_bytes(bytes([i]))
        out.append(str(p))
    return out


def _pipe(files, pipeline_seed=None):
    kw = {} if pipeline_seed is None else {"seed": pipeline_seed}

    @pipeline_def(num_threads=1, **kw)
    def p():
        _, labels = fn.readers.file(files=files, labels=list(range(len(files))), random_shuffle=True,
                                    name="Reader")
        return labels
    return p


def _indices(loader):
    return [i for (labels,) in loader for i in labels.tolist()]


def _sampler(rank, world, seed, epoch):
    s = DistributedSampler(range(N), num_replicas=world, rank=rank, shuffle=True, seed=seed)
    s.set_epoch(epoch)
    return list(s)


@pytest.mark.parametrize("world", [1, 2, 3, 5])
@pytest.mark.parametrize("seed", [0, 7, 123456789])
def test_seed_gives_distributed_samplers_shards(files, world, seed):
    for rank in range(world):
        dl = torch_dali.DataLoader(_pipe(files), batch_size=4, seed=seed, rank=rank, world_size=world, device="cpu")
        for epoch in (0, 1, 4):
            dl.set_epoch(epoch)
            assert _indices(dl) == _sampler(rank, world, seed, epoch), (rank, epoch)
        assert dl.seed == seed


def test_without_seed_the_pipelines_seed_is_the_shards(files):
    dl = torch_dali.DataLoader(_pipe(files, pipeline_seed=31), batch_size=4, rank=1, world_size=3, device="cpu")
    assert dl.seed == 31
    assert _indices(dl) == _sampler(1, 3, 31, 0)


def test_unseeded_ranks_agree_as_distributed_samplers_default(files):
    """No seed anywhere: each process would draw its own; ranks must still split one permutation."""
    got = []
    for rank in range(2):
        dl = torch_dali.DataLoader(_pipe(files), batch_size=4, rank=rank, world_size=2, device="cpu")
        assert dl.seed == 0
        got.append(_indices(dl))
    assert got == [_sampler(0, 2, 0, 0), _sampler(1, 2, 0, 0)]


def test_generator_seeds_like_seed(files):
    g = torch.Generator().manual_seed(99)
    dl = torch_dali.DataLoader(_pipe(files), batch_size=4, generator=g, device="cpu")
    assert dl.seed == 99 and dl.pipe.seed == 99
    assert _indices(dl) == _sampler(0, 1, 99, 0)
    with pytest.raises(ArgumentError, match="generator"):
        torch_dali.DataLoader(_pipe(files), batch_size=4, generator=g, seed=5, device="cpu")


def test_a_distributed_sampler_as_sampler_and_its_set_epoch(files):
    for rank in range(3):
        sampler = DistributedSampler(range(N), num_replicas=3, rank=rank, shuffle=True, seed=5)
        dl = torch_dali.DataLoader(_pipe(files, pipeline_seed=1), batch_size=4, sampler=sampler, device="cpu")
        assert (dl.rank, dl.world_size, dl.seed, len(dl)) == (rank, 3, 5, len(range(0, len(sampler), 4)))
        for epoch in (0, 2, 3):
            sampler.set_epoch(epoch)  # the loop's call on its own sampler steers the loader
            assert _indices(dl) == _sampler(rank, 3, 5, epoch)


def test_the_samplers_set_epoch_repeated_reruns_that_epoch_as_torch(files):
    # sampler.epoch stays the same, yet torch's DataLoader reads the epoch again, not the next one
    sampler = DistributedSampler(range(N), num_replicas=2, rank=0, shuffle=True, seed=5)
    dl = torch_dali.DataLoader(_pipe(files), batch_size=4, sampler=sampler, device="cpu")
    got, want = [], []
    for epoch in (0, 0, 3, 3, 3, 1):
        sampler.set_epoch(epoch)
        got.append(_indices(dl))
        want.append(list(torch.utils.data.DataLoader(range(N), batch_size=4, sampler=sampler)))
    assert got == [[i for b in w for i in b.tolist()] for w in want]
    assert _indices(dl) == _sampler(0, 2, 5, 2)  # no set_epoch(): the loader counts on, from 1


def test_samplers_the_reader_cannot_follow_are_refused(files):
    with pytest.raises(ArgumentError, match="interleaves"):
        torch_dali.DataLoader(_pipe(files), batch_size=4, device="cpu",
                              sampler=DistributedSampler(range(N), num_replicas=2, rank=0, shuffle=False))
    with pytest.raises(ArgumentError, match="drop_last"):
        torch_dali.DataLoader(_pipe(files), batch_size=4, device="cpu",
                              sampler=DistributedSampler(range(N), num_replicas=2, rank=0, drop_last=True))
    with pytest.raises(ArgumentError, match="22 samples"):
        torch_dali.DataLoader(_pipe(files), batch_size=4, device="cpu",
                              sampler=DistributedSampler(range(N - 1), num_replicas=2, rank=0))
    with pytest.raises(ArgumentError, match="SubsetRandomSampler.*shuffle="):
        torch_dali.DataLoader(_pipe(files), batch_size=4, device="cpu",
                              sampler=torch.utils.data.SubsetRandomSampler([1, 2, 3]))
    with pytest.raises(ArgumentError, match="mutually|both"):
        torch_dali.DataLoader(_pipe(files), batch_size=4, device="cpu", shuffle=True,
                              sampler=torch.utils.data.SequentialSampler(range(N)))


def test_a_sampler_given_to_the_loader_still_pickles(tmp_path):
    """The loader hooks the sampler's set_epoch(); the sampler still pickles and copies (with its
    class's own set_epoch, the loader not part of its state), and the hook still follows."""
    import copy
    import pickle

    from torch.utils.data import DistributedSampler

    import torch_dali
    from torch_dali import fn, pipeline_def
    from torch_dali.sample_data import make_image_folder

    files = [p for p, _ in make_image_folder(tmp_path, images_per_class=2, seed=1, mean_hw=(16, 16))]

    @pipeline_def(num_threads=1, seed=7)
    def pipe():
        _, labels = fn.readers.file(files=files, labels=list(range(len(files))), name="Reader")
        return labels,

    s = DistributedSampler(range(len(files)), num_replicas=2, rank=0, shuffle=True, seed=0)
    dl = torch_dali.DataLoader(pipe, batch_size=2, device="cpu", sampler=s)
    for other in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        other.set_epoch(3)
        assert other.epoch == 3 and s.epoch == 0
    s.set_epoch(2)
    assert dl.epoch == 2
