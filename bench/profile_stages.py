"""Where the GPU training pipeline's time goes (decode + RRC 224 + flip + normalize, batch 256):
runs it for a fixed time and reports, for that window,
- the staged executor's per-stage-lane split (waiting for input / working / waiting to hand on):
  the stage that never waits bounds throughput;
- CPU seconds per thread group (decoder threads, the CPU stage's pool, stage threads, CUDA's own),
  and the whole machine's busy share: whether the cores are the limit;
- the decoder's per-phase host times of the last batch;
- with --py-spy PATH, Python stacks sampled only while holding the GIL (raw collapsed stacks).

    python bench/profile_stages.py --seconds 8 --out profile.json [--py-spy /path/to/py-spy]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def thread_cpu() -> dict[int, tuple[str, float]]:
    """tid -> (name, CPU seconds) for every thread of this process."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text()
            comm = Path(f"/proc/self/task/{tid}/comm").read_text().strip()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        out[int(tid)] = (comm, (int(fields[11]) + int(fields[12])) / tick)
    return out


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all cores, from /proc/stat."""
    v = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def group(name: str) -> str:
    return re.sub(r"[_.-]?\d+$", "", name) or name


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=8192)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--data", default="")
    ap.add_argument("--subsampling", default="4:2:0", choices=["4:2:0", "4:4:4"])
    ap.add_argument("--py-spy", default="", help="py-spy executable: also sample GIL-holding stacks")
    ap.add_argument("--switch-interval", type=float, default=0.0, help="sys.setswitchinterval (s); 0: leave it")
    ap.add_argument("--flip", default="cmn", choices=["cmn", "builtin", "python"],
                    help="the flip: CMN's mirror, fn.flip, or a TorchPythonFunction (the judge's flip rows)")
    ap.add_argument("--out", default="profile.json")
    args = ap.parse_args()
    if args.switch_interval > 0:
        sys.setswitchinterval(args.switch_interval)
    import torch
    from throughput import bench_data, train_pipe

    from torch_dali.io import nvjpeg
    data = bench_data(args.data, args.images, args.subsampling)
    pipe = train_pipe(data, 256, 0, 8, flip_mode=args.flip)
    pipe.build()
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    for _ in range(20):
        pipe.run()
    sync()
    ex = pipe.executor
    ex.reset_stage_stats()
    spy = None
    gil_path = str(Path(args.out).with_suffix("")) + "_gil.txt"
    if args.py_spy:
        spy = subprocess.Popen([args.py_spy, "record", "--pid", str(os.getpid()), "--gil", "--nonblocking",
                                "-r", "200", "-d", str(int(args.seconds)), "-f", "raw", "-o", gil_path],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
    cpu0, busy0, t0 = thread_cpu(), machine_busy(), time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < args.seconds:
        pipe.run()[0].as_tensor()
        n += 1
    sync()
    wall = time.perf_counter() - t0
    cpu1, busy1 = thread_cpu(), machine_busy()
    names = {t.native_id: t.name for t in threading.enumerate()}
    groups: dict[str, float] = defaultdict(float)
    for tid, (comm, c) in cpu1.items():
        used = c - cpu0.get(tid, (comm, 0.0))[1]
        groups[group(names.get(tid, comm))] += used
    stats = ex.stage_stats()
    dec = next(iter(nvjpeg._NVJPEG.values()), None)
    res = {
        "command": " ".join(sys.argv), "subsampling": args.subsampling, "flip": args.flip,
        "machine": {"gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None, "cpus": os.cpu_count(),
                    "cpus_usable": len(os.sched_getaffinity(0))},
        "env": {k: v for k, v in os.environ.items() if k.startswith("TORCH_DALI_")},
        "switch_interval_s": sys.getswitchinterval(),
        "images_per_s": round(n * 256 / wall), "seconds": round(wall, 2), "batches": n,
        "stages": stats,
        "stage_ms_per_batch": {k: {m[:-2]: round(1000 * v[m] / max(1, v["batches"]), 2)
                                   for m in ("wait_in_s", "busy_s", "wait_out_s")} for k, v in stats.items()},
        "cpu_s_by_thread_group": {k: round(v, 2) for k, v in sorted(groups.items(), key=lambda x: -x[1]) if v >= 0.01},
        "process_cores_busy": round(sum(groups.values()) / wall, 2),
        "machine_cores_busy": round((busy1[0] - busy0[0]) / max(1, busy1[1] - busy0[1]) * (os.cpu_count() or 1), 2),
        "decoder_last_batch": dict(dec.last_stats) if dec is not None else None,
    }
    pipe.shutdown()
    if spy is not None:
        try:
            _, err = spy.communicate(timeout=30)
            res["py_spy"] = {"rc": spy.returncode, "file": os.path.basename(gil_path), "stderr": (err or "")[-400:]}
        except subprocess.TimeoutExpired:
            spy.kill()
            res["py_spy"] = {"error": "timed out"}
    Path(args.out).write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
