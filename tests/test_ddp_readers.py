"""The file readers across ranks, started as torchrun starts them (RANK / WORLD_SIZE / MASTER_* in the
environment, gloo from env://), 2 and 3 processes, two epochs each (tests/_ddp_readers.py is a rank):

* index-based readers (numpy, tfrecord, caffe): rank r reads exactly DistributedSampler(shuffle=True,
  seed)'s list for r in each epoch;
* tar shards (webdataset): whole tars per rank as webdataset's split_by_node deals them (the same
  tars as its own function gives each rank, for an unshuffled first epoch), disjoint and covering
  the data set, and every rank runs the same number of batches, each step an all_reduce.
"""
from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from torch.utils.data import DistributedSampler

from tests.reference import readers_formats as W
from tests.reference import readers_lmdb as R

ROOT = Path(__file__).resolve().parent.parent
N = 26  # 3 does not divide it: DistributedSampler pads by wrapping around
TARS = [3, 5, 2, 4, 6]  # samples per tar: uneven, so shards differ and are padded
SEED, BATCH = 11, 2  # as tests/_ddp_readers.py


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cases(root: Path) -> dict:
    (root / "npy").mkdir()
    for i in range(N):
        np.save(root / "npy" / f"n{i:03d}.npy", np.array([i], np.int64))
    W.write_tfrecord(str(root / "t.tfrecord"), [W.encode_example({"n": ("int64", [i])}) for i in range(N)],
                     str(root / "t.idx"))
    paths, n = [], 0
    for k, size in enumerate(TARS):
        members = []
        for _ in range(size):
            members.append((f"s{n:03d}.id", struct.pack("<i", n)))
            n += 1
        paths.append(str(root / f"shard{k}.tar"))
        W.write_tar(paths[-1], members)
    cases = {
        "numpy": {"reader": "numpy", "args": {"file_root": str(root / "npy"), "random_shuffle": True}},
        "tfrecord": {"reader": "tfrecord", "args": {"path": str(root / "t.tfrecord"),
                                                    "index_path": str(root / "t.idx"), "random_shuffle": True}},
        "wds_plain": {"reader": "webdataset", "args": {"paths": paths}},
        "wds_shuffled": {"reader": "webdataset", "args": {"paths": paths, "random_shuffle": True}},
    }
    try:
        R.write_lmdb(str(root / "lmdb"), [(b"%03d" % i, R.datum(None, i)) for i in range(N)])
        cases["caffe"] = {"reader": "caffe", "args": {"path": str(root / "lmdb"), "random_shuffle": True}}
    except ImportError:
        pass
    return cases


def _torchrun(world: int, data: Path, out: Path, timeout: float = 150) -> list[dict]:
    """`world` ranks as torchrun starts them; each killed if the run outlasts `timeout`."""
    port = _port()
    procs = []
    for rank in range(world):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1",
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        procs.append(subprocess.Popen([sys.executable, "-m", "tests._ddp_readers", str(data), str(out / f"{rank}.json")],
                                      env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    deadline = time.monotonic() + timeout
    try:
        logs = [p.communicate(timeout=max(1.0, deadline - time.monotonic()))[0].decode(errors="replace")
                for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for rank, (p, log) in enumerate(zip(procs, logs)):
        assert p.returncode == 0, f"rank {rank} exited with {p.returncode}:\n{log[-3000:]}"
    return [json.loads((out / f"{rank}.json").read_text()) for rank in range(world)]


@pytest.mark.parametrize("world", [2, 3])
def test_ranks_read_their_shards_in_step(tmp_path, world):
    cases = _cases(tmp_path)
    (tmp_path / "data.json").write_text(json.dumps(cases))
    res = _torchrun(world, tmp_path / "data.json", tmp_path)
    starts = np.cumsum([0] + TARS)
    samples_of = {p: set(range(starts[k], starts[k + 1])) for k, p in enumerate(cases["wds_plain"]["args"]["paths"])}
    for name in cases:
        for epoch in range(2):
            runs = [res[r][name][epoch] for r in range(world)]
            lengths = {run["len"] for run in runs}
            assert len(lengths) == 1 and all(run["steps"] == run["len"] for run in runs), (name, epoch, runs)
            if cases[name]["reader"] != "webdataset":
                for r, run in enumerate(runs):
                    s = DistributedSampler(range(N), num_replicas=world, rank=r, shuffle=True, seed=SEED)
                    s.set_epoch(epoch)
                    assert run["seen"] == list(s), (name, r, epoch)
                continue
            shards = [set(run["seen"]) for run in runs]
            assert set().union(*shards) == set(range(sum(TARS))) and sum(map(len, shards)) == sum(TARS)
            longest = max(map(len, shards))
            assert all(len(run["seen"]) == longest for run in runs)  # padded with its own samples
            for r, shard in enumerate(shards):  # whole tars
                assert shard == set().union(*(samples_of[p] for p in samples_of if samples_of[p] & shard))
            if name == "wds_plain" and epoch == 0 and "split_by_node" in res[0]:
                for r in range(world):
                    want = set().union(*(samples_of[p] for p in res[r]["split_by_node"]))
                    assert shards[r] == want, (r, res[r]["split_by_node"])
