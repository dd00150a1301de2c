"""Is the nvJPEG window (ROI) decode deterministic, and does it stay inside each window's buffer?
For each decoder configuration (hardware only, CUDA backend only, mixed): a batch decoded twice
with windows (bit-identical?), and each window decoded alone, in a batch of one (a write past a
window's buffer would change a neighbour in the batch, not a lone image). Prints one JSON line
per configuration.   python bench/roi_determinism.py /tmp/ref420
"""
from __future__ import annotations

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(root: str, n: int = 96) -> None:
    from torch_dali._native import extension
    from torch_dali.io.decode import peek_image_info
    ext = extension.load()
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".jpg"))[:n]
    data = [torch.frombuffer(bytearray(open(f, "rb").read()), dtype=torch.uint8) for f in files]
    g = torch.Generator().manual_seed(3)
    rows = []
    for d in data:
        info = peek_image_info(d)
        h = int(torch.randint(1, info.height + 1, (1,), generator=g))
        w = int(torch.randint(1, info.width + 1, (1,), generator=g))
        y = int(torch.randint(0, info.height - h + 1, (1,), generator=g))
        x = int(torch.randint(0, info.width - w + 1, (1,), generator=g))
        rows.append((y, x, h, w))
    rois = torch.tensor(rows, dtype=torch.int64)
    for name, (hw, cu, load) in {"hardware": (1, 1, 1.0), "cuda": (0, 2, 0.0), "mixed": (1, 4, 0.65)}.items():
        dec = ext.NvJpegDecoder(torch.cuda.current_device(), hw, cu, load, 1000 * 1000, 1)
        a = dec.decode(data, "rgb", rois)
        sa = dict(dec.last_stats)
        b = dec.decode(data, "rgb", rois)
        whole = dec.decode(data, "rgb")
        torch.cuda.synchronize()
        rep = max(int((u.int() - v.int()).abs().max()) for u, v in zip(a, b))
        alone = []
        for i in range(0, n, 7):
            one = dec.decode([data[i]], "rgb", rois[i:i + 1])[0]
            alone.append(int((one.int() - a[i].int()).abs().max()))
        vs_whole = []
        for i, (y, x, h, w) in enumerate(rows):
            vs_whole.append(int((a[i].int() - whole[i][y:y + h, x:x + w].int()).abs().max()))
        print(json.dumps({"config": name, "stats": sa, "repeat_max_diff": rep, "alone_max_diff": max(alone),
                          "vs_whole_max_diff": max(vs_whole),
                          "vs_whole_samples_over_2": sum(v > 2 for v in vs_whole)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
