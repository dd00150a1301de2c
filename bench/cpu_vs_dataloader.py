"""CPU throughput: torch_dali's CPU pipeline vs torch.utils.data.DataLoader + torchvision, same cores.

Workload: decode JPEG + random-resized-crop 224 + random flip + normalize to float32 CHW, on
generated ImageNet-like JPEGs (mean ~438x416, q90 4:2:0). Both sides get the same number of cores
(`--cores`: threads for torch_dali, worker processes for the DataLoader). With `--dali-python`, the
same pipeline on NVIDIA DALI's CPU backend runs in that interpreter in the same run.

    python bench/cpu_vs_dataloader.py --cores 2 --dali-python /path/to/dali-venv/bin/python
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def torch_dali_pipeline(root: str, batch: int, cores: int, fused: bool, sync: bool = False):
    """The benchmark's torch_dali pipeline, built (bench/cpu_ab.py runs it in other source trees);
    `sync`: everything on the calling thread (no prefetching)."""
    from torch_dali import fn, pipeline_def, types

    @pipeline_def(batch_size=batch, num_threads=cores, device_id=None, seed=1, prefetch_queue_depth=2,
                  exec_async=not sync, exec_pipelined=not sync)
    def pipe():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        if fused:  # decode only the random window, then resize it
            images = fn.decoders.image_random_crop(jpegs, output_type=types.RGB)
            images = fn.resize(images, resize_x=224, resize_y=224)
        else:
            images = fn.decoders.image(jpegs, output_type=types.RGB)
            images = fn.random_resized_crop(images, size=(224, 224))
        images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(), mean=MEAN, std=STD,
                                          dtype=types.FLOAT, output_layout="CHW")
        return images, labels

    p = pipe()
    p.build()
    return p


def run_torch_dali(root: str, batch: int, cores: int, batches: int, fused: bool) -> float:
    p = torch_dali_pipeline(root, batch, cores, fused)
    for _ in range(2):
        p.run()
    t0 = time.perf_counter()
    for _ in range(batches):
        images, labels = p.run()
        images.as_tensor()
    dt = time.perf_counter() - t0
    p.shutdown()
    return batches * batch / dt


def run_dataloader(root: str, batch: int, cores: int, batches: int) -> float:
    import torch
    import torchvision
    from torchvision import transforms

    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor(),
                             transforms.Normalize([m / 255 for m in MEAN], [s / 255 for s in STD])])
    ds = torchvision.datasets.ImageFolder(root, transform=tf)
    dl = torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=True, num_workers=cores,
                                     persistent_workers=True, prefetch_factor=2, drop_last=True)
    torch.set_num_threads(1)
    it = iter(dl)
    for _ in range(2):
        next(it)
    t0 = time.perf_counter()
    n = 0
    for _ in range(batches):
        try:
            x, y = next(it)
        except StopIteration:
            it = iter(dl)
            x, y = next(it)
        n += x.shape[0]
    rate = n / (time.perf_counter() - t0)
    it._shutdown_workers()  # persistent workers must not steal cores from the next measurement
    return rate


DALI_SNIPPET = r"""
import sys, time, json
from nvidia.dali import pipeline_def, fn, types
root, batch, cores, batches, fused = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]; STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
@pipeline_def(batch_size=batch, num_threads=cores, device_id=None, seed=1)
def pipe():
    jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
    if fused:
        images = fn.decoders.image_random_crop(jpegs, device="cpu", output_type=types.RGB)
        images = fn.resize(images, resize_x=224, resize_y=224)
    else:
        images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
        images = fn.random_resized_crop(images, size=(224, 224))
    images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(), mean=MEAN, std=STD,
                                      dtype=types.FLOAT, output_layout="CHW")
    return images, labels
p = pipe(); p.build()
for _ in range(2): p.run()
t0 = time.perf_counter()
for _ in range(batches): p.run()
print(json.dumps({"images_per_s": batches * batch / (time.perf_counter() - t0)}))
"""


def run_dali(python: str, root: str, batch: int, cores: int, batches: int, fused: bool) -> float | None:
    r = subprocess.run([python, "-c", DALI_SNIPPET, root, str(batch), str(cores), str(batches), "1" if fused else "0"],
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        print("DALI run failed:", r.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])["images_per_s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--images", type=int, default=1024)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--data", default=None, help="folder of class folders (made if missing)")
    ap.add_argument("--dali-python", default=None, help="a Python with nvidia-dali installed")
    ap.add_argument("--out", default=str(HERE / "results" / "cpu_vs_dataloader.json"))
    args = ap.parse_args()

    from torch_dali.sample_data import make_benchmark_folder

    tmp = None
    root = args.data
    if root is None or not Path(root).exists():
        if root is None:
            tmp = tempfile.TemporaryDirectory()
            root = tmp.name
        t0 = time.perf_counter()
        make_benchmark_folder(root, args.images, quality=90, subsampling="4:2:0")
        print(f"made {args.images} JPEGs in {time.perf_counter() - t0:.1f} s")

    res: dict[str, float | None] = {}
    order = [("dataloader_torchvision", lambda: run_dataloader(root, args.batch_size, args.cores, args.batches)),
             ("torch_dali_cpu", lambda: run_torch_dali(root, args.batch_size, args.cores, args.batches, False)),
             ("torch_dali_cpu_fused_decode_crop",
              lambda: run_torch_dali(root, args.batch_size, args.cores, args.batches, True))]
    if args.dali_python:
        order += [("dali_cpu", lambda: run_dali(args.dali_python, root, args.batch_size, args.cores, args.batches, False)),
                  ("dali_cpu_fused_decode_crop",
                   lambda: run_dali(args.dali_python, root, args.batch_size, args.cores, args.batches, True))]
    for name, fn_ in order:
        res[name] = fn_()
        print(f"{name:34s} {res[name] or float('nan'):8.1f} images/s")
    base = res["dataloader_torchvision"]
    ratios = {k: (v / base if v and base else None) for k, v in res.items()}
    for k, v in ratios.items():
        print(f"{k:34s} {v or float('nan'):6.2f}x the DataLoader")
    import torch
    out = {"workload": "decode + random-resized-crop 224 + flip + normalize, float32 CHW",
           "images": args.images, "batch_size": args.batch_size, "batches": args.batches, "cores": args.cores,
           "images_per_s": res, "ratio_vs_dataloader": ratios,
           "machine": {"cpu": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(),
                       "python": platform.python_version(), "torch": torch.__version__},
           "command": " ".join([Path(sys.executable).name] + sys.argv)}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))
    print("written", args.out)
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
