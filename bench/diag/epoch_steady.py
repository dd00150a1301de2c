"""Per-epoch images/s of one reference row over many epochs in one process (DALI code, run with
NVIDIA DALI or torch_dali): whether a library's speed is steady or dips now and then, which a
3-epoch judge row cannot tell from noise. Prints one JSON line per run.
    [GC=off|freeze] python3 bench/diag/epoch_steady.py LIB ROOT [KIND] [EPOCHS]   (LIB: nvidia.dali | torch_dali)
KIND: any of bench/reference_pipes.py's (fused, unfused, seed, val, ...; for seed, the Serialization
example's pipeline, ROOT is the .rec file that .refbench/bench_more.py rec writes). torch's allocator counts (cudaMalloc calls, retries) come
with each run: a row whose output sizes vary per batch may pay for new device blocks.
GIL_PROBE=1 runs a thread that sleeps 1 ms at a time and records how late it wakes (the time it waits
for the GIL, mostly): per epoch, the median and 90th percentile, to set slow epochs beside GIL contention.
SWITCH_INTERVAL=S sets sys.setswitchinterval(S) before the build (Python's default: 0.005 s), how long
a thread running Python keeps the GIL while another waits for it.
GC=off disables Python's garbage collector after the build, GC=freeze moves every object made so far
out of its reach (gc.freeze): whether collections of a large heap stall the pipeline's threads."""
import importlib, json, os, sys, time

import torch


def main():
    lib, root = sys.argv[1], sys.argv[2]
    kind = sys.argv[3] if len(sys.argv) > 3 else "fused"
    epochs = int(sys.argv[4]) if len(sys.argv) > 4 else 12
    plugin = importlib.import_module(lib + ".plugin.pytorch")
    torch.empty(1, device="cuda")
    if os.environ.get("SWITCH_INTERVAL"):
        sys.setswitchinterval(float(os.environ["SWITCH_INTERVAL"]))

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import reference_pipes  # the judge's pipelines as our harness writes them
    pipe = reference_pipes.make(lib, kind, root)
    pipe.build()
    import gc
    gcmode = os.environ.get("GC", "")
    if gcmode == "off":
        gc.disable()
    elif gcmode == "freeze":
        gc.freeze()
    it = plugin.DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                                    last_batch_policy=plugin.LastBatchPolicy.DROP, auto_reset=True)
    measure(lib, kind, epochs, pipe, it, gc)


def measure(lib, kind, epochs, pipe, it, gc):
    per, waits, busy, cpu_s, host_busy, gil = [], [], {}, [], [], []
    probe = _GilProbe() if os.environ.get("GIL_PROBE") == "1" else None
    for e in range(epochs + 1):
        torch.cuda.synchronize()
        t = time.perf_counter()
        c0, h0 = _process_cpu_s(), _host_jiffies()
        if probe:
            probe.take()
        n = 0
        last = t
        for out in it:
            n += out[0]["data"].shape[0]
            now = time.perf_counter()
            if e:
                waits.append(now - last)  # host time from one batch to the next
            last = now
        torch.cuda.synchronize()
        if e:  # the first epoch warms up
            per.append(round(n / (time.perf_counter() - t)))
            cpu_s.append(round(_process_cpu_s() - c0, 2))  # this process's CPU seconds in the epoch
            h1 = _host_jiffies()
            host_busy.append(round(1 - (h1[1] - h0[1]) / max(1, h1[0] - h0[0]), 3))  # all cores, any process
            if probe:
                gil.append(probe.take())
        if lib == "torch_dali":  # each stage's busy seconds per epoch: which one a slow epoch is slow in
            if e:
                for name, st in pipe.executor.stage_stats().items():
                    busy.setdefault(name, []).append(st["busy_s"])
            pipe.executor.reset_stage_stats()
    s = sorted(per)
    w = sorted(waits)
    gaps = {"median_ms": round(1000 * w[len(w) // 2], 2), "p90_ms": round(1000 * w[int(len(w) * 0.9)], 2),
            "max5_ms": [round(1000 * v, 1) for v in w[-5:]],
            "over_3x_median": sum(1 for v in w if v > 3 * w[len(w) // 2]), "batches": len(w)}
    print(json.dumps({"what": f"epoch_steady_{kind}", "lib": lib, "gc": os.environ.get("GC", ""),
                      "switch_interval_s": sys.getswitchinterval(),
                      "gc_counts": gc.get_stats()[2]["collections"], "per_epoch_img_s": per,
                      "median": s[len(s) // 2], "allocator": {k: torch.cuda.memory_stats().get(k) for k in
                      ("num_device_alloc", "num_device_free", "num_alloc_retries", "num_sync_all_streams")}, "min": s[0], "max": s[-1], "batch_gaps": gaps,
                      "stage_busy_per_epoch_s": busy or None, "process_cpu_s_per_epoch": cpu_s,
                      "host_cpu_busy_per_epoch": host_busy,
                      "gil_probe_late_ms_per_epoch_median_p90": gil or None}), flush=True)


class _GilProbe:
    """A daemon thread sleeping 1 ms at a time; `take` returns the (median, p90) ms by which its
    wake-ups came late since the last call (a woken thread must get the GIL before it runs on)."""

    def __init__(self) -> None:
        import threading
        self.late: list[float] = []
        threading.Thread(target=self._run, daemon=True, name="gil-probe").start()

    def _run(self) -> None:
        while True:
            t = time.perf_counter()
            time.sleep(0.001)
            self.late.append(time.perf_counter() - t - 0.001)

    def take(self) -> list[float]:
        got, self.late = self.late, []
        got.sort()
        if not got:
            return [0.0, 0.0]
        return [round(1000 * got[len(got) // 2], 3), round(1000 * got[int(len(got) * 0.9)], 3)]


def _process_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def _host_jiffies() -> tuple[int, int]:
    """(all, idle + iowait) jiffies of every core since boot, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]


if __name__ == "__main__":
    main()
