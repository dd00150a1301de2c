"""The throughput harness, one GPU session in one run (device time is scarce): build the
extension, run the user's Serialization example as written, measure torch_dali vs NVIDIA DALI
(when importable) vs torchvision's GPU decode vs torch's DataLoader on the same data, the
TorchPythonFunction-vs-built-in-flip ratio, CPU/GPU parity of crops, time to first batch and GPU
memory; writes JSON and a PNG chart.

    python bench/throughput.py --images 8192 --batch-size 256 --q95 --out results.json

Each section is timed and guarded; a failure is recorded and the next section runs.
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
import traceback
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
RESULTS: dict = {"sections": {}}


ONLY: set[str] = set()  # --only: run just these sections (device time is scarce)


def section(name):
    def wrap(fn):
        def run(*a, **k):
            if ONLY and name not in ONLY:
                return
            t0 = time.perf_counter()
            try:
                RESULTS["sections"][name] = {"result": fn(*a, **k), "ok": True}
            except Exception as e:  # noqa: BLE001 - record and go on
                RESULTS["sections"][name] = {"ok": False, "error": f"{type(e).__name__}: {e}",
                                             "traceback": traceback.format_exc()[-3000:]}
            RESULTS["sections"][name]["seconds"] = round(time.perf_counter() - t0, 2)
            print(f"[{name}] {json.dumps(RESULTS['sections'][name].get('result', RESULTS['sections'][name].get('error')))[:600]}", flush=True)
        return run
    return wrap


def train_pipe(root, batch, device_id, threads, flip_mode="cmn", seed=7, hw_load=None):
    from torch_dali import fn, pipeline_def, types

    gpu = device_id is not None

    @pipeline_def(batch_size=batch, num_threads=threads, device_id=device_id, seed=seed, prefetch_queue_depth=2)
    def p():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        kw = {} if hw_load is None else {"hw_decoder_load": hw_load}
        images = fn.decoders.image(jpegs, device="mixed" if gpu else "cpu", output_type=types.RGB, **kw)
        images = fn.random_resized_crop(images, size=(224, 224))
        coin = fn.random.coin_flip()
        if flip_mode == "builtin":  # the same unconditional flip as the Python op's
            images = fn.flip(images, horizontal=1)
            coin = None
        elif flip_mode == "python":
            images = fn.torch_python_function(images, function=hflip_hwc)
            coin = None
        kw = {"mirror": coin} if coin is not None else {}
        images = fn.crop_mirror_normalize(images, mean=MEAN, std=STD, dtype=types.FLOAT, output_layout="CHW", **kw)
        return images, labels
    return p()


def bench_data(data: str, images: int, subsampling: str) -> str:
    """The issue's data sets in `data` (made unless there): "4:2:0" q90 JPEGs, mean 438x416;
    "4:4:4" q95 at ImageNet's mean size. A new temporary folder when `data` is empty."""
    from torch_dali.sample_data import make_benchmark_folder
    q95 = subsampling == "4:4:4"
    data = data or os.path.join(tempfile.mkdtemp(), "q95" if q95 else "q90")
    if not os.path.isdir(data):
        if q95:
            make_benchmark_folder(data, images, quality=95, subsampling="4:4:4", mean_hw=(416, 438))
        else:
            make_benchmark_folder(data, images, quality=90, subsampling="4:2:0")
    return data


def hflip_hwc(image):
    """A cheap per-sample torch op for the Python-op benchmark: a horizontal flip of an HWC image."""
    return image.flip(1)


def rate(pipe, batches, warm=10):
    pipe.build()
    t_first = time.perf_counter()
    out = pipe.run()
    out[0].as_tensor()
    torch.cuda.synchronize()
    first = time.perf_counter() - t_first
    for _ in range(warm - 1):
        pipe.run()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(batches):
        pipe.run()[0].as_tensor()
    torch.cuda.synchronize()
    r = batches * pipe.batch_size / (time.perf_counter() - t0)
    pipe.shutdown()
    return r, first


