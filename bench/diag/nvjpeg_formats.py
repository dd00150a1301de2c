"""Does nvJPEG's hardware (engine) decode slow down beside a busy GPU because of its own CUDA
kernels (the YCbCr -> RGB conversion it launches per image), and does asking for its native planar
YUV output avoid them? Calls libnvjpeg directly (ctypes), so it measures nvJPEG, not our wrapper.

    python bench/diag/nvjpeg_formats.py DATA [batches]      (GPU machine; one JSON line per case)

Per output format (RGBI: what DALI and torch_dali ask for; RGB: planar; YUV: the engine's planes) and per
background load (none; `mm`: bf16 matmuls on another stream; `resnet`: ResNet-50 training steps as
feed_probe takes them, in a thread): the host time of one batched decode call plus its stream's
synchronisation (median / mean / max ms), and the kernels nvJPEG launched per batch (profiled once
without load).
"""
from __future__ import annotations

import ctypes
import glob
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import torch

BACKEND_HARDWARE = 3
FORMATS = {"YUV": 1, "RGB": 3, "RGBI": 5}


class Image(ctypes.Structure):
    _fields_ = [("channel", ctypes.c_void_p * 4), ("pitch", ctypes.c_size_t * 4)]


def load_nvjpeg() -> ctypes.CDLL:
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    for pattern in (f"{home}/lib64/libnvjpeg.so*", f"{home}/targets/*/lib/libnvjpeg.so*",
                    "/usr/lib/x86_64-linux-gnu/libnvjpeg.so*"):
        for path in sorted(glob.glob(pattern)):
            return ctypes.CDLL(path)
    raise SystemExit("libnvjpeg not found")


def check(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"{what}: nvJPEG status {status}")


class Decoder:
    def __init__(self, lib: ctypes.CDLL, batch: int, fmt: int) -> None:
        self.lib, self.batch, self.fmt = lib, batch, fmt
        self.handle, self.state = ctypes.c_void_p(), ctypes.c_void_p()
        check(lib.nvjpegCreateEx(BACKEND_HARDWARE, None, None, 0, ctypes.byref(self.handle)), "nvjpegCreateEx(HARDWARE)")
        check(lib.nvjpegJpegStateCreate(self.handle, ctypes.byref(self.state)), "nvjpegJpegStateCreate")
        check(lib.nvjpegDecodeBatchedInitialize(self.handle, self.state, batch, 1, fmt), "nvjpegDecodeBatchedInitialize")
        self.stream = torch.cuda.Stream()

    def supported(self, data: bytes) -> tuple[bool, int, int]:
        lib = self.lib
        js = ctypes.c_void_p()
        check(lib.nvjpegJpegStreamCreate(self.handle, ctypes.byref(js)), "nvjpegJpegStreamCreate")
        ok = lib.nvjpegJpegStreamParse(self.handle, data, ctypes.c_size_t(len(data)), 0, 0, js) == 0
        flag = ctypes.c_int(1)
        ok = ok and lib.nvjpegDecodeBatchedSupported(self.handle, js, ctypes.byref(flag)) == 0 and flag.value == 0
        n, sub = ctypes.c_int(), ctypes.c_int()
        w, h = (ctypes.c_int * 4)(), (ctypes.c_int * 4)()
        lib.nvjpegGetImageInfo(self.handle, data, ctypes.c_size_t(len(data)), ctypes.byref(n), ctypes.byref(sub), w, h)
        lib.nvjpegJpegStreamDestroy(js)
        return ok and n.value == 3, w[0], h[0]

    def outputs(self, sizes: list[tuple[int, int]]) -> tuple[list[torch.Tensor], ctypes.Array]:
        keep, dests = [], (Image * len(sizes))()
        for i, (w, h) in enumerate(sizes):
            if self.fmt == FORMATS["RGBI"]:
                t = torch.empty(h, w * 3, dtype=torch.uint8, device="cuda")
                dests[i].channel[0], dests[i].pitch[0] = t.data_ptr(), w * 3
            else:  # three planes (YUV: chroma planes written at their subsampled size, pitch w)
                t = torch.empty(3, h, w, dtype=torch.uint8, device="cuda")
                for c in range(3):
                    dests[i].channel[c], dests[i].pitch[c] = t[c].data_ptr(), w
            keep.append(t)
        return keep, dests

    def decode(self, datas: list[bytes], dests: ctypes.Array) -> float:
        ptrs = (ctypes.c_char_p * len(datas))(*datas)
        lens = (ctypes.c_size_t * len(datas))(*[len(d) for d in datas])
        t = time.perf_counter()
        check(self.lib.nvjpegDecodeBatched(self.handle, self.state, ptrs, lens, dests,
                                           ctypes.c_void_p(self.stream.cuda_stream)), "nvjpegDecodeBatched")
        self.stream.synchronize()
        return (time.perf_counter() - t) * 1e3


