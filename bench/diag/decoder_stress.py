"""Soak test of the nvJPEG decoder driven the way the fused recipe's mixed stage drives it, many
times faster than whole training runs: each round makes a fresh decoder (the pipeline's settings:
TORCH_DALI_NVJPEG_* knobs, hw_decoder_load 1 as DALI's ResNet-50 recipe asks), then LANES threads,
each on its own CUDA stream, decode BATCHES batches of 256 JPEGs with random-resized-crop windows
(the first as the pipeline's iteration 0) and read the outputs on their streams, while a matmul
loop keeps the GPU busy as a training would. A round with no progress for STALL_S seconds prints
the decoder's activity() and every Python stack, takes the native stacks with cuda-gdb where it
is installed, and exits 3.

Session 19 saw the fused feed run (train_feed.py td) hang once in 40 runs with the lanes inside
decode(); a run spends ~1 s of its ~20 s making the decoder and ~70 batches decoding, a round here
~1 s making it and LANES * BATCHES batches.

    python3 bench/diag/decoder_stress.py /tmp/ref420 --rounds 100 --out $OUT/stress.jsonl   (GPU machine)
"""
from __future__ import annotations

import argparse
import faulthandler
import glob
import json
import math
import os
import random
import shutil
import subprocess
import sys
import threading
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from torch_dali._native import extension  # noqa: E402
from torch_dali.io import nvjpeg  # noqa: E402
from torch_dali.io.decode import peek_image_info  # noqa: E402

BATCH = 256


def load(root: str, limit: int) -> tuple[list[torch.Tensor], list[tuple[int, int]]]:
    files = sorted(glob.glob(os.path.join(root, "*", "*.jpg")))[:limit]
    datas = [torch.frombuffer(bytearray(open(f, "rb").read()), dtype=torch.uint8) for f in files]
    sizes = []
    for d in datas:
        info = peek_image_info(d)
        sizes.append((info.height, info.width))
    return datas, sizes


def window(rng: random.Random, h: int, w: int) -> list[int]:
    """A random-resized-crop window (area 8-100 %, aspect 3/4-4/3), as (y, x, h, w)."""
    for _ in range(10):
        area = h * w * rng.uniform(0.08, 1.0)
        ratio = math.exp(rng.uniform(math.log(3 / 4), math.log(4 / 3)))
        cw, ch = int(round(math.sqrt(area * ratio))), int(round(math.sqrt(area / ratio)))
        if 0 < cw <= w and 0 < ch <= h:
            return [rng.randint(0, h - ch), rng.randint(0, w - cw), ch, cw]
    return [0, 0, h, w]


def gpu_load(stop: threading.Event) -> None:
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        while not stop.is_set():
            for _ in range(8):
                a = (a @ a).clamp_(-1, 1)
            s.synchronize()


def native_stacks(path: str) -> None:
    gdb = shutil.which("cuda-gdb")
    if gdb is None:
        print("no cuda-gdb here: no native stacks", file=sys.stderr)
        return
    with open(path, "w") as f:
        subprocess.run([gdb, "-q", "-batch", "-p", str(os.getpid()), "-ex", "set pagination off",
                        "-ex", "info threads", "-ex", "thread apply all bt 30"],
                       stdout=f, stderr=subprocess.STDOUT, timeout=180, check=False)
    print(f"native stacks in {path}", file=sys.stderr)


def run_round(k: int, args, datas, sizes, ext, config) -> dict:
    t0 = time.perf_counter()
    dec = nvjpeg._make_decoder(ext, 0, nvjpeg.hw_share(1.0), config)
    made = time.perf_counter() - t0
    progress = [0] * args.lanes
    errors: list[BaseException] = []
    counter = iter(range(1 << 30))
    counter_lock = threading.Lock()

    def lane(i: int) -> None:
        rng = random.Random(1000 * k + i)
        stream = torch.cuda.Stream()
        try:
            with torch.cuda.stream(stream):
                for _ in range(args.batches):
                    idx = [rng.randrange(len(datas)) for _ in range(BATCH)]
                    rois = torch.tensor([window(rng, *sizes[j]) for j in idx], dtype=torch.int64)
                    with counter_lock:
                        first = next(counter) == 0
                    outs = dec.decode([datas[j] for j in idx], "rgb", rois, first)
                    # the GPU stage reads every output on the lane's stream
                    total = sum(o[:2, :2].float().sum() for o in outs if o is not None)
                    del outs, total
                    progress[i] += 1
                stream.synchronize()
        except BaseException as e:  # noqa: BLE001 (reported, not raised in a thread)
            errors.append(e)

    threads = [threading.Thread(target=lane, args=(i,), daemon=True) for i in range(args.lanes)]
    for t in threads:
        t.start()
    last, last_change = sum(progress), time.monotonic()
    while any(t.is_alive() for t in threads):
        time.sleep(0.05)
        now = sum(progress)
        if now != last:
            last, last_change = now, time.monotonic()
        elif time.monotonic() - last_change > args.stall_s:
            print(f"STALL round {k}: {progress} batches per lane, none for {args.stall_s} s; "
                  f"decoder activity: {dec.activity()}", file=sys.stderr, flush=True)
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
            native_stacks(os.path.join(os.path.dirname(args.out) or ".", f"stall_round{k}.gdb"))
            print(f"decoder activity after the stacks: {dec.activity()}", file=sys.stderr, flush=True)
            return dict(round=k, stalled=True, progress=progress, activity={p: list(v) for p, v in dec.activity().items()})
    if errors:
        raise errors[0]
    dt = time.perf_counter() - t0
    rec = dict(round=k, stalled=False, make_s=round(made, 3), seconds=round(dt, 3),
               img_per_s=round(args.lanes * args.batches * BATCH / (dt - made), 1),
               build_stats=dict(dec.build_stats), last_stats=dict(dec.last_stats))
    dec = None  # destroyed here, before the next round makes its own
    return rec


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--lanes", type=int, default=3)
    ap.add_argument("--stall-s", type=float, default=20.0)
    ap.add_argument("--budget-s", type=float, default=300.0)
    ap.add_argument("--images", type=int, default=4096)
    ap.add_argument("--no-load", action="store_true", help="no matmul loop beside the decoding")
    ap.add_argument("--out", default="stress.jsonl")
    args = ap.parse_args()
    ext = extension.load()
    if ext is None or not getattr(ext, "has_nvjpeg", False):
        print("the extension's nvJPEG decoder is not available", file=sys.stderr)
        return 2
    datas, sizes = load(args.root, args.images)
    config = nvjpeg.DecoderConfig.from_knobs()
    stop = threading.Event()
    if not args.no_load:
        threading.Thread(target=gpu_load, args=(stop,), daemon=True).start()
    t0, done = time.monotonic(), 0
    for k in range(args.rounds):
        if time.monotonic() - t0 > args.budget_s:
            break
        rec = run_round(k, args, datas, sizes, ext, config)
        with open(args.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        if rec["stalled"]:
            print(json.dumps(dict(what="decoder_stress", rounds=done, stalled_in_round=k)), flush=True)
            os._exit(3)  # the stuck lanes cannot be joined
        done += 1
    stop.set()
    speeds = sorted(r for r in (json.loads(ln)["img_per_s"] for ln in open(args.out) if '"stalled": false' in ln))
    print(json.dumps(dict(what="decoder_stress", rounds=done, stalls=0, lanes=args.lanes, batches=args.batches,
                          median_img_per_s=speeds[len(speeds) // 2] if speeds else None)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
