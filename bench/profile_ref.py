"""Where a reference pipeline's time goes on the GPU machine (bench/reference_pipes.py kinds), read
through DALIGenericIterator as users read it: images/s, per-op host milliseconds per batch (each
op timed on its stage thread by `Plan.time_ops(sync=False)`), the staged executor's per-stage split, CPU seconds per
thread group, GPU memory (device delta and torch's peak), and with --py-spy the Python stacks
sampled while holding the GIL.

    python bench/profile_ref.py --kinds fused,seed,val --data DIR --rec FILE.rec --seconds 6 \
        --out prof.json [--py-spy .spy/py-spy]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _segments() -> dict[str, list[float]]:
    """torch's cached memory per CUDA stream (blocks freed on one stream serve only that stream):
    MiB reserved, MiB in use, segments; largest first."""
    by: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    import torch
    for seg in torch.cuda.memory_snapshot():
        row = by[str(seg.get("stream"))]
        row[0] += seg["total_size"] / 2**20
        row[1] += seg["allocated_size"] / 2**20
        row[2] += 1
    return {k: [round(v[0]), round(v[1]), v[2]] for k, v in sorted(by.items(), key=lambda kv: -kv[1][0])}


def _decoders() -> dict[str, dict]:
    """The nvJPEG decoders' last batch: images per path, phase times, the hardware share now."""
    try:
        from torch_dali.io import nvjpeg
        return {str(k[:2]): dict(d.last_stats) for k, d in list(nvjpeg._NVJPEG.items()) if d is not None}
    except Exception as e:  # noqa: BLE001 - a measurement, not the pipeline
        return {"error": repr(e)}


def _milestone(free0: int) -> dict:
    """GPU memory now: taken from the device since the start, torch's cache, and the rest (CUDA
    modules, nvJPEG's own allocations, local memory), in MiB."""
    import torch
    taken = free0 - torch.cuda.mem_get_info()[0]
    res = torch.cuda.memory_reserved()
    return {"device": round(taken / 2**20), "reserved": round(res / 2**20),
            "allocated": round(torch.cuda.memory_allocated() / 2**20),
            "outside_torch": round((taken - res) / 2**20)}


def _live_at_peak(snap: dict) -> dict:
    """Replays torch's allocation trace: at the moment the most bytes were allocated, which
    allocations were live, grouped by stream and by the torch_dali line that made them ("native"
    for allocations from C++ threads such as the decoder's); and each stream's own peak. MiB."""
    live: dict[int, tuple[int, str, str]] = {}
    per_stream: dict[str, int] = defaultdict(int)
    stream_peak: dict[str, int] = defaultdict(int)
    total = peak = 0
    at_peak: dict = {}
    for e in (snap.get("device_traces") or [[]])[0]:
        act, addr, size, stream = e.get("action"), e.get("addr"), e.get("size", 0), str(e.get("stream"))
        if act == "alloc":
            site = "native"
            for f in e.get("frames") or []:
                fn = f.get("filename", "")
                if "torch_dali" in fn or "/bench/" in fn or ".refbench" in fn:
                    site = f"{fn.split('torch_dali/')[-1]}:{f.get('line')} {f.get('name')}"
                    break
            live[addr] = (size, stream, site)
            total += size
            per_stream[stream] += size
            stream_peak[stream] = max(stream_peak[stream], per_stream[stream])
            if total > peak:
                peak = total
                groups: dict[str, float] = defaultdict(float)
                for sz, st, si in live.values():
                    groups[f"{st} {si}"] += sz
                at_peak = groups
        elif act == "free_completed" and addr in live:
            sz, st, _ = live.pop(addr)
            total -= sz
            per_stream[st] -= sz
    return {"peak_traced_mib": round(peak / 2**20),
            "live_at_peak_mib": {k: round(v / 2**20, 1) for k, v in sorted(at_peak.items(), key=lambda kv: -kv[1])[:25]},
            "stream_peak_mib": {k: round(v / 2**20) for k, v in stream_peak.items()}}