class Load:
    """Background GPU work on its own stream, in a thread, until stopped."""

    def __init__(self, kind: str) -> None:
        self.kind, self.on = kind, True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.ready = threading.Event()
        self.thread.start()
        self.ready.wait()

    def run(self) -> None:
        with torch.cuda.stream(torch.cuda.Stream()):
            if self.kind == "mm":
                a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
                step = lambda: a @ a  # noqa: E731
            else:
                import torchvision
                model = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
                opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
                x = torch.randn(256, 3, 224, 224, device="cuda").contiguous(memory_format=torch.channels_last)
                y = torch.randint(0, 1000, (256,), device="cuda")

                def step() -> None:
                    with torch.autocast("cuda", dtype=torch.bfloat16):
                        loss = torch.nn.functional.cross_entropy(model(x), y)
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
            for _ in range(3):
                step()
            torch.cuda.current_stream().synchronize()
            self.ready.set()
            while self.on:
                step()
                torch.cuda.current_stream().synchronize()

    def stop(self) -> None:
        self.on = False
        self.thread.join()


def kernels_per_batch(dec: Decoder, datas: list[bytes], dests: ctypes.Array) -> dict[str, int]:
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        dec.decode(datas, dests)
        torch.cuda.synchronize()
    counts: dict[str, int] = {}
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            name = ev.name[:60]
            counts[name] = counts.get(name, 0) + 1
    return counts


def main() -> None:
    root, nbatches = Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 20
    batch = int(os.environ.get("BATCH", "128"))
    lib = load_nvjpeg()
    files = sorted(root.rglob("*.jpg"))[: batch * 8]
    blobs = [f.read_bytes() for f in files]
    probe = Decoder(lib, batch, FORMATS["RGBI"])
    good = []
    for b in blobs:
        ok, w, h = probe.supported(b)
        if ok:
            good.append((b, w, h))
    sets = [good[i:i + batch] for i in range(0, len(good) - batch + 1, batch)]
    print(json.dumps({"what": "inputs", "files": len(blobs), "hw_supported": len(good), "batch": batch, "sets": len(sets)}), flush=True)
    decs = {name: Decoder(lib, batch, code) for name, code in FORMATS.items()}
    bufs = {name: [dec.outputs([(w, h) for _, w, h in s]) for s in sets] for name, dec in decs.items()}
    for name, dec in decs.items():  # warm-up, then one profiled batch
        for k, s in enumerate(sets):
            dec.decode([b for b, _, _ in s], bufs[name][k][1])
        kern = kernels_per_batch(dec, [b for b, _, _ in sets[0]], bufs[name][0][1])
        print(json.dumps({"what": "kernels", "format": name, "per_batch": kern}), flush=True)
    for load in ("none", "resnet", "mm"):
        bg = Load(load) if load != "none" else None
        for name, dec in decs.items():
            ms = [dec.decode([b for b, _, _ in sets[i % len(sets)]], bufs[name][i % len(sets)][1]) for i in range(nbatches)]
            print(json.dumps({"what": "decode", "format": name, "load": load, "batch": batch,
                              "ms": [round(statistics.median(ms), 2), round(statistics.mean(ms), 2), round(max(ms), 2)]}), flush=True)
        if bg is not None:
            bg.stop()
    print(json.dumps({"what": "convert", **convert_match(bufs, sets[0])}), flush=True)
    print(json.dumps({"what": "roi", **roi_check(lib, decs, sets[0])}), flush=True)


