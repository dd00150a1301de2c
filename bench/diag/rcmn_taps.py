"""The linear fused resize kernels with each block's taps in shared memory (default) against the
earlier per-pixel taps: bit-identical outputs, and GPU time per batch. Cases: the fused reference
pipeline's (random-crop windows of ~438x416 images resized to 224x224, float NCHW), its
resize-then-crop form, NHWC uint8, one channel, upscaling, and shrinking past the tables (the
per-pixel fallback).   python3 bench/diag/rcmn_taps.py [out.json]   (GPU machine)
"""
import json
import math
import os
import sys

import torch

from torch_dali._native import extension

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gpu_kernels import _cuda_time as timed  # noqa: E402  (median of CUDA-event timings)

MEAN = torch.tensor([0.485, 0.456, 0.406]) * 255
STD = torch.tensor([0.229, 0.224, 0.225]) * 255


def images(n, c, g, lo=300, hi=560):
    sizes = torch.randint(lo, hi, (n, 2), generator=g)
    return [torch.randint(0, 256, (int(h), int(w), c), generator=g, dtype=torch.uint8).cuda() for h, w in sizes]


def rrc_windows(imgs, g, scale=(0.08, 1.0)):
    out = []
    for im in imgs:
        h, w = im.shape[:2]
        area = h * w * (scale[0] + (scale[1] - scale[0]) * float(torch.rand(1, generator=g)))
        ratio = math.exp(math.log(3 / 4) + (math.log(4 / 3) - math.log(3 / 4)) * float(torch.rand(1, generator=g)))
        cw = max(1, min(w, int(round(math.sqrt(area * ratio)))))
        ch = max(1, min(h, int(round(math.sqrt(area / ratio)))))
        y = int(torch.randint(0, h - ch + 1, (1,), generator=g))
        x = int(torch.randint(0, w - cw + 1, (1,), generator=g))
        out.append([y, x, ch, cw])
    return torch.tensor(out, dtype=torch.int64)


def main():
    ext = extension.load()
    ops = torch.ops.torch_dali
    g = torch.Generator().manual_seed(0)
    n = 256
    cases = []
    rgb = images(n, 3, g)
    mirror = torch.randint(0, 2, (n,), generator=g)
    win = rrc_windows(rgb, g)
    cases.append(("rcmn fused-reference (rrc windows, 224, float NCHW)",
                  lambda: ops.resized_crop_mirror_normalize(rgb, win, mirror, MEAN, STD, 224, 224, True, torch.float32, True)))
    cases.append(("rcmn NHWC uint8",
                  lambda: ops.resized_crop_mirror_normalize(rgb, win, mirror, MEAN, STD, 224, 224, True, torch.uint8, False)))
    cases.append(("rcmn no antialias",
                  lambda: ops.resized_crop_mirror_normalize(rgb, win, mirror, MEAN, STD, 224, 224, False, torch.float32, True)))
    gray = images(64, 1, g)
    win1 = rrc_windows(gray, g)
    m1 = torch.randint(0, 2, (64,), generator=g)
    cases.append(("rcmn one channel", lambda: ops.resized_crop_mirror_normalize(
        gray, win1, m1, MEAN[:1], STD[:1], 224, 224, True, torch.float32, True)))
    small = images(64, 3, g, 40, 120)
    wins = rrc_windows(small, g, (0.5, 1.0))
    m2 = torch.randint(0, 2, (64,), generator=g)
    cases.append(("rcmn upscaling", lambda: ops.resized_crop_mirror_normalize(
        small, wins, m2, MEAN, STD, 224, 224, True, torch.float32, True)))
    big = images(16, 3, g, 2000, 3000)
    winb = torch.tensor([[0, 0, im.shape[0], im.shape[1]] for im in big])
    m3 = torch.zeros(16, dtype=torch.int64)
    cases.append(("rcmn shrinking >8x (per-pixel fallback)", lambda: ops.resized_crop_mirror_normalize(
        big, winb, m3, MEAN, STD, 224, 224, True, torch.float32, True)))
    crops = [im[y:y + h, x:x + w] for im, (y, x, h, w) in zip(rgb, win.tolist())]
    resized = torch.full((n, 2), 224, dtype=torch.int64)
    anchors = torch.zeros((n, 2), dtype=torch.int64)
    cases.append(("rscmn resize 224 then CMN (the fused reference pipeline's ops)",
                  lambda: ops.resize_crop_mirror_normalize(crops, resized, anchors, mirror, MEAN, STD, 224, 224, 1,
                                                           True, False, torch.float32, True)))
    resized2 = torch.tensor([[256, 256 * w // h] if h <= w else [256 * h // w, 256]
                             for h, w in (im.shape[:2] for im in rgb)])
    anchors2 = torch.stack([(resized2[:, 0] - 224) // 2, (resized2[:, 1] - 224) // 2], 1)
    cases.append(("rscmn resize_shorter 256 + center crop 224, rounded", lambda: ops.resize_crop_mirror_normalize(
        rgb, resized2, anchors2, mirror, MEAN, STD, 224, 224, 1, True, True, torch.float32, True)))
    rows = []
    for name, fn in cases:
        ext.set_fused_tap_tables(False)
        ref = fn()
        ext.set_fused_tap_tables(True)
        new = fn()
        same = bool(torch.equal(ref, new))
        diff = float((ref.float() - new.float()).abs().max())
        per_pixel, tables = [], []
        for _ in range(3):  # alternating
            ext.set_fused_tap_tables(False)
            per_pixel.append(timed(fn))
            ext.set_fused_tap_tables(True)
            tables.append(timed(fn))
        r = dict(case=name, identical=same, max_abs_diff=diff, per_pixel_ms=round(min(per_pixel), 4),
                 tables_ms=round(min(tables), 4), speedup=round(min(per_pixel) / min(tables), 2))
        print(json.dumps(r), flush=True)
        rows.append(r)
    rec = dict(what="rcmn_taps", device=torch.cuda.get_device_name(), torch=torch.__version__, rows=rows)
    if len(sys.argv) > 1:
        json.dump(rec, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