def vs_dali(results: dict) -> dict:
    """torch_dali / DALI's best configuration, per data set, from one run's results. On 4:2:0 q90
    torch_dali counts as the lower of its two runs (before and after DALI)."""
    s = results.get("sections", {})

    def ips(name: str) -> float | None:
        r = s.get(name, {}).get("result") if s.get(name, {}).get("ok") else None
        return float(r["images_per_s"]) if isinstance(r, dict) and "images_per_s" in r else None
    dali = s.get("dali_same_run", {}).get("result") if s.get("dali_same_run", {}).get("ok") else None
    if not isinstance(dali, dict):
        return {}
    out = {}
    ours = [v for v in (ips("throughput_torch_dali"), ips("throughput_torch_dali_after_dali")) if v]
    best = max((v["images_per_s"] for k, v in dali.items() if k.startswith("q90")), default=None)
    if ours and best:
        out["q90_420"] = {"torch_dali": min(ours), "dali_best": best, "ratio": round(min(ours) / best, 3)}
    q95 = ips("throughput_torch_dali_q95_444")
    best95 = max((v["images_per_s"] for k, v in dali.items() if k.startswith("q95")), default=None)
    if q95 and best95:
        out["q95_444"] = {"torch_dali": q95, "dali_best": best95, "ratio": round(q95 / best95, 3)}
    return out


def chart_rows(results: dict) -> list[tuple[str, float]]:
    """(label, images/s) for every throughput figure in a results dict."""
    rows = []
    for name, sec in results.get("sections", {}).items():
        r = sec.get("result") if sec.get("ok") else None
        if not isinstance(r, dict):
            continue
        if "images_per_s" in r:
            rows.append((name, float(r["images_per_s"])))
        for sub, v in r.items():
            if isinstance(v, dict) and "images_per_s" in v:
                rows.append((f"{name} {sub}", float(v["images_per_s"])))
    return rows


