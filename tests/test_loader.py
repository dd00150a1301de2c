"""torch_dali.DataLoader behaves like torch's DataLoader in a training loop."""
from __future__ import annotations

import math

import pytest
import torch

import torch_dali
from torch_dali import fn, pipeline_def, types
from torch_dali.errors import ArgumentError
from torch_dali.plugin.pytorch import LastBatchPolicy
from torch_dali.sample_data import make_image_folder


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("imgs")
    items = make_image_folder(root, images_per_class=3, seed=1, mean_hw=(48, 64))  # 8 classes -> 24 files
    return [p for p, _ in items]


def index_pipeline(files, shuffle=True, decode=False):
    """Labels are the sample indices, so tests can see exactly which samples came out."""
    @pipeline_def(num_threads=2, seed=7)
    def pipe():
        jpegs, labels = fn.readers.file(files=files, labels=list(range(len(files))),
                                        random_shuffle=shuffle, name="Reader")
        if decode:
            images = fn.decoders.image(jpegs)
            images = fn.resize(images, resize_x=32, resize_y=32)
            images = fn.crop_mirror_normalize(images, mean=[128.0], std=[64.0])
            return images, labels
        return labels,
    return pipe


def epoch_indices(loader):
    out = []
    for batch in loader:
        labels = batch[-1] if isinstance(batch, tuple) else batch["label"]
        assert labels.dtype == torch.int64 and labels.dim() == 1
        out += labels.tolist()
    return out


def test_epochs_are_reiterable_permutations_with_partial_last_batch(files):
    n = len(files)
    dl = torch_dali.DataLoader(index_pipeline(files), batch_size=5, device="cpu")
    assert len(dl) == math.ceil(n / 5) and dl.batch_size == 5 and not dl.drop_last
    assert len(dl.dataset) == n
    e0 = epoch_indices(dl)
    e1 = epoch_indices(dl)  # no reset needed: a new iter() is the next epoch
    assert sorted(e0) == list(range(n)) and sorted(e1) == list(range(n))
    assert e0 != e1
    sizes = [b[0].shape[0] for b in dl]
    assert sizes == [5, 5, 5, 5, 4]
    dl.set_epoch(0)
    assert epoch_indices(dl) == e0  # same seed + epoch -> same permutation


def test_drop_last_and_fill(files):
    dl = torch_dali.DataLoader(index_pipeline(files), batch_size=5, drop_last=True, device="cpu")
    assert len(dl) == 4
    assert [b[0].shape[0] for b in dl] == [5] * 4
    fill = torch_dali.DataLoader(index_pipeline(files), batch_size=5, device="cpu",
                                 last_batch_policy=LastBatchPolicy.FILL)
    assert [b[0].shape[0] for b in fill] == [5] * 5


def test_ranks_match_distributed_sampler_and_cover_dataset(files):
    n, world = len(files), 3
    seen = []
    for rank in range(world):
        dl = torch_dali.DataLoader(index_pipeline(files), batch_size=4, rank=rank, world_size=world,
                                   device="cpu")
        dl.set_epoch(2)
        got = epoch_indices(dl)
        sampler = torch.utils.data.DistributedSampler(range(n), num_replicas=world, rank=rank,
                                                      shuffle=True, seed=dl.seed)
        sampler.set_epoch(2)
        assert got == list(sampler)
        assert len(dl) == math.ceil(math.ceil(n / world) / 4)
        seen += got
    assert set(seen) == set(range(n))


def test_exact_mode_covers_each_sample_once(files):
    n, world = len(files) - 1, 4  # 23 samples: ranks get uneven shards, no padding
    seen = []
    for rank in range(world):
        dl = torch_dali.DataLoader(index_pipeline(files[:n], shuffle=False), batch_size=4, rank=rank,
                                   world_size=world, exact=True, device="cpu")
        seen += epoch_indices(dl)
    assert sorted(seen) == list(range(n))
    with pytest.raises(ArgumentError, match="exact"):
        torch_dali.DataLoader(index_pipeline(files), batch_size=4, exact=True, device="cpu")


