"""CPU ops one at a time, the same DALI code run with NVIDIA DALI's CPU backend and with
torch_dali, alternating, each in its own process: a batch of 32 RGB uint8 images of 200-400 px
(seeded), 2 threads, the median time of a batch after warm-up. Finds the ops whose CPU kernels
lag DALI's (the pure-torch spec where no C helper takes the call). On a shared machine whose speed
drifts from minute to minute, `--rounds N` repeats the pair N times, DALI and torch_dali back to
back in each, and reports each round's ratio and their median (the figure to quote).

    python bench/cpu_ops_vs_dali.py --dali-python ../dali-venv/bin/python --out bench/results/cpu_ops_vs_dali.json
    python bench/cpu_ops_vs_dali.py --one LIB OP      (child: prints one JSON line)
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
#: op name -> the DALI code (fn, types, np, x: the images) that makes its output
OPS = {
    "source_only": "x",  # the pipeline's own cost per batch: external_source and the run
    "rotate": "fn.rotate(x, angle=fn.random.uniform(range=(-30, 30)), fill_value=0)",
    "warp_affine": "fn.warp_affine(x, matrix=fn.transforms.rotation(angle=fn.random.uniform(range=(-30, 30)), "
                   "center=(150, 150)), fill_value=0)",
    "warp_perspective": "fn.experimental.warp_perspective(x, matrix=[1.0, 0.1, 2.0, -0.05, 0.9, 3.0, 0.0005, "
                        "0.0003, 1.0], border_mode='reflect_101')",
    "resize_shorter": "fn.resize(x, resize_shorter=fn.random.uniform(range=(150, 300)))",
    "random_resized_crop": "fn.random_resized_crop(x, size=224)",
    "crop_mirror_normalize": f"fn.crop_mirror_normalize(x, crop=(192, 192), mirror=fn.random.coin_flip(), "
                             f"mean={MEAN}, std={STD})",
    "flip": "fn.flip(x, horizontal=1)",
    "hsv": "fn.hsv(x, hue=fn.random.uniform(range=(-20, 20)), saturation=1.2)",
    "color_twist": "fn.color_twist(x, brightness=1.1, contrast=1.2, hue=10.0, saturation=0.9)",
    "brightness_contrast": "fn.brightness_contrast(x, brightness=fn.random.uniform(range=(0.8, 1.2)), contrast=0.8)",
    "gaussian_blur": "fn.gaussian_blur(x, window_size=5)",
    "water": "fn.water(x)",
    "sphere": "fn.sphere(x)",
    "paste": "fn.paste(x, ratio=1.5, fill_value=0, paste_x=0.3, paste_y=0.4)",
    "erase": "fn.erase(x, anchor=[10, 10, 50, 50], shape=[20, 30, 40, 40], axis_names='HW', fill_value=0)",
    "grid_mask": "fn.grid_mask(x, angle=0.3, ratio=0.4, tile=50)",
    "filter": "fn.experimental.filter(x, np.full((5, 5), 1 / 25, np.float32))",
    "laplacian": "fn.laplacian(x, window_size=3)",
    "equalize": "fn.equalize(x)",
    "color_space_conversion": "fn.color_space_conversion(x, image_type=types.RGB, output_type=types.YCbCr)",
    "transpose": "fn.transpose(x, perm=[2, 0, 1])",
}


def one(lib: str, op: str, seconds: float) -> dict:
    import numpy as np
    if lib == "dali":
        from nvidia.dali import fn, pipeline_def, types
    else:
        from torch_dali import fn, pipeline_def, types
    rng = np.random.default_rng(0)
    imgs = [rng.integers(0, 255, (int(rng.integers(200, 400)), int(rng.integers(200, 400)), 3), dtype=np.uint8)
            for _ in range(32)]

    @pipeline_def(batch_size=32, num_threads=2, device_id=None, seed=1)
    def pipe():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        return eval(OPS[op], {"fn": fn, "types": types, "np": np, "x": x})  # our own table above

    p = pipe()
    p.build()
    for _ in range(2):
        p.run()
    ts: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(ts) < 3:
        t = time.perf_counter()
        p.run()
        ts.append(time.perf_counter() - t)
    return {"lib": lib, "op": op, "ms_per_batch": round(1000 * sorted(ts)[len(ts) // 2], 2), "batches": len(ts)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--one", nargs=2, metavar=("LIB", "OP"))
    ap.add_argument("--dali-python", default=os.environ.get("DALI_PYTHON", str(HERE.parent.parent / "dali-venv/bin/python")))
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=1, help="pairs of runs per op (median ratio reported)")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.one[0], a.one[1], a.seconds)))
        return 0
    rows = []
    for op in a.ops.split(","):
        row: dict = {"op": op}
        rounds: list[dict] = []
        for _ in range(max(1, a.rounds)):
            pair: dict = {}
            for lib, py in (("dali", a.dali_python), ("torch_dali", sys.executable)):
                r = subprocess.run([py, __file__, "--one", lib, op, "--seconds", str(a.seconds)], capture_output=True,
                                   text=True, env=dict(os.environ, PYTHONPATH=str(HERE.parent)), timeout=300)
                line = [s for s in r.stdout.splitlines() if s.startswith("{")]
                pair[lib] = json.loads(line[-1])["ms_per_batch"] if line else None
                if not line:
                    row[lib + "_error"] = (r.stderr.strip().splitlines() or ["no output"])[-1][:200]
            rounds.append(pair)
        ok = [p for p in rounds if p["dali"] and p["torch_dali"]]
        row["dali"] = statistics.median([p["dali"] for p in ok]) if ok else None
        row["torch_dali"] = statistics.median([p["torch_dali"] for p in ok]) if ok else None
        if ok:  # > 1: torch_dali faster; the median of the rounds' own ratios
            row["dali_over_torch_dali"] = round(statistics.median([p["dali"] / p["torch_dali"] for p in ok]), 2)
        if len(rounds) > 1:
            row["rounds"] = [round(p["dali"] / p["torch_dali"], 2) if p in ok else None for p in rounds]
        print(json.dumps(row), flush=True)
        rows.append(row)
    if a.out:
        Path(a.out).write_text(json.dumps({
            "what": "CPU ops, batch 32 RGB uint8 200-400 px, 2 threads, median ms per batch; "
                    "dali_over_torch_dali > 1: torch_dali faster",
            "machine": f"{platform.node()}: {os.cpu_count()} cores, {platform.processor() or platform.machine()}",
            "command": " ".join(["python", "bench/cpu_ops_vs_dali.py", *sys.argv[1:]]),
            "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
