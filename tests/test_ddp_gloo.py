"""DDP on the CPU: 2 and 4 real processes in a gloo process group, each with its own
torch_dali.DataLoader. Each rank reads DistributedSampler(shuffle=True, seed)'s shard, the shards are
disjoint and cover the data set, and every rank runs the same number of steps, also when some ranks
skip bad files (on_error="skip") more than others; a training step's all_reduce never waits on a
rank that ran out."""
from __future__ import annotations

import socket

import pytest
import torch
import torch.multiprocessing as mp
from torch.utils.data import DistributedSampler

N = 26  # 4 does not divide it: DistributedSampler pads by wrapping around


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _files(root, bad=()):
    """N files; with `bad`, small real JPEGs of which those indices are garbage."""
    if not bad:  # bytes only: the reader lists and reads, nothing decodes
        out = []
        for i in range(N):
            p = root / f"{i:03d}.jpg"
            p.write_bytes(bytes([i]))
            out.append(str(p))
        return out
    from torch_dali.sample_data import make_image_folder
    out = sorted(p for p, _ in make_image_folder(root, images_per_class=4, seed=2, mean_hw=(20, 24)))[:N]
    for i in bad:
        with open(out[i], "wb") as f:
            f.write(b"garbage")
    return out


def _worker(rank, world, port, files, skip, out):
    import datetime
    import warnings

    import torch.distributed as dist

    import torch_dali
    from torch_dali import fn, pipeline_def
    warnings.simplefilter("ignore", RuntimeWarning)
    # a rank that ran out would leave the others waiting in all_reduce: time out instead of hanging
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    try:
        @pipeline_def(num_threads=1)
        def pipe():
            data, labels = fn.readers.file(files=files, labels=list(range(len(files))), random_shuffle=True,
                                           name="Reader", on_error="skip" if skip else "raise")
            if skip:  # the decoder checks each file for the reader, which leaves the garbage out
                return fn.resize(fn.decoders.image(data, on_error="skip"), size=(8, 8)), labels
            return labels
        dl = torch_dali.DataLoader(pipe, batch_size=3, seed=11, device="cpu")
        assert (dl.rank, dl.world_size) == (rank, world)
        epochs = []
        for epoch in range(2):
            dl.set_epoch(epoch)
            steps, seen = 0, []
            for batch in dl:
                labels = batch[-1]
                t = torch.ones(1)
                dist.all_reduce(t)  # a DDP step: every rank must get here as often as the others
                steps += 1
                seen += labels.tolist()
            epochs.append((steps, len(dl), seen))
        out[rank] = epochs
    finally:
        dist.destroy_process_group()


def _run(world, files, skip):
    out = mp.Manager().dict()
    mp.spawn(_worker, args=(world, _port(), files, skip, out), nprocs=world, join=True)
    return [out[r] for r in range(world)]


@pytest.mark.parametrize("world", [2, 4])
def test_gloo_ranks_read_distributed_sampler_shards(tmp_path, world):
    files = _files(tmp_path)
    res = _run(world, files, skip=False)
    for epoch in range(2):
        union = []
        for rank in range(world):
            steps, length, seen = res[rank][epoch]
            s = DistributedSampler(range(N), num_replicas=world, rank=rank, shuffle=True, seed=11)
            s.set_epoch(epoch)
            assert seen == list(s), (rank, epoch)
            assert steps == length == res[0][epoch][1]
            union += seen
        assert set(union) == set(range(N))
        assert len(union) - len(set(union)) == -N % world  # only DistributedSampler's padding repeats


@pytest.mark.parametrize("world", [2, 4])
def test_gloo_ranks_stay_in_step_when_some_skip_more(tmp_path, world):
    bad = (1, 2, 5, 9, 17)  # spread unevenly over the shards
    files = _files(tmp_path, bad)
    res = _run(world, files, skip=True)
    for epoch in range(2):
        lengths = {res[rank][epoch][1] for rank in range(world)}
        steps = {res[rank][epoch][0] for rank in range(world)}
        assert len(lengths) == 1 and steps == lengths, (epoch, res)
        seen = [i for rank in range(world) for i in res[rank][epoch][2]]
        assert not set(seen) & set(bad)
