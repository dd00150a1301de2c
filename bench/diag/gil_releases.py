"""How often a pipeline's threads give the GIL away per batch, on this machine (no GPU needed for
CPU-stage pipelines). A thread that releases the GIL around a short call (a small torch op, a
contended lock, a NumPy op over more than a few hundred elements) may have to wait up to Python's
switch interval to get it back while another thread runs Python: with several stage threads and a
training loop that is the main cost of host work, more than the work itself.

Measured by running the pipeline beside a thread that runs pure Python without pause, with the switch
interval set to S (20 ms): every release then costs about S, so
    releases per batch ~ (time per batch beside the spinner - time alone) / S.
    python3 bench/diag/gil_releases.py REC_FILE [BATCHES] [S]            (CPU: no GPU needed)
    python3 bench/diag/gil_releases.py DATA BATCHES S KIND               (GPU: a reference row)
CPU: the Serialization example's reader and random draws (readers.mxnet, random.uniform x3), the
CPU half of the seed row. GPU: KIND is one of bench/reference_pipes.py's rows (DATA as for
epoch_steady.py), read through DALIGenericIterator; each stage lane's busy time is measured too,
so each stage's releases per batch come out (a stage's busy time includes its waits for the GIL)."""
import json, os, sys, threading, time


def pipe_for(rec: str):
    from torch_dali import fn, pipeline_def
    @pipeline_def(batch_size=256, num_threads=2, device_id=None, seed=12)
    def p():
        jpegs, labels = fn.readers.mxnet(path=[rec], index_path=[rec[:-4] + ".idx"], random_shuffle=True,
                                         name="Reader")
        return jpegs, labels, fn.random.uniform(range=(256.0, 480.0)), fn.random.uniform(range=(0.0, 1.0)), \
            fn.random.uniform(range=(0.0, 1.0))
    return p()


def per_batch(pipe, n: int, it=None) -> tuple[float, dict[str, float]]:
    """Seconds per batch, and each stage lane's busy seconds per batch (staged executor only)."""
    ex = getattr(pipe, "executor", None)
    if ex is not None and hasattr(ex, "reset_stage_stats"):
        ex.reset_stage_stats()
    t = time.perf_counter()
    for _ in range(n):
        if it is None:
            pipe.run()
        else:
            next(it)
    if it is not None:
        import torch
        torch.cuda.synchronize()
    dt = (time.perf_counter() - t) / n
    busy = {k: v["busy_s"] / max(1, v["batches"]) for k, v in ex.stage_stats().items()} \
        if ex is not None and hasattr(ex, "stage_stats") else {}
    return dt, busy


def main() -> None:
    rec = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
    kind = sys.argv[4] if len(sys.argv) > 4 else ""
    it = None
    if kind:  # a GPU reference row
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        import reference_pipes
        from torch_dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy
        pipe = reference_pipes.make("torch_dali", kind, rec)
        pipe.build()
        it = DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                                 last_batch_policy=LastBatchPolicy.DROP, auto_reset=True)
        it = iter(_forever(it))
    else:
        pipe = pipe_for(rec)
        pipe.build()
    per_batch(pipe, 5, it)
    alone, busy_alone = min((per_batch(pipe, n, it) for _ in range(3)), key=lambda r: r[0])
    sys.setswitchinterval(s)
    stop = False

    def spin() -> None:
        while not stop:
            sum(range(100))
    th = threading.Thread(target=spin, daemon=True)
    th.start()
    beside, busy_beside = per_batch(pipe, n, it)
    stop = True
    th.join()
    print(json.dumps({"what": "gil_releases", "kind": kind or "cpu_seed", "alone_ms": round(alone * 1e3, 3),
                      "beside_spinner_ms": round(beside * 1e3, 2), "switch_interval_s": s,
                      "releases_per_batch": round((beside - alone) / s, 2),
                      "stage_releases_per_batch": {k: round((busy_beside.get(k, 0.0) - v) / s, 2)
                                                   for k, v in busy_alone.items()}}))


def _forever(it):
    while True:
        yield from it


if __name__ == "__main__":
    main()
