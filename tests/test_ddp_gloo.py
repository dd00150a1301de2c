"""DDP on the CPU: 2 and 3 real processes in a gloo process group, each with its own
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

N = 26  # 3 does not divide it: DistributedSampler pads by wrapping around


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _files(root, bad=()):
    """N files; with `bad`, small real JPEGs of which those indices are garbage."""
    root.mkdir(parents=True, exist_ok=True)
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


def _loader(files, skip):
    import torch_dali
    from torch_dali import fn, pipeline_def

    @pipeline_def(num_threads=1)
    def pipe():
        data, labels = fn.readers.file(files=files, labels=list(range(len(files))), random_shuffle=True,
                                       name="Reader", on_error="skip" if skip else "raise")
        if skip:  # the decoder checks each file for the reader, which leaves the garbage out
            return fn.resize(fn.decoders.image(data, on_error="skip"), size=(8, 8)), labels
        return labels
    return torch_dali.DataLoader(pipe, batch_size=3, seed=11, device="cpu")


def _worker(rank, world, port, plain, bad, out):
    import datetime
    import warnings

    import torch.distributed as dist
    warnings.simplefilter("ignore", RuntimeWarning)
    # a rank that ran out would leave the others waiting in all_reduce: time out instead of hanging
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    try:
        res = {}
        for name, files, skip in (("plain", plain, False), ("skip", bad, True)):
            dl = _loader(files, skip)
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
            res[name] = epochs
        out[rank] = res
    finally:
        dist.destroy_process_group()


BAD = (1, 2, 5, 9, 17)  # spread unevenly over the shards


@pytest.mark.parametrize("world", [2, 3])
def test_gloo_ranks_read_shards_and_stay_in_step(tmp_path, world):
    plain = _files(tmp_path / "plain")
    bad = _files(tmp_path / "bad", BAD)
    out = mp.Manager().dict()
    mp.spawn(_worker, args=(world, _port(), plain, bad, out), nprocs=world, join=True)
    res = [out[r] for r in range(world)]
    for epoch in range(2):
        union = []
        for rank in range(world):
            steps, length, seen = res[rank]["plain"][epoch]
            s = DistributedSampler(range(N), num_replicas=world, rank=rank, shuffle=True, seed=11)
            s.set_epoch(epoch)
            assert seen == list(s), (rank, epoch)
            assert steps == length == res[0]["plain"][epoch][1]
            union += seen
        assert set(union) == set(range(N))
        assert len(union) - len(set(union)) == -N % world  # only DistributedSampler's padding repeats
        # some ranks skip more bad files than others: all still run len() steps, and no bad sample
        lengths = {res[rank]["skip"][epoch][1] for rank in range(world)}
        steps = {res[rank]["skip"][epoch][0] for rank in range(world)}
        assert len(lengths) == 1 and steps == lengths, (epoch, res)
        assert not {i for rank in range(world) for i in res[rank]["skip"][epoch][2]} & set(BAD)