def test_state_dict_resume_mid_epoch_is_bit_identical(files):
    def make():
        return torch_dali.DataLoader(index_pipeline(files, decode=True), batch_size=4, device="cpu",
                                     prefetch_queue_depth=3)

    dl = make()
    epoch_indices(dl)  # one full epoch first
    it = iter(dl)
    for _ in range(2):
        next(it)
    state = dl.state_dict()
    rest = [(x.clone(), y.clone()) for x, y in it]
    resumed = make()
    resumed.load_state_dict(state)
    again = list(resumed)
    assert len(again) == len(rest) == len(dl) - 2
    for (x0, y0), (x1, y1) in zip(rest, again):
        assert torch.equal(x0, x1) and torch.equal(y0, y1)
    # and the epoch after that continues as the original would
    assert epoch_indices(resumed) == epoch_indices(dl)


def test_output_map_dtype_and_channels_last(files):
    dl = torch_dali.DataLoader(index_pipeline(files, decode=True), batch_size=4, device="cpu",
                               output_map=["image", "label"], dtype=torch.bfloat16,
                               memory_format=torch.channels_last)
    batch = next(iter(dl))
    x = batch["image"]
    assert x.dtype == torch.bfloat16 and x.shape == (4, 3, 32, 32)
    assert x.is_contiguous(memory_format=torch.channels_last)
    assert batch["label"].dtype == torch.int64


def test_factory_yaml_and_bad_arguments(files, tmp_path):
    pipe = index_pipeline(files)(batch_size=6)
    path = tmp_path / "p.yaml"
    pipe.serialize(filename=str(path))
    dl = torch_dali.DataLoader(str(path), device="cpu")
    assert dl.batch_size == 6 and sorted(epoch_indices(dl)) == list(range(len(files)))
    with pytest.raises(ArgumentError, match="dtype"):
        torch_dali.DataLoader(index_pipeline(files), batch_size=2, dtype=torch.int32)
    with pytest.raises(ArgumentError, match="rank"):
        torch_dali.DataLoader(index_pipeline(files), batch_size=2, rank=3, world_size=2)


def test_default_device_is_cpu_without_cuda(files, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    dl = torch_dali.DataLoader(index_pipeline(files), batch_size=4)
    assert dl.device.type == "cpu"
    assert next(iter(dl))[0].device.type == "cpu"


def test_resnet18_trains_a_few_steps(files):
    torchvision = pytest.importorskip("torchvision")

    @pipeline_def(num_threads=2, seed=3)
    def train(file_root):
        jpegs, labels = fn.readers.file(file_root=file_root, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, output_type=types.RGB)
        images = fn.random_resized_crop(images, size=(64, 64))
        images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(),
                                          mean=[123.7, 116.3, 103.5], std=[58.4, 57.1, 57.4])
        return images, labels

    import os
    root = os.path.dirname(os.path.dirname(files[0]))
    loader = torch_dali.DataLoader(train, batch_size=8, device="cpu", file_root=root) \
        if False else torch_dali.DataLoader(lambda **kw: train(root, **kw), batch_size=8, device="cpu")
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=8)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for epoch in range(2):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss))
    assert len(losses) == 2 * len(loader) == 6
    assert all(math.isfinite(v) for v in losses)


def _ddp_worker(rank, world, port, files, out):
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        dl = torch_dali.DataLoader(index_pipeline(files), batch_size=4, device="cpu")
        assert (dl.rank, dl.world_size) == (rank, world)
        seen = epoch_indices(dl)
        counts = torch.tensor([len(dl)])
        dist.all_reduce(counts, op=dist.ReduceOp.MAX)
        assert int(counts) == len(dl)  # every rank runs the same number of steps
        out[rank] = seen
    finally:
        dist.destroy_process_group()


def test_ddp_ranks_from_process_group_are_disjoint(files):
    import socket
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    n = len(files) - 2  # 22 samples on 2 ranks: 11 each, no padding needed
    out = mp.Manager().dict()
    mp.spawn(_ddp_worker, args=(2, port, files[:n], out), nprocs=2, join=True)
    a, b = out[0], out[1]
    assert len(a) == len(b) == n // 2
    assert not set(a) & set(b) and set(a) | set(b) == set(range(n))


