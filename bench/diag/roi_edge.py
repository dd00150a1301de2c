"""Which hardware window decodes leave a garbage edge (session 12: the last row of some windows
changes between identical decodes), and does growing the window to the 16-pixel grid (then taking
the crop as a view) make them rerun-identical?   python bench/diag/roi_edge.py DATA_DIR"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from roi_rerun import windows  # noqa: E402


def grow(rois: torch.Tensor, sizes: np.ndarray, how: str) -> np.ndarray:
    r = rois.numpy().copy()
    start, end = r[:, :2].copy(), r[:, :2] + r[:, 2:]
    if how == "grid8":  # out to the 16 grid after half a block, as the region reader does
        start = np.maximum(start - 8, 0) // 16 * 16
        end = np.minimum(-(-(end + 8) // 16) * 16, sizes)
    elif how == "grid":  # out to the 16 grid
        start = start // 16 * 16
        end = np.minimum(-(-end // 16) * 16, sizes)
    elif how == "bottom16":
        end[:, 0] = np.minimum(end[:, 0] + 16, sizes[:, 0])
    return np.concatenate([start, end - start], axis=1)


def main(root: str) -> None:
    from torch_dali._native import extension
    from torch_dali.io.decode import peek_image_info
    ext = extension.load()
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".jpg"))[:768]
    data = [torch.frombuffer(bytearray(open(f, "rb").read()), dtype=torch.uint8) for f in files]
    batches = [data[i:i + 128] for i in range(0, len(data), 128)]
    dec = ext.NvJpegDecoder(torch.cuda.current_device(), 1, 4, 1.0, 1000 * 1000, 2)
    rois = [windows(b, k) for k, b in enumerate(batches)]
    sizes = [np.array([(peek_image_info(d).height, peek_image_info(d).width) for d in b]) for b in batches]
    wholes = [[t.clone() for t in dec.decode(b, "rgb")] for b in batches]
    for how in ("none", "bottom16", "grid", "grid8"):
        g = [torch.from_numpy(grow(r, s, how)) for r, s in zip(rois, sizes)]
        outs = []
        for rnd in range(4):
            outs.append([[t.clone() for t in dec.decode(b, "rgb", gg)] for b, gg in zip(batches, g)])
        bad, vs_whole, off = [], 0, []
        for k, b in enumerate(batches):
            for i in range(len(b)):
                y, x, h, w = rois[k][i].tolist()
                gy, gx = int(g[k][i, 0]), int(g[k][i, 1])
                crops = [o[k][i][y - gy:y - gy + h, x - gx:x - gx + w] for o in outs]
                if any(not torch.equal(crops[0], c) for c in crops[1:]):
                    d = max(int((crops[0].int() - c.int()).abs().amax()) for c in crops[1:])
                    rows = sorted({int(v) for c in crops[1:] for v in (crops[0].int() - c.int()).abs().amax((1, 2)).nonzero().flatten()})
                    bad.append({"b": k, "i": i, "size": sizes[k][i].tolist(), "roi": [y, x, h, w],
                                "grown": g[k][i].tolist(), "max": d, "rows": rows[:6]})
                ref = wholes[k][i][y:y + h, x:x + w]
                dd = (crops[0].int() - ref.int()).abs().amax(2)
                vs_whole = max(vs_whole, int(dd.max()))
                if int(dd.max()) > 4:
                    ys, xs = (dd > 4).nonzero(as_tuple=True)
                    off.append({"b": k, "i": i, "size": sizes[k][i].tolist(), "roi": [y, x, h, w], "max": int(dd.max()),
                                "rows": sorted({int(v) for v in ys})[:5], "cols": [int(xs.min()), int(xs.max())],
                                "n": int(ys.numel())})
        print(json.dumps({"how": how, "windows": sum(len(b) for b in batches), "rerun_differ": len(bad),
                          "max_vs_whole": vs_whole, "examples": bad[:6],
                          "off_vs_whole": len(off), "off_examples": off[:8]}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
