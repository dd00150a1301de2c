"""The reference matrix in our own harness: every DALI reference pipeline (bench/reference_pipes.py,
the same DALI code for either library) run with torch_dali and with NVIDIA DALI, alternating, each
run in its own process (so GPU memory and time to the first batch are that library's own), then
ResNet-50's feed ratio (its speed fed by each loader over its speed on synthetic data). Writes one
JSON (rows, ratios, machine, command) and, with --chart, a PNG of the ratios (bench/chart.py).

    python bench/matrix.py --data /tmp/ref420 --data444 /tmp/ref444 --rec /tmp/ref420.rec \\
        --dali-site /tmp/dali-site --rounds 2 --feed --out bench/results/matrix_h200.json \\
        --chart bench/results/matrix_h200.png

DALI runs where `--dali-site` holds it (../shared/tools/dali_carry.sh puts it in /tmp/dali-site on
the GPU machine); without it only torch_dali is measured and no ratio is given. The data sets come
from ../shared/bench/bench_anchors.py (`gen`, `JPEG444=1`) and bench_more.py (`rec`).
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
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# kind -> (reference_pipes kind, data set, hw_decoder_load), as ../shared/bench/reference.sh runs them
ROWS = {
    "fused": ("fused", "data", 1.0), "unfused": ("unfused", "data", 0.65),
    "flip_builtin": ("flip_builtin", "data", 0.65), "flip_pyfn": ("flip_pyfn", "data", 0.65),
    "seed": ("seed", "rec", 0.65), "val": ("val", "data", 0.65),
    "fused_444": ("fused", "data444", 1.0), "unfused_444": ("unfused", "data444", 0.65),
}
LIBS = ("torch_dali", "nvidia.dali")


def _env(lib: str, dali_site: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if lib == "torch_dali":
        env["PYTHONPATH"] = str(ROOT)
    else:
        cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        env["PYTHONPATH"] = dali_site
        env["LD_LIBRARY_PATH"] = f"{dali_site}/nvidia/cu13/lib:{cuda}/lib64:" + os.environ.get("LD_LIBRARY_PATH", "")
    return env


def measure_one(lib: str, kind: str, data: str, hw_load: float, epochs: int) -> dict[str, Any]:
    """In this process: build the pipeline, time to its first batch (through DALIGenericIterator, as
    users read it), the rest of that epoch as warm-up, then `epochs` epochs timed; GPU memory the
    pipeline took (free memory before building minus after)."""
    import torch
    sys.path.insert(0, str(HERE))
    import reference_pipes as R
    plugin = __import__(lib + ".plugin.pytorch", fromlist=["x"])
    torch.empty(1, device="cuda")  # the context first: memory deltas are the library's own
    torch.cuda.synchronize()
    free0 = torch.cuda.mem_get_info()[0]
    t0 = time.perf_counter()
    pipe = R.make(lib, kind, data, hw_load=hw_load)
    pipe.build()
    it = plugin.DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                                    last_batch_policy=plugin.LastBatchPolicy.DROP, auto_reset=True)
    n = next(iter(it))[0]["data"].shape[0]
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    for _ in it:  # the rest of the first epoch: warm-up
        pass
    n, t1 = 0, time.perf_counter()
    for _ in range(epochs):
        for out in it:
            n += out[0]["data"].shape[0]
    torch.cuda.synchronize()
    secs = time.perf_counter() - t1
    return {"lib": lib, "row_kind": kind, "images_per_s": round(n / secs, 1), "images": n,
            "first_batch_s": round(first, 3), "gpu_mem_mib": round((free0 - torch.cuda.mem_get_info()[0]) / 2**20),
            "version": getattr(__import__(lib), "__version__", "?")}


def feed_one(which: str, data: str, steps: int) -> dict[str, Any]:
    """ResNet-50 (bf16 autocast, channels_last, SGD) for `steps` steps fed by `which`: synthetic
    data, torch_dali's DALIGenericIterator over the fused pipeline ("td"), torch_dali.DataLoader
    over the unfused pipeline ("tdl"), or DALI's iterator over the fused pipeline ("dali")."""
    import torch
    import torchvision
    sys.path.insert(0, str(HERE))
    import reference_pipes as R
    from feed_probe import train_step
    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    bs = R.BS

    def batches():
        if which == "synthetic":
            x = torch.randn(bs, 3, 224, 224, device="cuda")
            y = torch.randint(0, 1000, (bs,), device="cuda")
            while True:
                yield x, y
        lib = "nvidia.dali" if which == "dali" else "torch_dali"
        plugin = __import__(lib + ".plugin.pytorch", fromlist=["x"])
        if which == "tdl":
            import torch_dali
            loader = torch_dali.DataLoader(R.make("torch_dali", "unfused", data), batch_size=bs, drop_last=True)
            while True:
                for x, y in loader:
                    yield x, y.view(-1).long()
        pipe = R.make(lib, "fused", data, hw_load=1.0)
        pipe.build()
        it = plugin.DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                                        last_batch_policy=plugin.LastBatchPolicy.DROP, auto_reset=True)
        while True:
            for out in it:
                yield out[0]["data"], out[0]["label"].view(-1).long().cuda()

    gen = batches()

    def step() -> None:
        x, y = next(gen)
        train_step(model, opt, x, y)

    for _ in range(10):  # warm-up: cuDNN autotuning, the loader's first epoch start
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return {"feed": which, "images_per_s": round(steps * bs / (time.perf_counter() - t0), 1), "steps": steps}