def write_chart(results: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = chart_rows(results)
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(rows) + 1.5))
    ax.barh([r[0] for r in rows], [r[1] for r in rows], color="#4c72b0")
    for i, (_, v) in enumerate(rows):
        ax.text(v, i, f" {v:,.0f}", va="center")
    ax.set_xlabel("images/s (batch {})".format(results.get("batch_size", "")))
    ax.set_title(f"{results.get('machine', {}).get('gpu')}: decode + RRC 224 + flip + normalize")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=4096)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--out", default="throughput.json")
    ap.add_argument("--skip-dataloader", action="store_true")
    ap.add_argument("--q95", action="store_true", help="also a q95 4:4:4 data set (for DALI and torch_dali)")
    ap.add_argument("--only", default="", help="comma-separated section names to run (default: all)")
    args = ap.parse_args()
    ONLY.update(x for x in args.only.split(",") if x)
    RESULTS["machine"] = {"gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
                          "cpus": os.cpu_count(), "cpus_usable": len(os.sched_getaffinity(0)), "torch": torch.__version__, "python": platform.python_version()}
    RESULTS["command"] = " ".join(sys.argv)
    RESULTS["batch_size"] = args.batch_size

    @section("extension_build")
    def build():
        from torch_dali._native import extension as _extension
        t0 = time.perf_counter()
        m = _extension.load()
        return {"loaded": m is not None, "status": _extension.status(), "build_s": round(time.perf_counter() - t0, 1)}
    build()

    tmp = tempfile.mkdtemp()
    from torch_dali.sample_data import make_benchmark_folder, make_sample_dataset

    @section("data")
    def data():
        t0 = time.perf_counter()
        make_benchmark_folder(os.path.join(tmp, "q90"), args.images, quality=90, subsampling="4:2:0")
        make_sample_dataset(os.path.join(tmp, "sample"), images_per_class=8)
        return {"images": args.images, "seconds": round(time.perf_counter() - t0, 1)}
    data()
    q90 = os.path.join(tmp, "q90")
    q95 = None
    if args.q95:
        q95 = make_benchmark_folder(os.path.join(tmp, "q95"), args.images, quality=95, subsampling="4:4:4",
                                    mean_hw=(416, 438))

    @section("serialization_example_gpu")
    def ser():
        os.environ["RECORDIO_DIR"] = os.path.join(tmp, "sample")
        g = runpy.run_path(str(ROOT / "examples" / "mission" / "serialization.py"))
        imgs = g["original_pipe_out"][0]
        return {"check_difference": [float(v) for v in g["result"]], "output_on": str(imgs.device)}
    ser()

    @section("warmup")
    def warmup():
        """A first run left out of the ratios: in one H200 run the process's first pipeline
        measured 14% under the later ones (bench/results/throughput_h200.json, before this section
        existed), while DALI's sections always run in a warm process."""
        r, _ = rate(train_pipe(q90, args.batch_size, 0, 8), args.batches)
        return {"images_per_s_not_compared": round(r)}
    warmup()

    @section("throughput_torch_dali")
    def td():
        r, first = rate(train_pipe(q90, args.batch_size, 0, 8), args.batches)
        mem = torch.cuda.max_memory_allocated() / 2**20
        from torch_dali.io import nvjpeg
        dec = next(iter(nvjpeg._NVJPEG.values()), None)  # per-phase host times of the last batch
        return {"images_per_s": round(r), "first_batch_s": round(first, 2), "max_gpu_mem_mib": round(mem),
                "decoder_last_batch": dict(dec.last_stats) if dec is not None else None}
    td()

    @section("throughput_torch_dali_lanes")
    def td_lanes():
        """The same with fewer batches decoding at once (mixed-stage lanes = decoder slots; the
        default is _knobs.MIXED_LANES): what the lanes bring, in the same run."""
        keep = {k: os.environ.get(k) for k in ("TORCH_DALI_MIXED_LANES", "TORCH_DALI_NVJPEG_SLOTS")}
        out = {}
        try:
            for lanes in (1, 2, 4):
                os.environ.update(TORCH_DALI_MIXED_LANES=str(lanes), TORCH_DALI_NVJPEG_SLOTS=str(lanes))
                out[f"lanes_{lanes}"] = {"images_per_s": round(rate(train_pipe(q90, args.batch_size, 0, 8),
                                                                    args.batches)[0])}
        finally:
            for k, v in keep.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        return out
    td_lanes()

    if q95 is not None:
        @section("throughput_torch_dali_q95_444")
        def td95():
            r, first = rate(train_pipe(q95, args.batch_size, 0, 8), args.batches)
            return {"images_per_s": round(r), "first_batch_s": round(first, 2)}
        td95()

    @section("python_op_vs_builtin_flip")
    def pyop():
        """Alternating runs (builtin, python, builtin, python): drift hits both alike."""
        b, p = [], []
        for _ in range(2):
            b.append(rate(train_pipe(q90, args.batch_size, 0, 8, "builtin"), args.batches)[0])
            p.append(rate(train_pipe(q90, args.batch_size, 0, 8, "python"), args.batches)[0])
        bm, pm = sum(b) / len(b), sum(p) / len(p)
        return {"builtin_flip_images_per_s": round(bm), "torch_python_function_flip_images_per_s": round(pm),
                "ratio": round(pm / bm, 3), "runs_builtin": [round(x) for x in b], "runs_python": [round(x) for x in p]}
    pyop()

    @section("cpu_gpu_parity")
    def parity():
        g = train_pipe(q90, 32, 0, 4)
        c = train_pipe(q90, 32, None, 4)
        g.build()
        c.build()
        xg, lg = g.run()
        xc, lc = c.run()
        a, b = xg.as_tensor().cpu(), xc.as_tensor()
        d = (a - b).abs()
        return {"labels_equal": bool(torch.equal(lg.as_tensor().cpu(), lc.as_tensor())),
                "max_abs_diff": float(d.max()), "mean_abs_diff": float(d.mean()),
                "note": "normalized units (1 level = 1/58); GPU decode upsamples chroma differently"}
    parity()

    @section("dali_same_run")
    def dali():
        """NVIDIA DALI 2.4 on the same data in the same run, when importable (see
        ../shared/tools/dali_carry.sh for getting its wheel onto the GPU machine)."""
        from nvidia.dali import fn as dfn, pipeline_def as dpipe, types as dtypes

        def make(root, hw_load=0.65):
            @dpipe(batch_size=args.batch_size, num_threads=8, device_id=0, seed=7)
            def p():
                jpegs, labels = dfn.readers.file(file_root=root, random_shuffle=True, name="Reader")
                images = dfn.decoders.image(jpegs, device="mixed", output_type=dtypes.RGB,
                                            hw_decoder_load=hw_load)
                images = dfn.random_resized_crop(images, size=(224, 224))
                images = dfn.crop_mirror_normalize(images, mirror=dfn.random.coin_flip(), mean=MEAN, std=STD,
                                                   dtype=dtypes.FLOAT, output_layout="CHW")
                return images, labels
            return p()
        out = {}
        # DALI's default hw_decoder_load (0.65), and ours (0.9) in case it suits DALI better too
        for name, root, hw in (("q90_420", q90, 0.65), ("q90_420_hw0.9", q90, 0.9), ("q95_444", q95, 0.65),
                               ("q95_444_hw0.9", q95, 0.9)):
            if root is None:
                continue
            free0 = torch.cuda.mem_get_info()[0]
            pipe = make(root, hw)
            t0 = time.perf_counter()
            pipe.build()
            pipe.run()
            first = time.perf_counter() - t0
            used = (free0 - torch.cuda.mem_get_info()[0]) / 2**20  # DALI allocates outside torch
            for _ in range(9):
                pipe.run()
            t0 = time.perf_counter()
            for _ in range(args.batches):
                pipe.run()
            out[name] = {"images_per_s": round(args.batches * args.batch_size / (time.perf_counter() - t0)),
                         "first_batch_s": round(first, 2), "gpu_mem_mib_device_delta": round(used)}
            del pipe
        return out
    dali()

    @section("throughput_torch_dali_after_dali")
    def td_again():
        """torch_dali again after DALI: the drift of the machine during the run."""
        r, _ = rate(train_pipe(q90, args.batch_size, 0, 8), args.batches)
        return {"images_per_s": round(r)}
    td_again()

    @section("dali_python_op_vs_builtin_flip")
    def dali_pyop():
        """DALI's own ratio in the same run: fn.flip vs the same flip as its TorchPythonFunction."""
        from nvidia.dali import fn as dfn, pipeline_def as dpipe, types as dtypes
        from nvidia.dali.plugin.pytorch import TorchPythonFunction as DTPF

        def make(mode, **kw):
            @dpipe(batch_size=args.batch_size, num_threads=8, device_id=0, seed=7, **kw)
            def p():
                jpegs, labels = dfn.readers.file(file_root=q90, random_shuffle=True, name="Reader")
                images = dfn.decoders.image(jpegs, device="mixed", output_type=dtypes.RGB)
                images = dfn.random_resized_crop(images, size=(224, 224))
                if mode == "builtin":
                    images = dfn.flip(images, horizontal=1)
                else:
                    images = DTPF(function=hflip_hwc, num_outputs=1, device="gpu")(images)
                images = dfn.crop_mirror_normalize(images, mean=MEAN, std=STD, dtype=dtypes.FLOAT,
                                                   output_layout="CHW")
                return images, labels
            return p()

        def measure(pipe):
            pipe.build()
            for _ in range(3):
                pipe.run()
            t0 = time.perf_counter()
            for _ in range(args.batches):
                pipe.run()
            return args.batches * args.batch_size / (time.perf_counter() - t0)
        b = measure(make("builtin"))
        note = "default executor"
        try:
            p = measure(make("python"))
        except Exception as e:  # noqa: BLE001 - older executors need these off for Python ops
            note = f"exec_async/exec_pipelined off ({type(e).__name__})"
            p = measure(make("python", exec_async=False, exec_pipelined=False))
        return {"builtin_flip_images_per_s": round(b), "torch_python_function_flip_images_per_s": round(p),
                "ratio": round(p / b, 3), "note": note}
    dali_pyop()

    @section("host_profile_torch_dali")
    def host_profile():
        """Where the producer thread spends its time per batch (cProfile, top functions)."""
        import cProfile
        import io
        import pstats
        pipe = train_pipe(q90, args.batch_size, 0, 8)
        pipe.build()
        for _ in range(3):
            pipe.run()
        pipe.executor.stop()  # no producer thread racing the profiled calls
        plan = pipe.executor.plan
        torch.cuda.synchronize()
        stages = {"cpu_stage_ms": [], "device_stage_host_ms": [], "device_stage_gpu_ms": []}
        for k in range(6):  # each stage alone, in this thread: host ms, then the GPU's ms
            t0 = time.perf_counter()
            part = plan.run_cpu_stage(20_000 + k)
            t1 = time.perf_counter()
            plan.run_device_stage(part)
            t2 = time.perf_counter()
            torch.cuda.synchronize()
            t3 = time.perf_counter()
            stages["cpu_stage_ms"].append(round(1000 * (t1 - t0), 1))
            stages["device_stage_host_ms"].append(round(1000 * (t2 - t1), 1))
            stages["device_stage_gpu_ms"].append(round(1000 * (t3 - t1), 1))
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(4):
            plan.run(10_000 + _)
        torch.cuda.synchronize()
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(30)
        buf2 = io.StringIO()
        pstats.Stats(prof, stream=buf2).sort_stats("tottime").print_stats(30)
        pipe.shutdown()
        return {"stages": stages, "top_cumulative": buf.getvalue()[-7000:], "top_tottime": buf2.getvalue()[-7000:]}
    host_profile()

    @section("torchvision_gpu_decode")
    def tvgpu():
        import glob
        import torchvision
        from torchvision.transforms import v2
        files = sorted(glob.glob(os.path.join(q90, "*", "*.jpg")))[: args.batch_size * 8]
        datas = [torchvision.io.read_file(f) for f in files]
        tf = v2.Compose([v2.RandomResizedCrop(224, antialias=True), v2.RandomHorizontalFlip()])
        mean = torch.tensor(MEAN, device="cuda").view(1, 3, 1, 1)
        std = torch.tensor(STD, device="cuda").view(1, 3, 1, 1)

        def one(k):
            chunk = datas[k * args.batch_size:(k + 1) * args.batch_size]
            imgs = torchvision.io.decode_jpeg(chunk, device="cuda")
            x = torch.stack([tf(i) for i in imgs]).float()
            return (x - mean) / std
        one(0)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for k in range(1, 8):
            one(k)
        torch.cuda.synchronize()
        return {"images_per_s": round(7 * args.batch_size / (time.perf_counter() - t0))}
    tvgpu()

    if not args.skip_dataloader:
        @section("torch_dataloader_all_cores")
        def dl():
            sys.argv = [sys.argv[0]]
            sys.path.insert(0, str(ROOT / "bench"))
            from cpu_vs_dataloader import run_dataloader
            workers = len(os.sched_getaffinity(0))  # all the cores this run may use (taskset)
            return {"images_per_s": round(run_dataloader(q90, args.batch_size, workers, 8)), "workers": workers}
        dl()

    s = RESULTS["sections"]
    try:
        base = s["throughput_torch_dali"]["result"]["images_per_s"]
        RESULTS["ratios"] = {k: round(base / v["result"]["images_per_s"], 2) for k, v in s.items()
                             if v.get("ok") and isinstance(v.get("result"), dict) and "images_per_s" in v["result"]
                             and k != "throughput_torch_dali"}
    except KeyError:
        pass
    RESULTS["vs_dali"] = vs_dali(RESULTS)
    Path(args.out).write_text(json.dumps(RESULTS, indent=2))
    try:
        write_chart(RESULTS, str(Path(args.out).with_suffix(".png")))
    except Exception as e:  # noqa: BLE001 - the numbers matter more than the picture
        print("chart not written:", e)
    print("RATIOS", RESULTS.get("ratios"))
    print("VS_DALI", RESULTS.get("vs_dali"))


if __name__ == "__main__":
    main()
