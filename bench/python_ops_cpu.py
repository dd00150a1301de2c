"""The user's Python Operators pipelines on the CPU, prefetching off (as the example asks:
exec_async=False, exec_pipelined=False) vs on (torch_dali's default). Same process, same data.

    python bench/python_ops_cpu.py --batches 20
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import runpy
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "mission" / "python_operators.py"


def measure(make, asynchronous: bool, batches: int) -> float:
    pipe = make()
    pipe._exec_async = pipe._exec_pipelined = asynchronous  # the example hard-codes False
    pipe.build()
    pipe.run()
    t0 = time.perf_counter()
    for _ in range(batches):
        pipe.run()
    rate = batches * pipe.batch_size / (time.perf_counter() - t0)
    pipe.shutdown()
    return rate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(HERE / "results" / "python_ops_cpu.json"))
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    from torch_dali.sample_data import make_sample_dataset
    tmp = tempfile.mkdtemp()
    make_sample_dataset(tmp, images_per_class=8)
    os.environ["IMAGE_DIR"] = os.path.join(tmp, "images")
    g = runpy.run_path(str(EXAMPLE))
    res = {}
    for name in ("PythonFuncPipeline", "TorchFuncPipeline"):
        cls = g[name]

        def make(cls=cls):
            return cls(args.batch_size, args.threads, 0, os.environ["IMAGE_DIR"])
        # alternate to spread machine noise over both modes
        off = [measure(make, False, args.batches) for _ in range(2)]
        on = [measure(make, True, args.batches) for _ in range(2)]
        res[name] = {"prefetch_off_images_per_s": round(max(off), 1), "prefetch_on_images_per_s": round(max(on), 1),
                     "on_over_off": round(max(on) / max(off), 3)}
        print(name, res[name])
    import torch
    Path(args.out).write_text(json.dumps({
        "results": res, "batch_size": args.batch_size, "threads": args.threads, "batches": args.batches,
        "machine": {"cpu_count": os.cpu_count(), "python": platform.python_version(), "torch": torch.__version__},
        "command": " ".join(["python"] + sys.argv)}, indent=2))


if __name__ == "__main__":
    main()