def summarize(rows: list[dict[str, Any]], feeds: list[dict[str, Any]]) -> dict[str, Any]:
    """Per row: torch_dali / DALI images/s of each round (the pair measured back to back) and their
    median; memory and first batch of each library (medians); the feed fractions of synthetic."""
    out: dict[str, Any] = {}
    for row in ROWS:
        mine = [r for r in rows if r.get("row") == row and "images_per_s" in r]
        td = {r["round"]: r for r in mine if r["lib"] == "torch_dali"}
        dl = {r["round"]: r for r in mine if r["lib"] == "nvidia.dali"}
        if not td:
            continue
        ratios = [round(td[k]["images_per_s"] / dl[k]["images_per_s"], 3) for k in sorted(td) if k in dl]

        def med(rs: dict[int, dict[str, Any]], key: str) -> float | None:
            vals = [r[key] for r in rs.values() if r.get(key) is not None]
            return statistics.median(vals) if vals else None
        out[row] = {"ratios": ratios, "ratio_median": statistics.median(ratios) if ratios else None,
                    "images_per_s": {"torch_dali": med(td, "images_per_s"), "dali": med(dl, "images_per_s")},
                    "gpu_mem_mib": {"torch_dali": med(td, "gpu_mem_mib"), "dali": med(dl, "gpu_mem_mib")},
                    "first_batch_s": {"torch_dali": med(td, "first_batch_s"), "dali": med(dl, "first_batch_s")}}
    synth = [f["images_per_s"] for f in feeds if f.get("feed") == "synthetic" and "images_per_s" in f]
    if synth:
        base = statistics.median(synth)
        out["feed_fraction_of_synthetic"] = {
            w: round(statistics.median([f["images_per_s"] for f in feeds if f.get("feed") == w]) / base, 3)
            for w in ("td", "tdl", "dali") if any(f.get("feed") == w and "images_per_s" in f for f in feeds)}
    return out


def _run(cmd: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:g} s"}
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    return json.loads(lines[-1]) if lines else {"error": (r.stderr or r.stdout)[-1200:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="JPEG class folder (q90 4:2:0)")
    ap.add_argument("--data444", default="", help="JPEG class folder (q95 4:4:4): the *_444 rows")
    ap.add_argument("--rec", default="", help="RecordIO file for the seed row")
    ap.add_argument("--dali-site", default="", help="folder holding nvidia.dali (no DALI runs without it)")
    ap.add_argument("--rows", default=",".join(ROWS), help="which rows (default: all)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=3, help="timed epochs per run, after a warm-up epoch")
    ap.add_argument("--feed", action="store_true", help="also ResNet-50's feed ratio")
    ap.add_argument("--feed-steps", type=int, default=60)
    ap.add_argument("--timeout", type=float, default=150)
    ap.add_argument("--out", default="bench/results/matrix.json")
    ap.add_argument("--chart", default="", help="PNG of the ratios (bench/chart.py)")
    a = ap.parse_args()
    sources = {"data": a.data, "data444": a.data444, "rec": a.rec}
    libs = [lib for lib in LIBS if lib == "torch_dali" or a.dali_site]
    rows: list[dict[str, Any]] = []
    for rnd in range(a.rounds):
        for row in a.rows.split(","):
            kind, src, hw = ROWS[row]
            if not sources[src]:
                continue
            for lib in libs:  # alternating: each pair back to back
                r = _run([sys.executable, __file__, "--one", lib, kind, sources[src], str(hw), str(a.epochs)],
                         _env(lib, a.dali_site), a.timeout)
                r.update(row=row, round=rnd, lib=lib)
                rows.append(r)
                print(json.dumps(r), flush=True)
    feeds: list[dict[str, Any]] = []
    if a.feed:
        for which in ["synthetic", "td", "tdl"] + (["dali"] if a.dali_site else []) + ["synthetic"]:
            lib = "nvidia.dali" if which == "dali" else "torch_dali"
            f = _run([sys.executable, __file__, "--feed", which, a.data, str(a.feed_steps)], _env(lib, a.dali_site),
                     a.timeout)
            f.setdefault("feed", which)
            feeds.append(f)
            print(json.dumps(f), flush=True)
    result = {"command": " ".join([Path(sys.executable).name] + sys.argv), "machine": platform.node(),
              "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d"), "rows": rows, "feeds": feeds,
              "summary": summarize(rows, feeds)}
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result["summary"], indent=1))
    if a.chart:
        from chart import write_chart
        write_chart(result, a.chart)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        lib, kind, data, hw, epochs = sys.argv[2:7]
        print(json.dumps(measure_one(lib, kind, data, float(hw), int(epochs))), flush=True)
    elif len(sys.argv) > 1 and sys.argv[1] == "--feed":
        which, data, steps = sys.argv[2:5]
        print(json.dumps(feed_one(which, data, int(steps))), flush=True)
    else:
        sys.path.insert(0, str(HERE))
        main()
