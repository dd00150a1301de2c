"""One rank of tests/test_ddp_readers.py, started as torchrun starts it: RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR and MASTER_PORT in the environment, a gloo process group from `env://`.

    python -m tests._ddp_readers <data.json> <out.json>

For each case in data.json ({name: {"reader": ..., "args": {...}}}) it runs a torch_dali.DataLoader for two
epochs, an all_reduce per batch (a DDP step: every rank must reach it as often as the others), and
writes per epoch: the steps taken, len(loader), the sample numbers read and, for tar shards, the
shards webdataset's own split_by_node gives this rank.
"""
from __future__ import annotations

import datetime
import json
import os
import sys
import warnings

import torch
import torch.distributed as dist

BATCH = 2
SEED = 11


def _loader(reader: str, args: dict) -> object:
    """A loader whose one output is each sample's number (int64, one per sample)."""
    import torch_dali
    import torch_dali.tfrecord as tfrec
    from torch_dali import fn, pipeline_def, types

    @pipeline_def(num_threads=1)
    def pipe():
        if reader == "tfrecord":
            return fn.readers.tfrecord(**args, features={"n": tfrec.FixedLenFeature([1], tfrec.int64, -1)},
                                       name="R")["n"]
        if reader == "webdataset":
            return fn.readers.webdataset(**args, ext=["id"], dtypes=[types.INT32], initial_fill=4, name="R")
        if reader == "caffe":
            return fn.readers.caffe(**args, image_available=False, name="R")
        return fn.readers.numpy(**args, name="R")
    return torch_dali.DataLoader(pipe, batch_size=BATCH, seed=SEED, device="cpu")


def main() -> None:
    data_path, out_path = sys.argv[1], sys.argv[2]
    warnings.simplefilter("ignore", RuntimeWarning)
    dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(seconds=60))
    rank = dist.get_rank()
    try:
        with open(data_path) as f:
            cases = json.load(f)
        res: dict = {}
        for name, case in cases.items():
            reader, args = case["reader"], case["args"]
            dl = _loader(reader, args)
            assert (dl.rank, dl.world_size) == (rank, dist.get_world_size()), (dl.rank, dl.world_size)
            epochs = []
            for epoch in range(2):
                dl.set_epoch(epoch)
                n = len(dl)  # before the loop: after it, len() tells the next epoch's
                steps, seen = 0, []
                for (batch,) in dl:
                    t = torch.ones(1)
                    dist.all_reduce(t)
                    steps += 1
                    seen += batch.reshape(-1).tolist()
                epochs.append({"steps": steps, "len": n, "seen": seen})
            res[name] = epochs
            if reader == "webdataset" and "split_by_node" not in res:
                try:
                    import webdataset as wds
                except ImportError:
                    continue
                res["split_by_node"] = list(wds.split_by_node(iter(args["paths"])))
        with open(out_path, "w") as f:
            json.dump(res, f)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
