"""What does ResNet-50's training wait for when a loader feeds it? Per training step, on the host:
time in next() (the loader) and time issuing forward/backward/step; on the GPU (CUDA events on the
training stream): time stalled before the step's first kernel (the batch's ready event, or the
host not having issued work yet) and time from its first kernel to its last (grows when the
loader's kernels share the SMs, or when the host issues kernels slower than the GPU runs them).
Against synthetic data in the same call these split the feed loss into its causes.

    python bench/feed_probe.py DATA synthetic|td|tdl|dali [steps]   (one JSON line)

td: DALI's fused ResNet-50 recipe through DALIGenericIterator, as the judge's train_feed.py writes it
(default hw_decoder_load); tdl: torch_dali.DataLoader over the README's pipeline; dali: the fused
recipe with NVIDIA DALI. TORCH_DALI_PROBE_SWITCH=seconds sets the interpreter's GIL switch interval;
TORCH_DALI_PROBE_HOG_MS=ms adds a thread that holds the GIL that long every 58 ms (calibration).
TORCH_DALI_PROBE_TRAIN=graph replays the step as one CUDA graph (GPU shared, host barely), =sleep
takes each batch at the training's pace with no GPU work (TORCH_DALI_PROBE_SLEEP_S, default 0.055).
TORCH_DALI_PROBE_STREAM=side runs everything (model, training) on a created stream instead of the
legacy default stream, to test whether the decoder's waits come from the default stream's implicit
ordering with blocking streams.
Per decode call (torch_dali's mixed decoders): its wall time and the decoder's own phase times
(`decode_calls`), to split a decode lane's time into the decoder's and the rest (Python, GIL).
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

BS = 256
PIPES: list = []  # the torch_dali pipelines made, for their executors' stage timings
DECODES: list = []  # per torch_dali decode call: (wall ms, the decoder's last_stats, start perf_counter)


def time_decodes() -> None:
    """Wraps torch_dali's batched GPU decode to record each call's wall time and phase times."""
    from torch_dali.io import nvjpeg
    inner = nvjpeg.decode_jpeg_batch_cuda

    def timed(datas, device, *a, **kw):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        out = inner(datas, device, *a, **kw)
        dec = nvjpeg.prepare_decoder(device, kw.get("hw_load", 0.9))
        DECODES.append(((time.perf_counter() - t) * 1e3, dict(dec.last_stats) if dec is not None else {}, t))
        return out
    nvjpeg.decode_jpeg_batch_cuda = timed
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def batches(data: str, mode: str) -> Iterator[Any]:
    import torch
    if mode == "synthetic":
        x = torch.randn(BS, 3, 224, 224, device="cuda")
        y = torch.randint(0, 1000, (BS,), device="cuda")
        while True:
            yield x, y
    if mode in ("td", "tdl"):
        time_decodes()
    if mode == "tdl":
        import torch_dali
        from torch_dali import fn, pipeline_def, types

        @pipeline_def(num_threads=os.cpu_count(), seed=12)
        def train(data_dir: str) -> Any:
            jpegs, labels = fn.readers.file(file_root=data_dir, random_shuffle=True, name="Reader")
            images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
            images = fn.random_resized_crop(images, size=(224, 224))
            images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(), mean=MEAN, std=STD)
            return images, labels
        loader = torch_dali.DataLoader(lambda **kw: train(data, **kw), batch_size=BS, drop_last=True)
        PIPES.append(loader.pipe)
        while True:
            for x, y in loader:
                yield x, y.cuda(non_blocking=True)
    lib = "nvidia.dali" if mode == "dali" else "torch_dali"
    nd = __import__(lib, fromlist=["fn"])
    plugin = __import__(lib + ".plugin.pytorch", fromlist=["x"])
    fn, types = nd.fn, nd.types

    @nd.pipeline_def(batch_size=BS, num_threads=os.cpu_count(), device_id=0, seed=1, prefetch_queue_depth=2)
    def p() -> Any:
        jpegs, labels = fn.readers.file(file_root=data, random_shuffle=True, name="Reader")
        images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB)
        images = fn.resize(images, resize_x=224, resize_y=224)
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW",
                                          mean=MEAN, std=STD, mirror=fn.random.coin_flip())
        return images, labels.gpu()
    pipe = p()
    pipe.build()
    if mode != "dali":
        PIPES.append(pipe)
    it = plugin.DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                                    last_batch_policy=plugin.LastBatchPolicy.DROP, auto_reset=True)
    while True:
        for out in it:
            yield out[0]["data"], out[0]["label"].squeeze(-1).long()


def train_step(model: Any, opt: Any, x: Any, y: Any) -> None:
    """One ResNet-50 step as the judge's train_feed.py takes it (bf16 autocast, channels_last)."""
    import torch
    x = x.contiguous(memory_format=torch.channels_last)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(x), y % 1000)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


def graphed_step(model: Any, opt: Any) -> Any:
    """TORCH_DALI_PROBE_TRAIN=graph: the same step captured once as a CUDA graph (PyTorch's
    whole-network recipe) and replayed per batch: the GPU as busy as eager training, while the
    training thread issues one call per step instead of ~700 kernels (so it holds the GIL and a
    core far less). Splits a loader's cost into GPU sharing and host (GIL, CPU) sharing."""
    import torch
    sx = torch.randn(BS, 3, 224, 224, device="cuda").contiguous(memory_format=torch.channels_last)
    sy = torch.randint(0, 1000, (BS,), device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            train_step(model, opt, sx, sy)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):  # capture needs no cast cache
            loss = torch.nn.functional.cross_entropy(model(sx), sy)
        loss.backward()
        opt.step()

    def step(model: Any, opt: Any, x: Any, y: Any) -> None:
        sx.copy_(x)
        sy.copy_(y % 1000)
        graph.replay()
    return step


