"""What GPU work runs beside ResNet-50's training when a loader feeds it, traced with PyTorch's own
profiler (CUPTI, every kernel and copy of the process, nvJPEG's and DALI's included) where Nsight
Systems is not installed. The same training loop and loaders as bench/feed_probe.py; after warm-up
steps, STEPS steps are traced and split per stream by nsys_streams.analyse (the training stream's
busy time and idle holes, the loader's kernels that overlapped it).

    python bench/diag/feed_kineto.py DATA synthetic|td|tdl|dali [steps]   (one JSON line)
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import feed_probe  # noqa: E402
from nsys_streams import analyse  # noqa: E402


def main() -> None:
    import torch
    import torchvision
    from torch.profiler import ProfilerActivity, profile
    data, mode = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    gen = feed_probe.batches(data, mode)

    def step() -> None:
        x, y = next(gen)
        x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y % 1000)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(15):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        t = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        events = json.load(open(path))["traceEvents"]
    kern, copies = [], []
    for ev in events:
        if ev.get("ph") != "X" or "dur" not in ev:
            continue
        cat, a = ev.get("cat", ""), ev.get("args", {})
        s = int(float(ev["ts"]) * 1e3)
        e = s + int(float(ev["dur"]) * 1e3)
        if cat == "kernel":
            kern.append((s, e, int(a.get("stream", -1)), ev.get("name", "?")))
        elif cat in ("gpu_memcpy", "gpu_memset"):
            copies.append((s, e, int(a.get("stream", -1)), int(a.get("bytes", 0)), ev.get("name", cat)[:24]))
    rec = analyse(kern, copies, mode)
    rec.update(steps=steps, images_per_s_traced=round(steps * feed_probe.BS / wall, 1),
               config={k: v for k, v in os.environ.items() if k.startswith("TORCH_DALI_")})
    print(json.dumps(rec), flush=True)
    os._exit(0)  # loader threads may still be mid-batch; the trace is what was wanted


if __name__ == "__main__":
    main()
