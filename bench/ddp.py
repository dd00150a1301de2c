"""torch.distributed with torch_dali.DataLoader: run under torchrun, one process per GPU.

    torchrun --nproc-per-node 2 bench/ddp.py --images 4096 --out ddp.json

1. Shards: every file gets its index as its label, so each rank's labels name the samples it saw.
   One epoch in the default mode (shuffled, padded like DistributedSampler: every rank the same
   number of batches; the reader's seed=42 is the sampler's seed) and one in `exact=True` evaluation mode (in order, each sample exactly
   once); rank 0 checks that the
   exact shards are disjoint and cover the dataset, that the padded shards cover it and equal
   DistributedSampler's index sets for the same seed and epoch.
2. Throughput per GPU: the training pipeline (mixed decode + RRC 224 + flip + normalize) alone,
   then feeding torchvision's resnet50 under DDP (bf16 autocast, channels_last); images/s per rank.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def pipeline(files: list[str], labels: list[int], shuffle: bool = True):
    from torch_dali import fn, pipeline_def, types

    @pipeline_def(seed=42)
    def train():
        jpegs, lab = fn.readers.file(files=files, labels=labels, random_shuffle=shuffle, seed=42, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
        images = fn.random_resized_crop(images, size=(224, 224))
        images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(), mean=MEAN, std=STD,
                                          dtype=types.FLOAT, output_layout="CHW")
        return images, lab
    return train


def epoch_labels(loader, epoch: int) -> list[int]:
    loader.set_epoch(epoch)
    seen: list[int] = []
    for _, lab in loader:
        seen += lab.view(-1).tolist()
    return seen


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=4096)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--train-steps", type=int, default=30)
    ap.add_argument("--data", default="")
    ap.add_argument("--out", default="ddp.json")
    ap.add_argument("--hang-dump-s", type=int, default=0, help="dump every thread's stack and exit "
                    "after this many seconds (diagnosing a hang)")
    args = ap.parse_args()
    if args.hang_dump_s:
        import faulthandler
        faulthandler.dump_traceback_later(args.hang_dump_s, exit=True)

    # The data first, before NCCL's threads exist (the generator forks a process pool): local rank
    # 0 writes it, the others wait for its marker file.
    data = args.data or os.path.join(tempfile.gettempdir(), "ddp_bench")
    done = Path(data) / ".complete"
    if int(os.environ.get("LOCAL_RANK", 0)) == 0 and not done.exists():
        from torch_dali.sample_data import make_benchmark_folder
        make_benchmark_folder(data, args.images, quality=90, subsampling="4:2:0")
        done.write_text("ok")
    deadline = time.time() + 600
    while not done.exists() and time.time() < deadline:
        time.sleep(0.2)

    cuda = torch.cuda.is_available()  # without CUDA (a smoke test on a laptop): gloo, CPU, no training
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    t_start = time.perf_counter()
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"])) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    import torch_dali

    files = sorted(str(p) for p in Path(data).rglob("*.jpg"))[: args.images]
    n = len(files)
    train = pipeline(files, list(range(n)))
    res: dict = {"rank": rank, "world": world, "device": torch.cuda.get_device_name(device) if cuda else "cpu"}

    def mark(what: str) -> None:
        print(f"[rank {rank}] {what} at {time.perf_counter() - t_start:.1f} s", flush=True)
    mark("data ready")

    # 1. shards
    kw = dict(batch_size=args.batch_size, num_threads=args.threads, device=device)
    padded = torch_dali.DataLoader(train, **kw)
    exact = torch_dali.DataLoader(pipeline(files, list(range(n)), shuffle=False), exact=True, **kw)
    res["len_padded"] = len(padded)
    res["padded_epoch1"] = epoch_labels(padded, 1)
    res["exact_epoch1"] = epoch_labels(exact, 1)
    res["len_exact"] = len(exact)
    exact.shutdown()
    del exact
    mark("shards read")

    # 2a. loader alone
    it = iter(padded)
    for _ in range(3):
        next(it)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    sync()
    t0, k = time.perf_counter(), 0
    for x, _ in it:
        k += x.shape[0]
    sync()
    res["loader_images_per_s"] = round(k / (time.perf_counter() - t0))

    mark("loader timed")

    # 2b. feeding resnet50 under DDP
    if not cuda:
        args.train_steps = 0
    import torchvision
    model = torchvision.models.resnet50(num_classes=1000).to(device, memory_format=torch.channels_last)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if cuda else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def steps(source, count):
        if count <= 3:
            return None
        done = 0
        t0 = None
        while done < count:
            for x, y in source():
                if done == 3:
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = torch.nn.functional.cross_entropy(model(x.contiguous(memory_format=torch.channels_last)),
                                                             (y % 1000).view(-1))
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                done += 1
                if done >= count:
                    break
        torch.cuda.synchronize()
        return round((count - 3) * args.batch_size / (time.perf_counter() - t0))

    res["train_resnet50_images_per_s"] = steps(lambda: padded, args.train_steps)
    fixed = torch.randn(args.batch_size, 3, 224, 224, device=device)
    fixed_y = torch.zeros(args.batch_size, dtype=torch.long, device=device)
    res["train_resnet50_synthetic_images_per_s"] = steps(lambda: [(fixed, fixed_y)] * 8, args.train_steps)

    mark("training timed")
    gathered: list = [None] * world
    dist.all_gather_object(gathered, res)
    if rank == 0:
        ex = [set(r["exact_epoch1"]) for r in gathered]
        union = set().union(*ex)
        sizes = [len(r["exact_epoch1"]) for r in gathered]
        disjoint = sum(len(s) for s in ex) == len(union) and sum(sizes) == len(union)
        # DistributedSampler's index sets for the same seed and epoch
        from torch.utils.data import DistributedSampler
        ds_sets = []
        for r in range(world):
            s = DistributedSampler(range(n), num_replicas=world, rank=r, shuffle=True, seed=42)
            s.set_epoch(1)
            ds_sets.append(sorted(s))
        summary = {
            "command": "torchrun --nproc-per-node %d bench/ddp.py %s" % (world, " ".join(sys.argv[1:])),
            "machine": {"gpus": [r["device"] for r in gathered], "cpus": os.cpu_count(),
                        "torch": torch.__version__, "python": platform.python_version()},
            "images": n, "batch_size": args.batch_size,
            "exact": {"per_rank": sizes, "disjoint": disjoint, "union_is_dataset": union == set(range(n)),
                      "len_per_rank": [r["len_exact"] for r in gathered]},
            "padded": {"per_rank": [len(r["padded_epoch1"]) for r in gathered],
                       "len_per_rank": [r["len_padded"] for r in gathered],
                       "union_is_dataset": set().union(*[set(r["padded_epoch1"]) for r in gathered]) == set(range(n)),
                       "equals_distributed_sampler": [sorted(r["padded_epoch1"]) == ds_sets[i]
                                                      for i, r in enumerate(gathered)]},
            "per_gpu": [{k: r[k] for k in ("rank", "loader_images_per_s", "train_resnet50_images_per_s",
                                           "train_resnet50_synthetic_images_per_s")} for r in gathered],
        }
        Path(args.out).write_text(json.dumps(summary, indent=2))
        print(json.dumps(summary, indent=2))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