def profile(kind: str, data: str, seconds: float, spy: str, out_dir: Path) -> dict:
    import torch
    import reference_pipes as R
    from profile_stages import group, machine_busy, thread_cpu

    import torch_dali.plugin.pytorch as plugin
    cuda = torch.cuda.is_available()  # without one: a smoke run of the script on the CPU
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    if cuda:
        torch.empty(1, device="cuda")
        sync()
        torch.cuda.reset_peak_memory_stats()
    free0 = torch.cuda.mem_get_info()[0] if cuda else 0
    trace = cuda and os.environ.get("PROFILE_MEM_TRACE") == "1"  # allocation sites (slower)
    if trace:
        torch.cuda.memory._record_memory_history(max_entries=400000, stacks="python")
    milestones = {}
    t0 = time.perf_counter()
    pipe = R.make("torch_dali", kind, data)
    pipe.build()
    if cuda:
        milestones["built"] = _milestone(free0)
    it = plugin.DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                                    last_batch_policy=plugin.LastBatchPolicy.DROP, auto_reset=True)
    next(iter(it))
    sync()
    ttfb = time.perf_counter() - t0
    if cuda:
        milestones["first_batch"] = _milestone(free0)
    ex = pipe.executor
    times = ex.plan.time_ops(sync=False)  # host time of each op on its stage thread (chains split)

    def batches():
        while True:
            for out in it:
                yield out
    gen = batches()
    for _ in range(15):
        next(gen)
    sync()
    times.reset()
    ex.reset_stage_stats()
    proc = None
    gil = out_dir / f"gil_{kind}.txt"
    if spy:
        proc = subprocess.Popen([spy, "record", "--pid", str(os.getpid()), "--gil", "--nonblocking", "-r", "200",
                                 "-d", str(int(seconds)), "-f", "raw", "-o", str(gil)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
    cpu0, busy0, t1 = thread_cpu(), machine_busy(), time.perf_counter()
    n = 0
    while time.perf_counter() - t1 < seconds:
        n += next(gen)[0]["data"].shape[0]
    sync()
    wall = time.perf_counter() - t1
    cpu1, busy1 = thread_cpu(), machine_busy()
    names = {t.native_id: t.name for t in threading.enumerate()}
    groups: dict[str, float] = defaultdict(float)
    for tid, (comm, c) in cpu1.items():
        groups[group(names.get(tid, comm))] += c - cpu0.get(tid, (comm, 0.0))[1]
    nb = max(1, n // R.BS)
    res = {
        "kind": kind, "images_per_s": round(n / wall), "first_batch_s": round(ttfb, 3),
        "gpu_mem_mib": round((free0 - torch.cuda.mem_get_info()[0]) / 2**20) if cuda else None,
        "torch_peak_mib": round(torch.cuda.max_memory_allocated() / 2**20) if cuda else None,
        "op_host_ms_per_batch": {k: round(1000 * v / nb, 2) for k, v in sorted(times.seconds.items(), key=lambda x: -x[1])},
        "stage_ms_per_batch": {k: {m[:-2]: round(1000 * v[m] / max(1, v["batches"]), 2)
                                   for m in ("wait_in_s", "busy_s", "wait_out_s")}
                               for k, v in ex.stage_stats().items()},
        "cpu_s_by_thread_group": {k: round(v, 2) for k, v in sorted(groups.items(), key=lambda x: -x[1]) if v >= 0.05},
        "machine_cores_busy": round((busy1[0] - busy0[0]) / max(1, busy1[1] - busy0[1]) * (os.cpu_count() or 1), 2),
        "memory_stats": ex.memory_stats() if hasattr(ex, "memory_stats") else None,
        "torch_reserved_mib": round(torch.cuda.memory_reserved() / 2**20) if cuda else None,
        "decoders": _decoders(),
        "segments_by_stream": _segments() if cuda else None,
    }
    if cuda:
        milestones["end"] = _milestone(free0)
        res["memory_milestones_mib"] = milestones
    if trace:
        res["allocations"] = _live_at_peak(torch.cuda.memory._snapshot())
        torch.cuda.memory._record_memory_history(enabled=None)
    if proc is not None:
        try:
            _, err = proc.communicate(timeout=30)
            res["py_spy"] = {"rc": proc.returncode, "file": gil.name, "stderr": (err or "")[-300:]}
        except subprocess.TimeoutExpired:
            proc.kill()
    pipe.shutdown() if hasattr(pipe, "shutdown") else None
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kinds", default="fused,seed,val,unfused")
    ap.add_argument("--data", required=True, help="JPEG class folder")
    ap.add_argument("--rec", default="", help="RecordIO file for the 'seed' kind")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--py-spy", default="")
    ap.add_argument("--out", default="profile_ref.json")
    a = ap.parse_args()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    results = []
    for kind in a.kinds.split(","):
        # each kind in its own process: memory and threads are the pipeline's own
        cmd = [sys.executable, __file__, "--one", kind, a.rec if kind == "seed" else a.data, str(a.seconds),
               a.py_spy, str(out.parent)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
        line = [x for x in r.stdout.splitlines() if x.startswith("{")]
        results.append(json.loads(line[-1]) if line else {"kind": kind, "error": r.stderr[-1500:]})
        print(json.dumps(results[-1]), flush=True)
    out.write_text(json.dumps({"command": " ".join(sys.argv), "results": results}, indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        kind, data, secs, spy, od = sys.argv[2:7]
        print(json.dumps(profile(kind, data, float(secs), spy, Path(od))), flush=True)
    else:
        main()
