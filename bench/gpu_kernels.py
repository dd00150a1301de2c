"""GPU benchmark of the torch_dali extension: nvJPEG decoder settings vs torchvision's batched
GPU decode, and the fused resize/crop/mirror/normalize kernel vs the pure-torch path.

    python bench/gpu_kernels.py [--out bench/results/gpu_kernels.json] [--images 1024] [--quick]

Builds its own JPEGs (smooth random pictures, plus scikit-image's bundled photos when importable),
times with CUDA events after warm-up and reports medians. Needs a CUDA GPU and the extension.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from torch_dali._native import extension as _extension  # noqa: E402

MEAN = torch.tensor([0.485, 0.456, 0.406]) * 255
STD = torch.tensor([0.229, 0.224, 0.225]) * 255


def make_jpegs(n: int, seed: int = 0) -> list[torch.Tensor]:
    """~500x375 q90 4:2:0 JPEGs: `n` encodings of up to 128 distinct pictures."""
    from PIL import Image
    g = torch.Generator().manual_seed(seed)
    pictures = []
    try:  # real photos give realistic entropy; only the ones bundled with scikit-image
        from skimage import data as skdata
        for name in ("astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry"):
            pictures.append(Image.fromarray(getattr(skdata, name)()).convert("RGB"))
    except Exception:
        pass
    while len(pictures) < 128:
        h, w = (375, 500) if len(pictures) % 3 else (500, 375)
        low = torch.randint(0, 256, (1, 3, h // 12, w // 12), generator=g).float()
        img = F.interpolate(low, size=(h, w), mode="bicubic", align_corners=False)[0]
        img = (img + torch.randn(img.shape, generator=g) * 8).clamp(0, 255).to(torch.uint8)
        pictures.append(Image.fromarray(img.permute(1, 2, 0).numpy()))
    encoded = []
    for i, pic in enumerate(pictures):
        if pic.size[0] * pic.size[1] > 600 * 450:
            pic = pic.resize((500, 375) if pic.size[0] >= pic.size[1] else (375, 500), Image.BILINEAR)
        buf = io.BytesIO()
        pic.save(buf, format="JPEG", quality=90, subsampling=2)
        encoded.append(torch.frombuffer(bytearray(buf.getvalue()), dtype=torch.uint8))
    return [encoded[i % len(encoded)] for i in range(n)]


def time_batches(fn, batches: list, warmup: int = 2, repeats: int = 3) -> dict:
    """Throughput of running `fn` over all batches back to back (pipelined, one sync at the end),
    median over repeats; and the median latency of one batch with a sync after it."""
    for b in batches[:warmup]:
        fn(b)
    torch.cuda.synchronize()
    n_images = sum(len(b) for b in batches)
    rates = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        start.record()
        for b in batches:
            fn(b)
        end.record()
        end.synchronize()
        wall = time.perf_counter() - t0
        rates.append(n_images / max(wall, start.elapsed_time(end) / 1000))
    lat = []
    for b in batches[:5]:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(b)
        end.record()
        end.synchronize()
        lat.append(start.elapsed_time(end))
    return {"images_per_s": statistics.median(rates), "batch_latency_ms": statistics.median(lat)}


def bench_decoders(ext, jpegs: list[torch.Tensor], batch_sizes: list[int], settings: list[tuple]) -> list[dict]:
    rows = []
    for bs in batch_sizes:
        batches = [jpegs[i:i + bs] for i in range(0, len(jpegs) - bs + 1, bs)]
        for hw, cu, load in settings:
            dec = ext.NvJpegDecoder(torch.cuda.current_device(), hw, cu, load)
            r = time_batches(lambda b: dec.decode(b, "rgb"), batches)
            rows.append({"decoder": "torch_dali.NvJpegDecoder", "batch": bs, "num_hw_states": hw,
                         "num_cuda_states": cu, "hw_load": load, "hardware": dec.hardware_status,
                         "last_stats": dict(dec.last_stats), **r})
            print(f"  nvjpeg hw={hw} cuda={cu} load={load:<4} batch={bs:<4} "
                  f"{r['images_per_s']:9.0f} img/s  {r['batch_latency_ms']:7.2f} ms/batch  {dec.last_stats}")
            del dec
        try:
            from torchvision.io import decode_jpeg
            r = time_batches(lambda b: decode_jpeg(b, device="cuda"), batches)
            rows.append({"decoder": "torchvision.io.decode_jpeg(device='cuda')", "batch": bs, **r})
            print(f"  torchvision batched                 batch={bs:<4} {r['images_per_s']:9.0f} img/s  "
                  f"{r['batch_latency_ms']:7.2f} ms/batch")
        except Exception as exc:  # torchvision without GPU decode
            rows.append({"decoder": "torchvision.io.decode_jpeg(device='cuda')", "batch": bs, "error": repr(exc)})
    return rows


def _torch_rcmn(images, windows, mirror, out_hw, antialias, dtype):
    outs = []
    mean, std = MEAN.cuda()[:, None, None], STD.cuda()[:, None, None]
    for img, (y, x, h, w), m in zip(images, windows.tolist(), mirror.tolist()):
        r = F.interpolate(img[y:y + h, x:x + w].permute(2, 0, 1)[None].float(), size=out_hw,
                          mode="bilinear", antialias=antialias, align_corners=False)[0]
        outs.append(((r.flip(-1) if m else r) - mean) / std)
    return torch.stack(outs).to(dtype)


def _cuda_time(fn, iters: int = 20) -> float:
    for _ in range(3):
        fn()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def bench_kernels(images: list[torch.Tensor], batch: int) -> list[dict]:
    g = torch.Generator().manual_seed(0)
    images = images[:batch]
    windows = []
    for img in images:
        h, w = img.shape[:2]
        wh, ww = int(torch.randint(h // 3, h + 1, (1,), generator=g)), int(torch.randint(w // 3, w + 1, (1,), generator=g))
        windows.append([int(torch.randint(0, h - wh + 1, (1,), generator=g)),
                        int(torch.randint(0, w - ww + 1, (1,), generator=g)), wh, ww])
    windows = torch.tensor(windows, dtype=torch.int32)
    mirror = torch.randint(0, 2, (len(images),), generator=g).bool()
    rows = []
    ops = torch.ops.torch_dali
    for antialias in (False, True):
        for dtype in (torch.float16, torch.float32):
            fused = _cuda_time(lambda: ops.resized_crop_mirror_normalize(
                images, windows, mirror, MEAN, STD, 224, 224, antialias, dtype, True))
            ref = _cuda_time(lambda: _torch_rcmn(images, windows, mirror, (224, 224), antialias, dtype), iters=5)
            rows.append({"op": "resized_crop_mirror_normalize", "batch": len(images), "out": [224, 224],
                         "antialias": antialias, "dtype": str(dtype), "fused_ms": fused, "torch_ms": ref,
                         "speedup": ref / fused})
            print(f"  rcmn aa={antialias!s:<5} {str(dtype):<14} fused {fused:7.3f} ms  torch {ref:8.3f} ms  "
                  f"x{ref / fused:.1f}")
    sizes = torch.tensor([[256, 256 * img.shape[1] // img.shape[0]] for img in images])
    for antialias in (False, True):
        fused = _cuda_time(lambda: ops.resize_batch(images, sizes, antialias, 1))
        ref = _cuda_time(lambda: [F.interpolate(img.permute(2, 0, 1)[None].float(), size=tuple(s), mode="bilinear",
                                                antialias=antialias).round().clamp(0, 255).to(torch.uint8)
                                  for img, s in zip(images, sizes.tolist())], iters=5)
        rows.append({"op": "resize_batch", "batch": len(images), "antialias": antialias, "fused_ms": fused,
                     "torch_ms": ref, "speedup": ref / fused})
        print(f"  resize_batch aa={antialias!s:<5} fused {fused:7.3f} ms  torch {ref:8.3f} ms  x{ref / fused:.1f}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="bench/results/gpu_kernels.json")
    ap.add_argument("--images", type=int, default=1024)
    ap.add_argument("--quick", action="store_true", help="fewer settings")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_kernels: CUDA is not available")
    t0 = time.time()
    ext = _extension.load(verbose=False)
    if ext is None:
        sys.exit(f"gpu_kernels: extension unavailable: {_extension.load_error()}")
    build_s = time.time() - t0
    print(f"extension ready in {build_s:.1f}s; {_extension.status()}")
    jpegs = make_jpegs(args.images)
    print(f"{len(jpegs)} JPEGs, mean {sum(j.numel() for j in jpegs) / len(jpegs) / 1024:.0f} KiB")
    settings = [(1, 1, 1.0), (1, 4, 0.95), (1, 8, 0.9), (2, 2, 1.0), (3, 2, 1.0), (0, 8, 0.0)]
    if args.quick:
        settings = settings[:3]
    batch_sizes = [64, 256]
    result = {
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
        "cpu_count": os.cpu_count(), "python": platform.python_version(), "build_or_load_s": build_s,
        "images": len(jpegs), "decoders": [], "kernels": [],
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:  # after each part, so a hang or crash keeps what was measured
        result["total_s"] = time.time() - t0
        out.write_text(json.dumps(result, indent=2))

    dec = ext.NvJpegDecoder(torch.cuda.current_device(), 1, 2, 1.0)
    images = [im for im in dec.decode(jpegs[:256], "rgb") if im is not None]
    result["kernels"] = bench_kernels(images, 256)
    save()
    result["decoders"] = bench_decoders(ext, jpegs, batch_sizes, settings)
    save()
    print(f"wrote {out} ({result['total_s']:.0f}s)")


if __name__ == "__main__":
    main()