def to_rgb(y: torch.Tensor, u: torch.Tensor, v: torch.Tensor, up: str, rnd: str) -> torch.Tensor:
    """JFIF (full-range BT.601) YCbCr -> RGB of one image's planes, chroma upsampled `up`."""
    h, w = y.shape
    sy, sx = (h + u.shape[0] - 1) // u.shape[0], (w + u.shape[1] - 1) // u.shape[1]
    if up == "nearest":
        cb = u.repeat_interleave(sy, 0).repeat_interleave(sx, 1)[:h, :w]
        cr = v.repeat_interleave(sy, 0).repeat_interleave(sx, 1)[:h, :w]
    else:
        cb, cr = (torch.nn.functional.interpolate(c[None, None], size=(u.shape[0] * sy, u.shape[1] * sx), mode="bilinear",
                                                   align_corners=False)[0, 0][:h, :w] for c in (u, v))
    cb, cr = cb - 128, cr - 128
    rgb = torch.stack([y + 1.402 * cr, y - 0.344136 * cb - 0.714136 * cr, y + 1.772 * cb], -1)
    rgb = torch.floor(rgb + 0.5) if rnd == "round" else torch.floor(rgb)
    return rgb.clamp(0, 255)


def convert_match(bufs: dict, batch: list) -> dict:
    """How closely each candidate conversion of the YUV planes gives nvJPEG's own RGBI output."""
    res = {}
    for up in ("nearest", "bilinear"):
        for rnd in ("round", "floor"):
            same = total = 0
            worst = 0.0
            for k, (_, w, h) in enumerate(batch[:32]):
                planes = bufs["YUV"][0][0][k].float()
                cw, ch = (w + 1) // 2, (h + 1) // 2  # 4:2:0 (the data set's JPEGs)
                ours = to_rgb(planes[0], planes[1][:ch, :cw], planes[2][:ch, :cw], up, rnd)
                ref = bufs["RGBI"][0][0][k].view(h, w, 3).float()
                d = (ours - ref).abs()
                same += int((d == 0).sum())
                total += d.numel()
                worst = max(worst, float(d.max()))
            res[f"{up}_{rnd}"] = {"exact_share": round(same / total, 5), "max_abs": worst}
    return res


def roi_check(lib: ctypes.CDLL, decs: dict, batch: list) -> dict:
    """YUV with windows (nvjpegDecodeBatchedEx): does it decode, and do its planes equal the
    whole-image planes' window (even offsets)?"""
    out = {}
    for name in ("RGBI", "YUV"):
        dec = decs[name]
        n = min(len(batch), dec.batch)
        params = (ctypes.c_void_p * n)()
        wins = []
        for i, (_, w, h) in enumerate(batch[:n]):
            check(lib.nvjpegDecodeParamsCreate(dec.handle, ctypes.byref(ctypes.c_void_p.from_buffer(params, i * 8))), "params")
            x0, y0 = (w // 5) & ~1, (h // 7) & ~1
            ww, hh = (w // 2) & ~1, (h // 2) & ~1
            check(lib.nvjpegDecodeParamsSetROI(ctypes.c_void_p(params[i]), x0, y0, ww, hh), "roi")
            wins.append((x0, y0, ww, hh))
        keep, dests = dec.outputs([(ww, hh) for (_, _, ww, hh) in wins])
        datas = [b for b, _, _ in batch[:n]]
        ptrs = (ctypes.c_char_p * n)(*datas)
        lens = (ctypes.c_size_t * n)(*[len(d) for d in datas])
        s = lib.nvjpegDecodeBatchedEx(dec.handle, dec.state, ptrs, lens, dests, params, ctypes.c_void_p(dec.stream.cuda_stream))
        dec.stream.synchronize()
        res = {"status": s}
        if s == 0 and name == "YUV":
            full = decs["YUV"]
            fk, fd = full.outputs([(w, h) for _, w, h in batch[:n]])
            full.decode(datas, fd)
            dy = du = 0.0
            for i, (x0, y0, ww, hh) in enumerate(wins):
                dy = max(dy, float((keep[i][0] .float() - fk[i][0][y0:y0 + hh, x0:x0 + ww].float()).abs().max()))
                cu = fk[i][1][y0 // 2:(y0 + hh) // 2, x0 // 2:(x0 + ww) // 2].float()
                du = max(du, float((keep[i][1][:hh // 2, :ww // 2].float() - cu).abs().max()))
            res.update(y_max_abs=dy, u_max_abs=du)
        out[name] = res
        # decoders re-initialised for their next use
        lib.nvjpegDecodeBatchedInitialize(dec.handle, dec.state, dec.batch, 1, dec.fmt)
    return out


if __name__ == "__main__":
    main()
