"""CPU cost A/B of two source trees on bench/cpu_vs_dataloader.py's torch_dali pipelines, made for a
shared machine: CPU time (all the process's threads, `time.process_time`) per image rather than
wall time, trees run alternately in child processes (A, B, A, B, ...), medians over the rounds.

Each child builds the plain (decode + random_resized_crop + crop_mirror_normalize with a coin-flip
mirror) or fused (image_random_crop + resize + crop_mirror_normalize) pipeline of
cpu_vs_dataloader.py with `--threads` threads, runs 2 warm-up batches and then `--batches` timed
ones, and prints CPU seconds and wall seconds. Wall time is reported too; on a loaded machine only
the CPU time means much (it still grows somewhat under load: caches, SMT).

    python bench/cpu_ab.py --tree old=/tmp/old-start --tree new=. --data /tmp/bench_ab/data \
        --rounds 5 --threads 1 --out /tmp/ab.json
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CHILD = r"""
import json, sys, time
root, batch, threads, batches, fused = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
sync = sys.argv[6] == "1"  # everything on the calling thread: no prefetch, no pool
import torch, torch_dali
sys.path.insert(0, sys.argv[7])  # this tree's bench/: the pipeline as cpu_vs_dataloader.py builds it
from cpu_vs_dataloader import torch_dali_pipeline
p = torch_dali_pipeline(root, batch, threads, fused, sync)
if sync:
    torch.set_num_threads(1)  # no OpenMP team spinning beside the calling thread
for _ in range(2):
    p.run()
per_batch = []
c0, t0 = time.process_time(), time.perf_counter()
for _ in range(batches):
    m0 = time.thread_time()
    images, labels = p.run()
    images.as_tensor()
    per_batch.append(time.thread_time() - m0)
c1, t1 = time.process_time(), time.perf_counter()
p.shutdown()
print(json.dumps({"cpu_s": c1 - c0, "wall_s": t1 - t0, "main_thread_s": per_batch, "file": torch_dali.__file__}))
"""


def run_child(tree: str, data: str, batch: int, threads: int, batches: int, fused: bool, sync: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
    r = subprocess.run([sys.executable, "-c", CHILD, data, str(batch), str(threads), str(batches),
                        "1" if fused else "0", "1" if sync else "0", str(Path(__file__).resolve().parent)],
                       capture_output=True, text=True, env=env, timeout=1200,
                       cwd=str(Path(tree).resolve()))  # python -c puts the cwd first on sys.path
    if r.returncode != 0:
        raise SystemExit(f"child failed for {tree}:\n{r.stderr[-3000:]}")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    if not out["file"].startswith(str(Path(tree).resolve())):
        raise SystemExit(f"{tree}: imported torch_dali from {out['file']}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH of a source tree (two or more)")
    ap.add_argument("--data", required=True, help="folder of class folders (cpu_vs_dataloader.py makes one)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--batches", type=int, default=6)
    ap.add_argument("--pipelines", default="plain,fused")
    ap.add_argument("--sync", action="store_true",
                    help="exec_async=exec_pipelined=False: each batch computed on the calling thread")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree)
    pipes = args.pipelines.split(",")
    runs = []
    for rnd in range(args.rounds):
        for pipe in pipes:
            for name, path in trees.items():
                load = os.getloadavg()[0]
                r = run_child(path, args.data, args.batch_size, args.threads, args.batches, pipe == "fused", args.sync)
                n = args.batch_size * args.batches
                row = {"round": rnd, "tree": name, "pipeline": pipe, "cpu_ms_per_image": 1e3 * r["cpu_s"] / n,
                       "images_per_s_wall": n / r["wall_s"],
                       "main_thread_ms_per_image_min": 1e3 * min(r["main_thread_s"]) / args.batch_size,
                       "main_thread_ms_per_image_median": 1e3 * statistics.median(r["main_thread_s"]) / args.batch_size, "load_1min_before": load}
                runs.append(row)
                print(f"{rnd} {pipe:5s} {name:8s} cpu {row['cpu_ms_per_image']:6.3f} ms/img  "
                      f"main thread/batch min {row['main_thread_ms_per_image_min']:6.3f} "
                      f"med {row['main_thread_ms_per_image_median']:6.3f}  "
                      f"wall {row['images_per_s_wall']:6.1f} img/s  load {load:.1f}", flush=True)
    med = {p: {t: {"cpu_ms_per_image": statistics.median(r["cpu_ms_per_image"] for r in runs
                                                         if r["pipeline"] == p and r["tree"] == t),
                   "images_per_s_wall": statistics.median(r["images_per_s_wall"] for r in runs
                                                          if r["pipeline"] == p and r["tree"] == t)}
               for t in trees} for p in pipes}
    print(json.dumps(med, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps({"trees": trees, "threads": args.threads, "sync": args.sync,
                                              "batch_size": args.batch_size, "batches": args.batches,
                                              "medians": med, "runs": runs,
                                              "when": time.strftime("%Y-%m-%d %H:%M")}, indent=1))


if __name__ == "__main__":
    main()