def test_skipped_samples_end_epochs_right(tmp_path):
    good = make_image_folder(tmp_path / "data", images_per_class=2, seed=4, mean_hw=(32, 32))
    bad = tmp_path / "data" / good[0][0].split("/")[-2] / "zz_bad.jpg"
    bad.write_bytes(b"not a jpeg at all")
    files = sorted([p for p, _ in good] + [str(bad)])
    labels = list(range(len(files)))
    bad_index = files.index(str(bad))

    @pipeline_def(num_threads=2, seed=9)
    def pipe():
        jpegs, lab = fn.readers.file(files=files, labels=labels, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, on_error="skip")
        return fn.resize(images, resize_x=8, resize_y=8), lab

    dl = torch_dali.DataLoader(pipe, batch_size=5, device="cpu")
    for _ in range(2):
        got = epoch_indices(dl)
        assert sorted(got) == [i for i in labels if i != bad_index]  # each good sample once per epoch
    assert any("zz_bad.jpg" in str(s) for s in dl.pipe.skipped())


def test_ranks_stay_in_step_when_one_skips_more(tmp_path):
    """on_error="skip" with several ranks: a rank whose shard holds bad files still yields len()
    batches (padded with the samples that follow), so a DDP step never waits on a rank that ran
    out. One process keeps ending its epoch where the good samples end."""
    import warnings
    warnings.simplefilter("ignore", RuntimeWarning)
    from torch_dali.sample_data import make_image_folder
    files = [p for p, _ in make_image_folder(tmp_path, images_per_class=4, seed=1, mean_hw=(24, 32))][:16]
    for k in (0, 2, 4, 6, 8):  # five bad files, four of them in rank 0's shard
        with open(files[k], "wb") as f:
            f.write(b"garbage")

    def make(**kw):
        @pipeline_def(seed=3)
        def p():
            jpegs, labels = fn.readers.file(files=files, labels=list(range(16)), name="R", on_error="skip")
            return fn.resize(fn.decoders.image(jpegs, on_error="skip"), size=(8, 8)), labels
        return p(**kw)
    counts = []
    for rank in range(2):
        dl = torch_dali.DataLoader(make, batch_size=4, rank=rank, world_size=2, device="cpu", num_threads=1)
        for _ in range(2):
            batches = [labels.tolist() for _, labels in dl]
            assert all(batches) and len(batches) == len(dl)
            counts.append(len(batches))
    assert counts == [2, 2, 2, 2]
    one = torch_dali.DataLoader(make, batch_size=4, device="cpu", num_threads=1)
    assert sum(len(labels) for _, labels in one) == 11  # the good samples, once


def test_ranks_draw_their_own_augmentations_and_keep_given_seeds(files):
    """With several ranks, unseeded random ops draw differently on each rank (as each rank's own
    DataLoader workers would), the same on a rank every time; an op given `seed=` draws alike."""
    def make(**kw):
        @pipeline_def(seed=5)
        def p():
            jpegs, labels = fn.readers.file(files=files, labels=list(range(len(files))), name="R")
            return fn.random.uniform(range=(0, 1)), fn.random.uniform(range=(0, 1), seed=77), labels
        return p(**kw)

    def first(rank, world):
        dl = torch_dali.DataLoader(make, batch_size=4, rank=rank, world_size=world, device="cpu", num_threads=1)
        free, fixed, _ = next(iter(dl))
        return free.view(-1).tolist(), fixed.view(-1).tolist()

    r0, r1 = first(0, 2), first(1, 2)
    assert r0 == first(0, 2)  # reproducible per rank
    assert r0[0] != r1[0]  # the rank's own draws
    assert r0[1] == r1[1]  # seed=77 given: the same draws on every rank
    # one rank: the pipeline's own seeds, as when the pipeline runs without the loader
    single = make(batch_size=4, num_threads=1, device_id=None)
    single.build()
    assert single.run()[0].as_tensor().view(-1).tolist() == first(0, 1)[0]


def test_the_loaders_pipeline_is_marked_as_a_training_feed(files):
    """torch_dali.DataLoader builds its pipeline as one feeding a training loop (its decoders and
    streams then keep out of the training's way: `_knobs.training_feed`); a pipeline built directly
    is not one."""
    dl = torch_dali.DataLoader(index_pipeline(files, decode=True), batch_size=5, device="cpu")
    assert dl.pipe.feeds_training and dl.pipe.executor.plan.feeds_training
    decoders = [op for op in dl.pipe.executor.plan.ops.values() if hasattr(op, "hw_decoder_load")
                or type(op).__name__ == "ImageDecoder"]
    assert decoders and all(op.feeds_training for op in decoders)
    pipe = index_pipeline(files, decode=True)(batch_size=5, device_id=None)
    pipe.build()
    assert not pipe.feeds_training and not pipe.executor.plan.feeds_training
