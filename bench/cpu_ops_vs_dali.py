"""CPU ops one at a time, the same DALI code run with NVIDIA DALI's CPU backend and with torch_dali:
2 threads, `device_id=None`, external_source feeding a fixed seeded batch of 16 (RGB uint8 images of
360-440 px, the same as float32, 2 s of 16 kHz audio, spectrograms, boxes, points, labels, or the
package's JPEGs). One long-lived worker process per library builds each op's pipeline and warms it up;
the two then take turns, round after round (`--rounds`, default 11), each timing a few batches per
turn, so the shared machine's drift hits both alike. Reported: each library's median ms per batch
over the rounds and the median of the rounds' own torch_dali/DALI ratios (> 1: torch_dali slower).

    python bench/cpu_ops_vs_dali.py --dali-python ../dali-venv/bin/python --out bench/results/cpu_ops_vs_dali.json
    python bench/cpu_ops_vs_dali.py --ops reduce_sum,reduce_mean --rounds 21
    python bench/cpu_ops_vs_dali.py --serve LIB      (child: the worker, JSON lines on stdin/stdout)
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
U = "fn.random.uniform(range=({}, {}))"
ANCHORS = "[float(v) for i in range(20) for j in range(20) for v in (i / 20, j / 20, (i + 1.5) / 20, (j + 1.5) / 20)]"
#: op name -> (input kind, the DALI code making its output from `x` (and `labels` for "boxes")).
#: Kinds: img (uint8 HWC), f32 (the images as float32), f32s (48 x 48 x 3 float32), audio (1-D
#: float32), spec (257 x 201 power spectrogram), mel (80 x 201 dB), boxes (20 ltrb boxes + labels),
#: pts (5000 x 2 float32), ints (1000 int32 class ids), jpeg (encoded photos).
OPS = {
    "source_only": ("img", "x"),  # the pipeline's own cost per batch: external_source and the run
    "resize_linear": ("img", "fn.resize(x, size=(224, 224))"),
    "resize_linear_noaa": ("img", "fn.resize(x, size=(224, 224), antialias=False)"),
    "resize_cubic": ("img", "fn.resize(x, size=(224, 224), interp_type=types.INTERP_CUBIC)"),
    "resize_lanczos": ("img", "fn.resize(x, size=(224, 224), interp_type=types.INTERP_LANCZOS3)"),
    "resize_cubic_f32": ("f32", "fn.resize(x, size=(224, 224), interp_type=types.INTERP_CUBIC)"),
    "resize_crop_mirror_cubic": ("img", "fn.resize_crop_mirror(x, size=(256, 256), crop=(224, 224), "
                                        "interp_type=types.INTERP_CUBIC)"),
    "resize_cubic_chw": ("img", "fn.resize(fn.transpose(x, perm=[2, 0, 1]), size=(224, 224), "
                                "interp_type=types.INTERP_CUBIC)"),
    "tensor_resize_cubic": ("img", "fn.tensor_resize(x, sizes=[224, 224], axes=[0, 1], interp_type=types.INTERP_CUBIC)"),
    "resize_nn": ("img", "fn.resize(x, size=(224, 224), interp_type=types.INTERP_NN)"),
    "resize_up_linear": ("img", "fn.resize(x, size=(560, 560))"),
    "resize_shorter": ("img", f"fn.resize(x, resize_shorter={U.format(150, 300)})"),
    "random_resized_crop": ("img", "fn.random_resized_crop(x, size=224)"),
    "crop": ("img", f"fn.crop(x, crop=(224, 224), crop_pos_x={U.format(0, 1)}, crop_pos_y={U.format(0, 1)})"),
    "crop_mirror_normalize": ("img", f"fn.crop_mirror_normalize(x, crop=(224, 224), mirror=fn.random.coin_flip(), "
                                     f"mean={MEAN}, std={STD})"),
    "cmn_hwc_f16": ("img", f"fn.crop_mirror_normalize(x, crop=(224, 224), mean={MEAN}, std={STD}, "
                           "output_layout='HWC', dtype=types.FLOAT16)"),
    "slice": ("img", "fn.slice(x, rel_start=(0.1, 0.2), rel_shape=(0.5, 0.6), axis_names='HW')"),
    "pad": ("img", "fn.pad(x, fill_value=0, axes=(0, 1), shape=(480, 480))"),
    "flip": ("img", "fn.flip(x, horizontal=1)"),
    "flip_vertical": ("img", "fn.flip(x, horizontal=0, vertical=1)"),
    "transpose": ("img", "fn.transpose(x, perm=[2, 0, 1])"),
    "cast": ("img", "fn.cast(x, dtype=types.FLOAT)"),
    "arith_u8": ("img", "x * 2 + 1"),
    "arith_f32": ("f32", "x * 0.5 + 0.25"),
    "rotate": ("img", f"fn.rotate(x, angle={U.format(-30, 30)}, fill_value=0)"),
    "warp_affine": ("img", f"fn.warp_affine(x, matrix=fn.transforms.rotation(angle={U.format(-30, 30)}, "
                           "center=(200, 200)), fill_value=0)"),
    "warp_perspective": ("img", "fn.experimental.warp_perspective(x, matrix=[1.0, 0.1, 2.0, -0.05, 0.9, 3.0, "
                                "0.0005, 0.0003, 1.0], border_mode='reflect_101')"),
    "hsv": ("img", f"fn.hsv(x, hue={U.format(-20, 20)}, saturation=1.2)"),
    "hue": ("img", f"fn.hue(x, hue={U.format(-20, 20)})"),
    "saturation": ("img", "fn.saturation(x, saturation=1.3)"),
    "brightness_contrast": ("img", f"fn.brightness_contrast(x, brightness={U.format(0.8, 1.2)}, contrast=0.8)"),
    "brightness": ("img", "fn.brightness(x, brightness=1.2)"),
    "contrast": ("img", "fn.contrast(x, contrast=1.3)"),
    "color_twist": ("img", "fn.color_twist(x, brightness=1.1, contrast=1.2, hue=10.0, saturation=0.9)"),
    "csc_ycbcr": ("img", "fn.color_space_conversion(x, image_type=types.RGB, output_type=types.YCbCr)"),
    "csc_gray": ("img", "fn.color_space_conversion(x, image_type=types.RGB, output_type=types.GRAY)"),
    "csc_bgr": ("img", "fn.color_space_conversion(x, image_type=types.RGB, output_type=types.BGR)"),
    "gaussian_blur": ("img", "fn.gaussian_blur(x, window_size=5)"),
    "gaussian_blur_sigma3": ("img", "fn.gaussian_blur(x, sigma=3.0)"),
    "filter": ("img", "fn.experimental.filter(x, np.full((5, 5), 1 / 25, np.float32))"),
    "laplacian": ("img", "fn.laplacian(x, window_size=3)"),
    "erase": ("img", "fn.erase(x, anchor=[10, 10, 50, 50], shape=[20, 30, 40, 40], axis_names='HW', fill_value=0)"),
    "paste": ("img", "fn.paste(x, ratio=1.5, fill_value=0, paste_x=0.3, paste_y=0.4)"),
    "jitter": ("img", "fn.jitter(x)"),
    "water": ("img", "fn.water(x)"),
    "sphere": ("img", "fn.sphere(x)"),
    "grid_mask": ("img", "fn.grid_mask(x, angle=0.3, ratio=0.4, tile=50)"),
    "equalize": ("img", "fn.equalize(x)"),
    "reduce_sum": ("f32", "fn.reductions.sum(x, axes=(0, 1))"),
    "reduce_sum_all": ("f32", "fn.reductions.sum(x)"),
    "reduce_sum_u8": ("img", "fn.reductions.sum(x, axes=(0, 1))"),
    "reduce_sum_small": ("f32s", "fn.reductions.sum(x, axes=(0, 1))"),
    "reduce_mean_small": ("f32s", "fn.reductions.mean(x, axes=(0, 1))"),
    "reduce_std_dev_small": ("f32s", "fn.reductions.std_dev(x, fn.reductions.mean(x, axes=(0, 1)), axes=(0, 1))"),
    "reduce_mean": ("f32", "fn.reductions.mean(x, axes=(0, 1))"),
    "reduce_min": ("f32", "fn.reductions.min(x, axes=(0, 1))"),
    "reduce_max": ("f32", "fn.reductions.max(x, axes=(0, 1))"),
    "reduce_std_dev": ("f32", "fn.reductions.std_dev(x, fn.reductions.mean(x, axes=(0, 1)), axes=(0, 1))"),
    "reduce_variance": ("f32", "fn.reductions.variance(x, fn.reductions.mean(x, axes=(0, 1)), axes=(0, 1))"),
    "normalize": ("f32", "fn.normalize(x, axes=(0, 1))"),
    "normalize_all": ("f32", "fn.normalize(x)"),
    "one_hot": ("ints", "fn.one_hot(x, num_classes=100)"),
    "coord_transform": ("pts", "fn.coord_transform(x, M=[0.5, 0.1, -0.2, 1.1], T=[3.0, 4.0])"),
    "bb_flip": ("boxes", "fn.bb_flip(x, horizontal=1)"),
    "bbox_paste": ("boxes", "fn.bbox_paste(x, ratio=1.5, paste_x=0.2, paste_y=0.3)"),
    "random_bbox_crop": ("boxes", "fn.random_bbox_crop(x, labels, aspect_ratio=[0.5, 2.0], thresholds=[0.1, 0.3, 0.5],"
                                  " scaling=[0.3, 1.0], bbox_layout='xyXY')"),
    "box_encoder": ("boxes", f"fn.box_encoder(x, labels, anchors={ANCHORS})"),
    "spectrogram": ("audio", "fn.spectrogram(x, nfft=512, window_length=400, window_step=160)"),
    "preemphasis_filter": ("audio", "fn.preemphasis_filter(x)"),
    "nonsilent_region": ("audio", "fn.nonsilent_region(x)"),
    "mel_filter_bank": ("spec", "fn.mel_filter_bank(x, sample_rate=16000, nfilter=80)"),
    "to_decibels": ("spec", "fn.to_decibels(x)"),
    "mfcc": ("mel", "fn.mfcc(x, n_mfcc=40)"),
    "decoders_image": ("jpeg", "fn.decoders.image(x, device='cpu')"),
    "image_random_crop": ("jpeg", "fn.decoders.image_random_crop(x, device='cpu')"),
}


def inputs(kind: str):
    """The fixed batch of 16 samples (and its layout) for an input kind; seeded, the same in both libraries."""
    import numpy as np
    rng = np.random.default_rng(0)
    imgs = [rng.integers(0, 256, (int(rng.integers(360, 440)), int(rng.integers(360, 440)), 3), dtype=np.uint8)
            for _ in range(16)]
    if kind in ("img", "f32"):
        return ([i.astype(np.float32) for i in imgs] if kind == "f32" else imgs), "HWC"
    if kind == "f32s":
        return [rng.random((48, 48, 3), dtype=np.float32) for _ in range(16)], "HWC"
    if kind == "audio":
        t = np.arange(32000, dtype=np.float32) / 16000
        return [(0.3 * np.sin(2 * np.pi * (200 + 40 * k) * t) * (t > 0.3) * (t < 1.6)
                 + 0.01 * rng.standard_normal(32000)).astype(np.float32) for k in range(16)], None
    if kind == "spec":
        return [rng.random((257, 201), dtype=np.float32) ** 4 * 100 for _ in range(16)], "ft"
    if kind == "mel":
        return [(rng.random((80, 201), dtype=np.float32) * 80 - 60) for _ in range(16)], "ft"
    if kind == "boxes":
        lt = rng.random((16, 20, 2), dtype=np.float32) * 0.6
        wh = rng.random((16, 20, 2), dtype=np.float32) * 0.35 + 0.05
        return [np.concatenate([a, a + b], 1) for a, b in zip(lt, wh)], None
    if kind == "pts":
        return [rng.random((5000, 2), dtype=np.float32) * 400 for _ in range(16)], None
    if kind == "ints":
        return [rng.integers(0, 100, (1000,), dtype=np.int32) for _ in range(16)], None
    if kind == "jpeg":
        photos = sorted((HERE.parent / "torch_dali" / "data" / "photos").glob("*.jpg"))
        return [np.frombuffer(p.read_bytes(), np.uint8) for p in photos * 2], None
    raise ValueError(kind)


def build(lib: str, op: str, threads: int = 2):
    import numpy as np
    if lib == "dali":
        from nvidia.dali import fn, pipeline_def, types
    else:
        from torch_dali import fn, pipeline_def, types
    kind, code = OPS[op]
    batch, layout = inputs(kind)
    labels = [np.arange(1, 21, dtype=np.int32) for _ in range(16)]

    # synchronous: a run's time is its own batch's work (a pipelined executor would work ahead
    # during the other library's turn)
    @pipeline_def(batch_size=16, num_threads=threads, device_id=None, seed=1, exec_async=False, exec_pipelined=False)
    def pipe():
        x = fn.external_source(source=lambda: batch, layout=layout) if layout else fn.external_source(
            source=lambda: batch)
        lab = fn.external_source(source=lambda: labels)
        out = eval(code, {"fn": fn, "types": types, "np": np, "x": x, "labels": lab})  # our own table above
        return tuple(out) if isinstance(out, (list, tuple)) else out

    p = pipe()
    p.build()
    for _ in range(2):
        p.run()
    return p


def time_runs(p, n: int) -> float:
    """Mean seconds per batch over `n` runs."""
    t = time.perf_counter()
    for _ in range(n):
        p.run()
    return (time.perf_counter() - t) / n


def one(lib: str, op: str, seconds: float) -> dict:
    """One op in this process for `seconds` (at least 3 batches): the median ms per batch."""
    p = build(lib, op)
    ts: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(ts) < 3:
        ts.append(time_runs(p, 1))
    return {"lib": lib, "op": op, "ms_per_batch": round(1000 * sorted(ts)[len(ts) // 2], 3), "batches": len(ts)}


def serve(lib: str) -> None:
    """The worker: {"build": op} -> {"ok": ms of one batch} or {"error": ...}; {"time": n} -> {"s": mean s}."""
    p = None
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            if "build" in cmd:
                p = None
                p = build(lib, cmd["build"], cmd.get("threads", 2))
                reply = {"ok": time_runs(p, 1)}
            else:
                reply = {"s": time_runs(p, cmd["time"])}
        except Exception as e:  # reported in the row, the survey goes on
            reply = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"}
        print(json.dumps(reply), flush=True)


class Worker:
    def __init__(self, lib: str, python: str):
        self.proc = subprocess.Popen([python, __file__, "--serve", lib], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=dict(os.environ, PYTHONPATH=str(HERE.parent)))

    def ask(self, cmd: dict) -> dict:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        return json.loads(line) if line else {"error": "worker exited"}


def survey(ops: list[str], workers: dict[str, Worker], rounds: int, turn_s: float,
           threads: int = 2) -> list[dict]:
    rows = []
    for op in ops:
        row: dict = {"op": op, "kind": OPS[op][0]}
        first = {lib: w.ask({"build": op, "threads": threads}) for lib, w in workers.items()}
        for lib, r in first.items():
            if "error" in r:
                row[lib + "_error"] = r["error"]
        if any("error" in r for r in first.values()):
            print(json.dumps(row), flush=True)
            rows.append(row)
            continue
        # batches per turn: about turn_s of the slower library's work, at least one
        n = max(1, int(turn_s / max(r["ok"] for r in first.values())))
        per: dict[str, list[float]] = {lib: [] for lib in workers}
        for _ in range(rounds):
            for lib, w in workers.items():
                per[lib].append(w.ask({"time": n})["s"])
        for lib in workers:
            row[lib + "_ms"] = round(1000 * statistics.median(per[lib]), 3)
        ratios = [t / d for t, d in zip(per["torch_dali"], per["dali"])]
        row.update(batches_per_turn=n, rounds=rounds, td_over_dali=round(statistics.median(ratios), 3),
                   td_over_dali_range=[round(min(ratios), 2), round(max(ratios), 2)])
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--serve", metavar="LIB")
    ap.add_argument("--dali-python", default=os.environ.get("DALI_PYTHON", str(HERE.parent.parent / "dali-venv/bin/python")))
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--rounds", type=int, default=11, help="turns per library per op (medians over them)")
    ap.add_argument("--turn-s", type=float, default=0.15, help="about this long per turn")
    ap.add_argument("--threads", type=int, default=2, help="the pipelines' num_threads")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.serve:
        serve(a.serve)
        return 0
    workers = {"dali": Worker("dali", a.dali_python), "torch_dali": Worker("torch_dali", sys.executable)}
    t0 = time.time()
    rows = survey(a.ops.split(","), workers, a.rounds, a.turn_s, a.threads)
    for w in workers.values():
        w.proc.stdin.close()
        w.proc.wait(timeout=60)
    if a.out:
        Path(a.out).write_text(json.dumps({
            "what": f"CPU ops, batch 16 (RGB uint8 360-440 px or the kind's inputs), {a.threads} threads, ms per "
                    "batch: median over rounds alternating the libraries; td_over_dali > 1: torch_dali slower",
            "machine": f"{platform.node()}: {os.cpu_count()} cores, {platform.processor() or platform.machine()}",
            "command": " ".join(["python", "bench/cpu_ops_vs_dali.py", *sys.argv[1:]]),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t0)), "seconds": round(time.time() - t0),
            "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
