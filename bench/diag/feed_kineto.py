"""What GPU work runs beside ResNet-50's training when a loader feeds it, traced with PyTorch's own
profiler (CUPTI, every kernel and copy of the process, nvJPEG's and DALI's included) where Nsight
Systems is not installed. The same training loop and loaders as bench/feed_probe.py; after warm-up
steps, STEPS steps are traced and split per stream by nsys_streams.analyse (the training stream's
busy time and idle holes, the loader's kernels that overlapped it).

    python bench/diag/feed_kineto.py DATA synthetic|td|tdl|dali [steps]   (one JSON line)

Also, over the traced steps: the training thread's host time per step (in next(), issuing the
step) and its CPU time; how late a thread that sleeps 1 ms gets the GIL back (the wait any Python
thread, the training's included, has for it while the loader's threads run Python); with
TORCH_DALI_PROBE_SPY=path/to/py-spy, the Python stacks sampled while holding the GIL, per thread
(`gil_holders`: samples per thread name and its most frequent innermost frames); per thread, the
CUDA runtime/driver calls it spent most host time in (`cuda_calls`: thread, call, n, ms, n over
1 ms, max ms); TORCH_DALI_PROBE_TRAIN=graph replays the step as one CUDA graph (feed_probe).
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import feed_probe  # noqa: E402
from nsys_streams import analyse  # noqa: E402


class GilLatency:
    """A thread that sleeps 1 ms in a loop and records how much later than that it runs again:
    the time it waits for the GIL (plus the OS's wake-up, ~0.05 ms on an idle core)."""

    def __init__(self) -> None:
        self.late: list[float] = []
        self.on = False
        threading.Thread(target=self._loop, daemon=True, name="gil-latency").start()

    def _loop(self) -> None:
        while True:
            t = time.perf_counter()
            time.sleep(0.001)
            if self.on:
                self.late.append((time.perf_counter() - t - 0.001) * 1e3)

    def summary(self) -> dict[str, float]:
        v = sorted(self.late) or [0.0]
        return {"n": len(self.late), "mean_ms": round(statistics.mean(v), 3), "p50_ms": round(v[len(v) // 2], 3),
                "p99_ms": round(v[int(len(v) * 0.99)], 3), "max_ms": round(v[-1], 3),
                "over_1ms_share": round(sum(x > 1 for x in v) / len(v), 3)}


def gil_holders(path: str) -> dict:
    """py-spy's raw --gil --threads output: samples per thread name, and per thread its most
    frequent innermost frames."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    per: Counter[str] = Counter()
    frames: dict[str, Counter[str]] = defaultdict(Counter)
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        return {"error": str(e)}
    for line in lines:
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        head, *rest = stack.split(";")
        # "thread (0x...)" or "process NNN:..." heads: the OS thread id is in the first item
        tid = next((int(x, 16) if x.startswith("0x") else int(x) for x in head.replace("(", " ").replace(")", " ")
                    .split() if x.startswith("0x") or x.isdigit()), None)
        name = names.get(tid, head[:40]) if tid is not None else head[:40]
        per[name] += int(n)
        if rest:
            frames[name][";".join(f.split(" (")[0] for f in rest[-3:])] += int(n)
    return {"samples": dict(per.most_common(12)),
            "top": {k: frames[k].most_common(5) for k, _ in per.most_common(6)}}


def main() -> None:
    import torch
    import torchvision
    from torch.profiler import ProfilerActivity, profile
    data, mode = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    train = os.environ.get("TORCH_DALI_PROBE_TRAIN", "eager")  # graph: feed_probe.graphed_step
    do_step = feed_probe.graphed_step(model, opt) if train == "graph" else feed_probe.train_step
    gen = feed_probe.batches(data, mode)

    host: list[tuple[float, float, float]] = []

    def step() -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        x, y = next(gen)
        t1 = time.perf_counter()
        do_step(model, opt, x, y)
        host.append(((t1 - t0) * 1e3, (time.perf_counter() - t1) * 1e3, (time.thread_time() - c0) * 1e3))

    lat = GilLatency()
    for _ in range(15):
        step()
    torch.cuda.synchronize()
    host.clear()
    spy_bin, spy, spy_out = os.environ.get("TORCH_DALI_PROBE_SPY", ""), None, ""
    if spy_bin:
        spy_out = os.path.join(tempfile.mkdtemp(), "gil.txt")
        spy = subprocess.Popen([spy_bin, "record", "--pid", str(os.getpid()), "--gil", "--threads", "--nonblocking",
                                "-r", "500", "-f", "raw", "-o", spy_out],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        lat.on = True
        t = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t
        lat.on = False
    spy_err = ""
    if spy is not None:
        spy.send_signal(2)  # py-spy writes its file on SIGINT
        try:
            spy_err = (spy.communicate(timeout=20)[1] or "")[-300:]
        except subprocess.TimeoutExpired:
            spy.kill()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        events = json.load(open(path))["traceEvents"]
    kern, copies = [], []
    names = {t.native_id: t.name for t in threading.enumerate()}
    api: dict = defaultdict(lambda: [0, 0.0, 0, 0.0])  # (thread, call) -> n, ms, n over 1 ms, max ms
    for ev in events:
        if ev.get("ph") != "X" or "dur" not in ev:
            continue
        cat, a = ev.get("cat", ""), ev.get("args", {})
        if cat in ("cuda_runtime", "cuda_driver"):  # host time in CUDA calls, per calling thread
            v = api[(names.get(ev.get("tid"), "native"), ev.get("name", "?"))]
            ms = float(ev["dur"]) / 1e3
            v[0] += 1
            v[1] += ms
            v[2] += ms > 1
            v[3] = max(v[3], ms)
            continue
        s = int(float(ev["ts"]) * 1e3)
        e = s + int(float(ev["dur"]) * 1e3)
        if cat == "kernel":
            kern.append((s, e, int(a.get("stream", -1)), ev.get("name", "?")))
        elif cat in ("gpu_memcpy", "gpu_memset"):
            copies.append((s, e, int(a.get("stream", -1)), int(a.get("bytes", 0)), ev.get("name", cat)[:24]))
    rec = analyse(kern, copies, mode)
    med = lambda k: round(statistics.median(h[k] for h in host), 2)  # noqa: E731
    rec.update(steps=steps, images_per_s_traced=round(steps * feed_probe.BS / wall, 1),
               host_ms_median={"next": med(0), "issue": med(1), "cpu": med(2)},
               host_ms_mean={"next": round(statistics.mean(h[0] for h in host), 2),
                             "issue": round(statistics.mean(h[1] for h in host), 2)},
               gil_latency=lat.summary(), train=train,
               # the CUDA calls the threads spent most host time in: where a decode lane blocks
               cuda_calls=[[t, c, v[0], round(v[1], 1), v[2], round(v[3], 1)]
                           for (t, c), v in sorted(api.items(), key=lambda kv: -kv[1][1])[:25]],
               config={k: v for k, v in os.environ.items() if k.startswith("TORCH_DALI_")})
    if spy_bin:
        rec["gil_holders"] = gil_holders(spy_out) if os.path.exists(spy_out) else {"error": spy_err}
    print(json.dumps(rec), flush=True)
    os._exit(0)  # loader threads may still be mid-batch; the trace is what was wanted


if __name__ == "__main__":
    main()
