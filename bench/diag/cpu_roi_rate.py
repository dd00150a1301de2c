"""How fast libjpeg-turbo decodes random-crop windows of q95 4:4:4 JPEGs on this machine's cores
(torch_dali.io.jpeg_roi, one ctypes call per image, the GIL released), at 1..N threads: whether a
CPU share beside the JPEG engines could add to the fused 4:4:4 row. One JSON line.
  python3 bench/diag/cpu_roi_rate.py DIR   (a folder of JPEGs, e.g. /tmp/ref444)"""
import glob
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from torch_dali.io import jpeg_roi

files = sorted(glob.glob(os.path.join(sys.argv[1], "**", "*.jpg"), recursive=True))[:512]
datas = [np.fromfile(f, dtype=np.uint8) for f in files]
rng = np.random.default_rng(0)
jobs = []
for d in datas:
    h, w = jpeg_roi.jpeg_header(d)[:2]
    a = rng.uniform(0.08, 1.0)
    r = np.exp(rng.uniform(np.log(3 / 4), np.log(4 / 3)))
    ch, cw = min(h, max(1, int(round(np.sqrt(a / r) * h)))), min(w, max(1, int(round(np.sqrt(a * r) * w))))
    jobs.append((d, (int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1)), ch, cw)))
rec = dict(what="cpu_roi_rate", available=jpeg_roi.available(), reason=jpeg_roi.unavailable_reason(),
           images=len(jobs), cpus=os.cpu_count())
if jpeg_roi.available():
    for n in (1, 4, 8, 12, 16):
        with ThreadPoolExecutor(n) as pool:
            list(pool.map(lambda j: jpeg_roi.decode_roi(*j), jobs[:32]))
            t = time.perf_counter()
            list(pool.map(lambda j: jpeg_roi.decode_roi(*j), jobs))
            rec[f"img_s_{n}"] = round(len(jobs) / (time.perf_counter() - t))
print(json.dumps(rec), flush=True)