def paced_step(model: Any, opt: Any, x: Any, y: Any) -> None:
    """TORCH_DALI_PROBE_TRAIN=sleep: no GPU work, the batch taken at the training's pace (the
    loader's own timings without anything sharing the GPU or the GIL)."""
    time.sleep(float(os.environ.get("TORCH_DALI_PROBE_SLEEP_S", "0.055")))


def main() -> None:
    import torch
    import torchvision
    data, mode = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    hog = float(os.environ.get("TORCH_DALI_PROBE_HOG_MS", "0"))
    if hog > 0:  # calibration: a thread holding the GIL `hog` ms of every 58 (a loader's share)
        import threading

        def spin() -> None:
            while True:
                end = time.perf_counter() + hog / 1e3
                while time.perf_counter() < end:
                    pass
                time.sleep(max(0.0, 0.058 - hog / 1e3))
        threading.Thread(target=spin, daemon=True).start()
    if os.environ.get("TORCH_DALI_PROBE_SWITCH"):
        sys.setswitchinterval(float(os.environ["TORCH_DALI_PROBE_SWITCH"]))
    stream = os.environ.get("TORCH_DALI_PROBE_STREAM", "default")
    if stream == "side":  # off the legacy default stream, which blocking streams wait behind
        torch.cuda.set_stream(torch.cuda.Stream())
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    train = os.environ.get("TORCH_DALI_PROBE_TRAIN", "eager")
    do_step = {"eager": lambda: train_step, "graph": lambda: graphed_step(model, opt),
               "sleep": lambda: paced_step}[train]()
    gen = batches(data, mode)
    rows: list[tuple[Any, ...]] = []
    t_start = None
    cpu0 = None
    for step in range(steps + 10):
        if step == 10:
            torch.cuda.synchronize()
            t_start = time.perf_counter()
            cpu0 = time.process_time()
            for pipe in PIPES:
                pipe.executor.reset_stage_stats()
            DECODES.clear()
        ea, eb, ec = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        ea.record()
        h0 = time.perf_counter()
        c0 = time.thread_time()
        x, y = next(gen)
        h1 = time.perf_counter()
        eb.record()  # after the iterator's wait on the batch's event
        do_step(model, opt, x, y)
        ec.record()
        h2 = time.perf_counter()
        if step >= 10:
            rows.append((h1 - h0, h2 - h1, ea, eb, ec, time.thread_time() - c0, h0))
    torch.cuda.synchronize()
    wall = time.perf_counter() - t_start
    cpu = time.process_time() - cpu0

    def ms(v: list[float]) -> dict[str, float]:
        return {"mean": round(statistics.mean(v), 2), "median": round(statistics.median(v), 2),
                "max": round(max(v), 2)}
    gaps = [rows[i][4].elapsed_time(rows[i + 1][2]) for i in range(len(rows) - 1)]  # between steps
    rec = {
        "what": f"feed_probe_{mode}", "train": train, "stream": stream, "steps": steps, "images_per_s": round(steps * BS / wall, 1),
        "step_ms": round(wall / steps * 1e3, 2),
        "host_next_ms": ms([r[0] * 1e3 for r in rows]),
        "host_issue_ms": ms([r[1] * 1e3 for r in rows]),
        "gpu_wait_ms": ms([r[2].elapsed_time(r[3]) for r in rows]),  # ea -> eb: the stream's wait
        "gpu_step_ms": ms([r[3].elapsed_time(r[4]) for r in rows]),  # eb -> ec: the training work
        "gpu_gap_ms": ms(gaps or [0.0]),  # one step's end to the next one's start
        "process_cpu_s_per_step": round(cpu / steps, 4),
        # the training thread's own CPU time per step: near step_ms, the host bounds the step and
        # any GIL time other threads take is lost from it
        "main_thread_cpu_ms": ms([r[5] * 1e3 for r in rows]),
        "switch_interval": sys.getswitchinterval(),
        "stages": [pipe.executor.stage_stats() for pipe in PIPES],
        "decode_calls": {"n": len(DECODES), "wall_ms": ms([d[0] for d in DECODES] or [0.0]),
                         **{k + "_ms": ms([d[1].get(k, 0) / 1e3 for d in DECODES] or [0.0])
                            for k in ("headers_us", "decode_us", "hardware_us", "hybrid_us", "total_us")}},
        # each decode call: [start ms from the timed window's start, wall ms, hardware phase ms, hybrid phase ms]
        "per_decode": [[round((d[2] - t_start) * 1e3, 1), round(d[0], 1), round(d[1].get("hardware_us", 0) / 1e3, 1),
                        round(d[1].get("hybrid_us", 0) / 1e3, 1)] for d in DECODES[:300]],
        "per_step": {"start_ms": [round((r[6] - t_start) * 1e3, 1) for r in rows],
                     "next_ms": [round(r[0] * 1e3, 1) for r in rows],
                     "gpu_wait_ms": [round(r[2].elapsed_time(r[3]), 1) for r in rows],
                     "gpu_step_ms": [round(r[3].elapsed_time(r[4]), 1) for r in rows]},
        "config": {k: v for k, v in os.environ.items() if k.startswith("TORCH_DALI_")},
    }
    print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
