"""How to split JPEG decoding between the hardware engines and the CUDA backend: the training
pipeline (mixed decode + RRC 224 + flip + normalize, batch 256) under several nvJPEG decoder
configurations, each in its own process with a time limit (concurrent hardware batches have hung
inside nvJPEG before: a hang costs one configuration, not the run).

    python bench/decoder_sweep.py --images 8192 --batches 60 --out decoder_sweep.json

A configuration is hw_decoder_load / hardware states / CUDA-backend states (both per slot) /
Huffman threshold / whether hardware states decode concurrently / mixed-stage lanes and decoder
slots (batches decoding at once). The decoder's own per-phase host times of the last batch come
with each figure. --subsampling 4:4:4 sweeps the q95 4:4:4 data set instead.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

# (hw_load, hw_states, cuda_states, huffman_threshold, concurrent, lanes/slots)
CONFIGS = [
    (0.9, 1, 8, 1000 * 1000, False, 2),  # the default
    (0.9, 1, 8, 1000 * 1000, False, 1),  # one batch at a time (session 2's default)
    (0.8, 1, 8, 1000 * 1000, False, 2),
    (1.0, 1, 8, 1000 * 1000, False, 2),
    (0.9, 1, 4, 1000 * 1000, False, 2),
    (0.9, 1, 8, 1000 * 1000, False, 3),
    (0.9, 1, 8, 1000 * 1000, True, 2),  # two hardware batches at once
    (0.8, 1, 8, 1000 * 1000, True, 2),
]


def one(data: str, batches: int, hw_load: float) -> dict:
    import torch
    from throughput import rate, train_pipe

    from torch_dali.io import nvjpeg as D
    r, first = rate(train_pipe(data, 256, 0, 8, hw_load=hw_load), batches)
    dec = next(iter(D._NVJPEG.values()), None)
    return {"images_per_s": round(r), "first_batch_s": round(first, 2),
            "last_decode": dict(dec.last_stats) if dec is not None else None,
            "max_gpu_mem_mib": round(torch.cuda.max_memory_allocated() / 2**20)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=8192)
    ap.add_argument("--batches", type=int, default=60)
    ap.add_argument("--data", default="")
    ap.add_argument("--one", type=float, default=None, help=argparse.SUPPRESS)  # child: hw_load
    ap.add_argument("--timeout", type=int, default=90)
    ap.add_argument("--subsampling", default="4:2:0", choices=["4:2:0", "4:4:4"],
                    help="4:2:0: q90 JPEGs; 4:4:4: q95 at ImageNet's mean size")
    ap.add_argument("--out", default="decoder_sweep.json")
    args = ap.parse_args()
    if args.one is not None:
        print("RESULT " + json.dumps(one(args.data, args.batches, args.one)), flush=True)
        return
    from throughput import bench_data
    data = bench_data(args.data, args.images, args.subsampling)
    from torch_dali._native import extension as _extension
    _extension.load()  # built once here, not inside a timed child
    results = []
    for hw_load, hw_states, cuda_states, threshold, concurrent, lanes in CONFIGS:
        env = dict(os.environ, TORCH_DALI_NVJPEG_HW_STATES=str(hw_states),
                   TORCH_DALI_NVJPEG_CUDA_STATES=str(cuda_states),
                   TORCH_DALI_NVJPEG_HUFFMAN_THRESHOLD=str(threshold),
                   TORCH_DALI_MIXED_LANES=str(lanes), TORCH_DALI_NVJPEG_SLOTS=str(lanes))
        env.pop("TORCH_DALI_NVJPEG_HW_CONCURRENT", None)
        if concurrent:
            env["TORCH_DALI_NVJPEG_HW_CONCURRENT"] = "1"
        cfg = {"hw_decoder_load": hw_load, "hw_states": hw_states, "cuda_states": cuda_states,
               "huffman_threshold": threshold, "hw_concurrent": concurrent, "lanes_and_slots": lanes}
        t0 = time.perf_counter()
        try:
            p = subprocess.run([sys.executable, __file__, "--one", str(hw_load), "--data", data,
                                "--batches", str(args.batches)], env=env, capture_output=True, text=True,
                               timeout=args.timeout)
            line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
            res = json.loads(line[7:]) if line else {"error": (p.stderr or p.stdout)[-800:]}
        except subprocess.TimeoutExpired:
            res = {"error": f"timed out after {args.timeout} s (hung)"}
        res["seconds"] = round(time.perf_counter() - t0, 1)
        results.append({"config": cfg, **res})
        print(json.dumps(results[-1]), flush=True)
    import platform

    import torch
    out = {"command": " ".join(sys.argv), "subsampling": args.subsampling, "machine": {"gpu": torch.cuda.get_device_name(0), "cpus": os.cpu_count(),
                                                     "torch": torch.__version__, "python": platform.python_version()},
           "results": results}
    Path(args.out).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
