"""The interpreter's GIL switch interval vs the GPU training pipeline's throughput (alternating runs,
same process, same data). On an H200 it made no difference beyond the noise, so the executor
leaves the interpreter's interval alone.

    python bench/switch_interval.py --images 8192 --batches 80 --out switch_interval.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=8192)
    ap.add_argument("--batches", type=int, default=80)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default="switch_interval.json")
    args = ap.parse_args()
    import torch
    from throughput import rate, train_pipe

    from torch_dali.io import nvjpeg as D
    from torch_dali.sample_data import make_benchmark_folder
    data = os.path.join(tempfile.mkdtemp(), "q90")
    make_benchmark_folder(data, args.images, quality=90, subsampling="4:2:0")
    runs: dict[str, list[int]] = {}
    for _ in range(args.rounds):
        for interval in ("0.005", "0.001", "0.0002"):
            sys.setswitchinterval(float(interval))
            r, _ = rate(train_pipe(data, 256, 0, 8), args.batches)
            runs.setdefault(interval, []).append(round(r))
            print(interval, round(r), flush=True)
    dec = next(iter(D._NVJPEG.values()), None)
    out = {"command": " ".join(sys.argv), "machine": {"gpu": torch.cuda.get_device_name(0), "cpus": os.cpu_count(),
                                                     "torch": torch.__version__, "python": platform.python_version()},
           "images_per_s_by_switch_interval_s": runs,
           "last_decode": dict(dec.last_stats) if dec is not None else None}
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
