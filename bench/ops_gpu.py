"""The heavy per-step image ops, torch_dali against NVIDIA DALI on the GPU: the same DALI code for
either library (`lib` = "torch_dali" or "nvidia.dali"), each (lib, case) in its own process.

Input: a fixed batch of variable-size uint8 HWC images (deterministic, sizes around 400x420),
fed by `fn.external_source` (batch mode). With `--feed gpu` (the default on the GPU) the source
hands the same CUDA tensors every iteration, so the feed costs next to nothing; `--feed cpu`
hands host arrays and moves them with `.gpu()`. Every pipeline runs without prefetching or
pipelining (exec_async=False, exec_pipelined=False) and the device is synchronized after each
batch, so an iteration's time is the feed plus the ops, nothing overlapped.

Each case times two pipelines in one process, alternating one batch of each: (a) the baseline,
source -> device -> output, and (b) the same with the op applied K times, chained (x = op(x))
where the op keeps the shape, else K branches on the input (args varied per branch so that no
library merges them). The op's cost is (median(b) - median(a)) / K ms a batch; images/s is the
batch size over that; ratio = DALI ms / torch_dali ms (> 1: torch_dali is faster). A case one
library lacks, or one that fails, is recorded with its error, and the run goes on.

    # the GPU machine (DALI carried to /tmp/dali-site by ../shared/tools/dali_carry.sh)
    python3 bench/ops_gpu.py --dali-site /tmp/dali-site --out bench/results/ops_gpu_h200.json
    # here: both CPU backends, tiny sizes (a smoke test, not a performance figure)
    python bench/ops_gpu.py --device cpu --dali-python /work/dali-venv/bin/python --batch 8 \\
        --hw 56,60 --spread 8 --seconds 0.2 --out bench/results/ops_cpu_smoke.json
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LIBS = ("torch_dali", "nvidia.dali")
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
# a mild perspective (destination -> source), the same for every sample
PERSPECTIVE = [1.0, 0.05, -10.0, 0.02, 1.0, -5.0, 1e-5, 2e-5, 1.0]


# -- the cases: (chain?, builder(fn, types, x, k, cfg) -> node) -------------------------------------

def _u(fn: Any, lo: float, hi: float, seed: int) -> Any:
    """A per-sample uniform draw (a CPU argument input, as a training pipeline has)."""
    return fn.random.uniform(range=(lo, hi), seed=seed)


def _resize(**kw: Any) -> Callable[..., Any]:
    return lambda fn, T, x, k, c: fn.resize(x, size=(c["out"] + k, c["out"] + k), **kw)


Builder = Callable[[Any, Any, Any, int, dict[str, Any]], Any]
CASES: dict[str, tuple[bool, Builder]] = {
    "warp_affine": (True, lambda fn, T, x, k, c: fn.warp_affine(
        x, matrix=fn.transforms.rotation(angle=_u(fn, -30, 30, 100 + k), center=c["center"]),
        fill_value=0, inverse_map=False)),
    "rotate": (True, lambda fn, T, x, k, c: fn.rotate(x, angle=_u(fn, -30, 30, 100 + k), keep_size=True,
                                                      fill_value=0)),
    "gaussian_blur_sigma1.5": (True, lambda fn, T, x, k, c: fn.gaussian_blur(x, sigma=1.5)),
    "gaussian_blur_window5": (True, lambda fn, T, x, k, c: fn.gaussian_blur(x, window_size=5)),
    "hsv": (True, lambda fn, T, x, k, c: fn.hsv(x, hue=_u(fn, -30, 30, 100 + k),
                                                saturation=_u(fn, 0.5, 1.5, 200 + k),
                                                value=_u(fn, 0.7, 1.3, 300 + k))),
    "hue": (True, lambda fn, T, x, k, c: fn.hue(x, hue=_u(fn, -30, 30, 100 + k))),
    "saturation": (True, lambda fn, T, x, k, c: fn.saturation(x, saturation=_u(fn, 0.5, 1.5, 100 + k))),
    "brightness_contrast": (True, lambda fn, T, x, k, c: fn.brightness_contrast(
        x, brightness=_u(fn, 0.7, 1.3, 100 + k), contrast=_u(fn, 0.7, 1.3, 200 + k))),
    "color_twist": (True, lambda fn, T, x, k, c: fn.color_twist(
        x, brightness=_u(fn, 0.7, 1.3, 100 + k), contrast=_u(fn, 0.7, 1.3, 200 + k),
        hue=_u(fn, -30, 30, 300 + k), saturation=_u(fn, 0.5, 1.5, 400 + k))),
    "color_space_conversion_ycbcr": (True, lambda fn, T, x, k, c: fn.color_space_conversion(
        x, image_type=T.RGB, output_type=T.YCbCr)),
    "resize_linear_224": (False, _resize()),
    "resize_cubic_224": (False, lambda fn, T, x, k, c: fn.resize(x, size=(c["out"] + k, c["out"] + k),
                                                                 interp_type=T.INTERP_CUBIC)),
    "resize_linear_224_no_antialias": (False, _resize(antialias=False)),
    "resize_shorter_random": (False, lambda fn, T, x, k, c: fn.resize(
        x, resize_shorter=_u(fn, c["out"] * 0.9, c["out"] * 1.15, 100 + k))),
    "resize_roi_relative": (False, lambda fn, T, x, k, c: fn.resize(
        x, size=(c["out"] + k, c["out"] + k), roi_start=(0.1, 0.1), roi_end=(0.9, 0.9), roi_relative=True)),
    "crop_mirror_normalize": (False, lambda fn, T, x, k, c: fn.crop_mirror_normalize(
        x, crop=(c["out"], c["out"]), mirror=fn.random.coin_flip(seed=100 + k), dtype=T.FLOAT, output_layout="CHW",
        mean=MEAN, std=STD)),
    "random_resized_crop": (False, lambda fn, T, x, k, c: fn.random_resized_crop(x, size=(c["out"], c["out"]),
                                                                                 seed=100 + k)),
    "flip": (True, lambda fn, T, x, k, c: fn.flip(x, horizontal=1)),
    "noise_gaussian": (True, lambda fn, T, x, k, c: fn.noise.gaussian(x, stddev=10.0)),
    "laplacian": (True, lambda fn, T, x, k, c: fn.laplacian(x, window_size=3)),
    "erase": (True, lambda fn, T, x, k, c: fn.erase(x, anchor=(0.25, 0.25), shape=(0.5, 0.5), normalized=True,
                                                    axis_names="HW", fill_value=0)),
    "jitter": (True, lambda fn, T, x, k, c: fn.jitter(x, nDegree=2)),
    "water": (True, lambda fn, T, x, k, c: fn.water(x)),
    "warp_perspective": (True, lambda fn, T, x, k, c: fn.experimental.warp_perspective(
        x, matrix=PERSPECTIVE, border_mode="constant", fill_value=[0.0])),
    "jpeg_compression_distortion": (True, lambda fn, T, x, k, c: fn.jpeg_compression_distortion(
        x, quality=fn.cast(_u(fn, 30, 90, 100 + k), dtype=T.INT32))),
    "median_blur": (True, lambda fn, T, x, k, c: fn.experimental.median_blur(x, window_size=3)),
    "dilate": (True, lambda fn, T, x, k, c: fn.experimental.dilate(x, mask_size=3)),
}


# -- one (lib, case), in its own process ----------------------------------------------------------

def make_images(n: int, hw: tuple[int, int], spread: int, seed: int) -> list[Any]:
    """n uint8 HWC images, (h, w) = hw +- spread, cut from one random texture (deterministic)."""
    import torch
    g = torch.Generator().manual_seed(seed)
    dh = torch.randint(-spread, spread + 1, (n,), generator=g).tolist()
    dw = torch.randint(-spread, spread + 1, (n,), generator=g).tolist()
    mh, mw = hw[0] + spread, hw[1] + spread
    tex = torch.randint(0, 256, (mh + 64, mw + 64, 3), dtype=torch.uint8, generator=g)
    return [tex[i % 61:i % 61 + hw[0] + a, i % 59:i % 59 + hw[1] + b].clone() for i, (a, b) in enumerate(zip(dh, dw))]


def measure_one(lib: str, case: str, cfg: dict[str, Any]) -> dict[str, Any]:
    """Builds the baseline and the case's pipeline, warms both up, then alternates one timed batch
    of each until cfg["seconds"] have passed (at least `min_iters` each)."""
    import numpy as np
    import torch
    nd = importlib.import_module(lib)
    fn, T = nd.fn, nd.types
    gpu = cfg["device"] == "gpu"
    feed = cfg["feed"] if gpu else "cpu"
    imgs = make_images(cfg["batch"], tuple(cfg["hw"]), cfg["spread"], cfg["seed"])
    if gpu and feed == "gpu":
        data: list[Any] = [t.cuda() for t in imgs]  # one allocation per sample, as a decoder gives
        torch.cuda.synchronize()
    else:
        data = [t.numpy() for t in imgs]
    chain, build = CASES[case]
    K = cfg["k"]
    # the training crop: 224, or less for images smaller than that (smoke runs)
    c = {"center": [cfg["hw"][1] / 2, cfg["hw"][0] / 2], "out": min(224, min(cfg["hw"]) - cfg["spread"])}

    def pipe(with_op: bool) -> Any:
        @nd.pipeline_def(batch_size=cfg["batch"], num_threads=cfg["threads"], device_id=0 if gpu else None,
                         seed=1, exec_async=False, exec_pipelined=False, prefetch_queue_depth=1)
        def p() -> Any:
            x = fn.external_source(source=lambda: data, batch=True, layout="HWC", dtype=T.UINT8,
                                   device="gpu" if feed == "gpu" else "cpu")
            if gpu and feed == "cpu":
                x = x.gpu()
            if not with_op:
                return x
            if chain:
                for k in range(K):
                    x = build(fn, T, x, k, c)
                return x
            return tuple(build(fn, T, x, k, c) for k in range(K))
        built = p()
        built.build()
        return built

    sync = torch.cuda.synchronize if gpu else (lambda: None)

    def once(p: Any) -> float:
        t0 = time.perf_counter()
        p.run()
        sync()
        return time.perf_counter() - t0

    try:
        pa = pipe(False)
        pa.run()
    except Exception as e:  # the feed itself: the parent then feeds this library from the host
        raise RuntimeError(f"baseline ({feed} feed): {type(e).__name__}: {_short(str(e))}") from None
    pb = pipe(True)
    t0 = time.perf_counter()
    for _ in range(cfg["warmup"]):
        once(pa)
        once(pb)
    warm_s = time.perf_counter() - t0
    ta: list[float] = []
    tb: list[float] = []
    t0 = time.perf_counter()
    while (len(ta) < cfg["min_iters"] or time.perf_counter() - t0 < cfg["seconds"]) and len(ta) < cfg["max_iters"]:
        ta.append(once(pa))
        tb.append(once(pb))
    a, b = statistics.median(ta), statistics.median(tb)
    op_ms = (b - a) / K * 1e3
    pixels = int(sum(int(np.prod(t.shape[:2])) for t in imgs))
    return {"lib": lib, "case": case, "mode": "chain" if chain else "branches", "k": K, "feed": feed,
            "baseline_ms": round(a * 1e3, 3), "with_op_ms": round(b * 1e3, 3), "op_ms": round(op_ms, 3),
            "images_per_s": round(cfg["batch"] / (op_ms / 1e3), 1) if op_ms > 0 else None,
            "iters": len(ta), "warmup_s": round(warm_s, 2),
            "spread_ms": round((max(tb) - min(tb)) * 1e3, 3), "megapixels": round(pixels / 1e6, 2),
            "version": getattr(nd, "__version__", "?")}


def _short(msg: str) -> str:
    """An error message's first and last lines (DALI's carry the whole pipeline traceback)."""
    lines = [x.strip() for x in msg.strip().splitlines() if x.strip()]
    if "encountered:" in lines:  # DALI: what went wrong follows its traceback
        lines = [lines[0]] + lines[lines.index("encountered:") + 1:][:1]
    text = lines[0] if len(lines) < 2 else f"{lines[0]} ... {lines[-1]}"
    return text[:600]


def machine_one(gpu: bool) -> dict[str, Any]:
    import torch
    out: dict[str, Any] = {"torch": torch.__version__, "cpus": os.cpu_count(), "host": platform.node(),
                           "python": platform.python_version()}
    if gpu and torch.cuda.is_available():
        out["gpu"] = torch.cuda.get_device_name(0)
        out["cuda"] = torch.version.cuda
    return out


# -- the parent: every (lib, case) in a subprocess -------------------------------------------------

def _env(lib: str, dali_site: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if lib == "torch_dali":
        env["PYTHONPATH"] = str(ROOT)
    elif dali_site:
        cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        env["PYTHONPATH"] = dali_site
        env["LD_LIBRARY_PATH"] = f"{dali_site}/nvidia/cu13/lib:{cuda}/lib64:" + os.environ.get("LD_LIBRARY_PATH", "")
    return env


def _run(cmd: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:g} s"}
    lines = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if lines:
        return json.loads(lines[-1])
    err = (r.stderr or r.stdout).strip().splitlines()
    return {"error": " | ".join(err[-6:])[-900:] or f"exit status {r.returncode}"}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in rows:
        e = out.setdefault(r["case"], {})
        key = "torch_dali" if r["lib"] == "torch_dali" else "dali"
        e[key] = ({"ms_per_batch": r["op_ms"], "images_per_s": r["images_per_s"]} if "op_ms" in r
                  else {"error": r.get("error", "?")})
    for e in out.values():
        td, dl = e.get("torch_dali", {}), e.get("dali", {})
        ok = td.get("ms_per_batch") and dl.get("ms_per_batch") and td["ms_per_batch"] > 0 and dl["ms_per_batch"] > 0
        e["ratio_dali_over_torch_dali"] = round(dl["ms_per_batch"] / td["ms_per_batch"], 3) if ok else None
    return out


def table(summary: dict[str, Any]) -> str:
    def cell(d: dict[str, Any]) -> str:
        if "ms_per_batch" in d:
            return f"{d['ms_per_batch']:9.3f}"
        return "  " + ("error" if d else "-").ljust(7)
    lines = [f"{'case':32s} {'torch_dali':>10s} {'DALI':>10s}  ratio (ms/batch per op; ratio = DALI/torch_dali)"]
    for case, e in summary.items():
        ratio = e["ratio_dali_over_torch_dali"]
        lines.append(f"{case:32s} {cell(e.get('torch_dali', {})):>10s} {cell(e.get('dali', {})):>10s}  "
                     + (f"{ratio:.2f}" if ratio is not None else "-"))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    ap.add_argument("--dali-site", default="", help="folder holding nvidia.dali (the GPU machine: /tmp/dali-site)")
    ap.add_argument("--dali-python", default="", help="interpreter with nvidia.dali installed (default: this one)")
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--cases", default="all", help="comma-separated case names (default: all)")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--hw", default="400,420", help="mean image height,width")
    ap.add_argument("--spread", type=int, default=40, help="sizes vary by up to this many pixels each way")
    ap.add_argument("--k", type=int, default=4, help="op applications per pipeline")
    ap.add_argument("--seconds", type=float, default=1.0, help="timed seconds per (lib, case), after warm-up")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--min-iters", type=int, default=3)
    ap.add_argument("--max-iters", type=int, default=300)
    ap.add_argument("--threads", type=int, default=4, help="pipelines' num_threads")
    ap.add_argument("--feed", choices=("gpu", "cpu"), default="gpu",
                    help="gpu: the source hands CUDA tensors; cpu: host arrays moved with .gpu()")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--timeout", type=float, default=90, help="seconds per (lib, case) process")
    ap.add_argument("--no-ext", action="store_true", help="torch_dali without its CUDA extension (spec kernels)")
    ap.add_argument("--out", default="bench/results/ops_gpu.json")
    a = ap.parse_args()
    names = list(CASES) if a.cases == "all" else a.cases.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error(f"unknown cases {unknown}; known: {', '.join(CASES)}")
    gpu = a.device == "gpu"
    libs = [lib for lib in a.libs.split(",") if lib in LIBS]
    cfg = {"device": a.device, "batch": a.batch, "hw": [int(v) for v in a.hw.split(",")], "spread": a.spread,
           "k": a.k, "seconds": a.seconds, "warmup": a.warmup, "min_iters": a.min_iters, "max_iters": a.max_iters,
           "threads": a.threads, "feed": a.feed if gpu else "cpu", "seed": a.seed}
    python = {"torch_dali": sys.executable, "nvidia.dali": a.dali_python or sys.executable}
    envs = {lib: _env(lib, a.dali_site) for lib in LIBS}
    if a.no_ext:
        envs["torch_dali"]["TORCH_DALI_NO_EXT"] = "1"
    t_start = time.perf_counter()
    machine = _run([sys.executable, __file__, "--machine", str(int(gpu))], envs["torch_dali"], a.timeout)
    if gpu and "torch_dali" in libs:  # build (or find) the CUDA extension once, before the timed processes
        t0 = time.perf_counter()
        st = _run([sys.executable, "-c", "import json, torch_dali._native as n; print(json.dumps(n.status(load=True)))"],
                  envs["torch_dali"], 600)
        machine["torch_dali_native"] = st
        machine["torch_dali_native_s"] = round(time.perf_counter() - t0, 1)
        print(json.dumps({"native": st, "s": machine["torch_dali_native_s"]}), flush=True)
    rows: list[dict[str, Any]] = []
    feed = {lib: cfg["feed"] for lib in LIBS}
    for i, case in enumerate(names):
        for lib in (libs if i % 2 == 0 else libs[::-1]):  # alternate which library goes first
            r = _run([python[lib], __file__, "--one", lib, case, json.dumps({**cfg, "feed": feed[lib]})], envs[lib],
                     a.timeout)
            if gpu and feed[lib] == "gpu" and str(r.get("error", "")).startswith("RuntimeError: baseline"):
                # this library cannot take CUDA tensors from a source: fed from the host from now on
                feed[lib] = "cpu"
                r2 = _run([python[lib], __file__, "--one", lib, case, json.dumps({**cfg, "feed": "cpu"})], envs[lib],
                          a.timeout)
                r = {**r2, "error_feed_gpu": r["error"]}
            r.update(lib=lib, case=case)
            rows.append(r)
            print(json.dumps(r)[:400], f"[{time.perf_counter() - t_start:.0f} s]", flush=True)
    versions = {r["lib"]: r["version"] for r in rows if "version" in r}
    summary = summarize(rows)
    result = {"command": " ".join([Path(sys.executable).name] + sys.argv), "date": time.strftime("%Y-%m-%d"),
              "what": ("CPU smoke run (both CPU backends): checks the harness, not a performance claim" if not gpu
                       else "per-op GPU cost, torch_dali vs DALI, same code and run"),
              "machine": machine, "versions": versions, "config": cfg, "wall_s": round(time.perf_counter() - t_start, 1),
              "summary": summary, "rows": rows}
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(table(summary))
    print(f"wrote {out} ({result['wall_s']} s)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        lib, case, cfg_json = sys.argv[2:5]
        sys.path.insert(0, str(HERE))
        try:
            print(json.dumps(measure_one(lib, case, json.loads(cfg_json))), flush=True)
        except Exception as e:  # recorded by the parent; one case never stops the run
            print(json.dumps({"lib": lib, "case": case, "error": f"{type(e).__name__}: {_short(str(e))}"}), flush=True)
    elif len(sys.argv) > 1 and sys.argv[1] == "--machine":
        print(json.dumps(machine_one(bool(int(sys.argv[2])))), flush=True)
    else:
        main()
