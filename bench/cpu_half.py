"""CPU crop_mirror_normalize with FLOAT16 output: the C helpers (td_crop_mirror_normalize, then
td_to_half: what ops/fast/cpu_image.py runs) against the pure-torch spec (functional.normalize, its
to_half rounding halfway cases away from zero as DALI 2.4's CPU does), and the FLOAT output for
scale. One 224x224 window of a 300x320 uint8 image, mirrored, CHW; the three alternate, 50 calls a
round, medians over the rounds. Checks the two FLOAT16 results are the same bits first.

    python bench/cpu_half.py [--rounds 7] [--out bench/results/cpu_half.json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import torch

from torch_dali._native import helpers
from torch_dali.functional.normalize import crop_mirror_normalize as spec


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    g = torch.Generator().manual_seed(0)
    img = torch.randint(0, 256, (300, 320, 3), dtype=torch.uint8, generator=g)
    mean, std = torch.tensor([128.0, 120.0, 110.0]), torch.tensor([50.0, 55.0, 60.0])
    win = (20, 30, 224, 224)

    def c_float32() -> torch.Tensor:
        out = torch.empty(3, 224, 224)
        assert helpers.crop_mirror_normalize(img, win, True, mean, torch.reciprocal(std), out, True)
        return out

    runs = {"c_float16": lambda: helpers.to_half(c_float32()), "c_float32": c_float32,
            "spec_float16": lambda: spec(img, win, True, mean, std, dtype=torch.float16, layout="CHW")}
    assert torch.equal(runs["c_float16"]().view(torch.int16), runs["spec_float16"]().view(torch.int16))
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(a.rounds):
        for name, f in runs.items():
            t = time.perf_counter()
            for _ in range(50):
                f()
            times[name].append((time.perf_counter() - t) / 50 * 1e3)
    med = {k: round(statistics.median(v), 3) for k, v in times.items()}
    rec = {"what": "crop_mirror_normalize FLOAT16 on the CPU, ms per 224x224 image (median)", "ms": med,
           "spec_over_c_float16": round(med["spec_float16"] / med["c_float16"], 1),
           "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
           "torch": torch.__version__, "command": "python bench/cpu_half.py " + (f"--out {a.out}" if a.out else "")}
    print(json.dumps(rec))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rec, f, indent=1)


if __name__ == "__main__":
    main()
