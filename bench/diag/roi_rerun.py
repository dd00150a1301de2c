"""Is the window (ROI) decode rerun-deterministic once buffers are recycled? On the H200 (session 12)
bench/diag/flip_fold.py showed decoders.image(mixed) -> random_resized_crop differing between two
pipelines of one process with TORCH_DALI_ROI_DECODE=1, never with 0. Part 1 (the decoder alone):
a batch decoded with windows, other batches decoded between (so the decoder's buffers hold other
images), the same batch again: per config, which windows differ, where (edge rows/columns?) and by
how much, plus the decoder's stats (hardware retries). Part 2 (pipelines): the fused recipe and
decoders.image -> random_resized_crop, 3 pipelines each, uint8 out, per iteration which samples
differ from the first run.   python bench/diag/roi_rerun.py DATA_DIR   (one JSON line per check)
"""
from __future__ import annotations

import json
import os
import sys

import torch

sys.path.insert(0, os.getcwd())


def windows(data: list[torch.Tensor], seed: int) -> torch.Tensor:
    from torch_dali.io.decode import peek_image_info
    g = torch.Generator().manual_seed(seed)
    rows = []
    for d in data:
        info = peek_image_info(d)
        h = int(torch.randint(max(1, info.height // 4), info.height + 1, (1,), generator=g))
        w = int(torch.randint(max(1, info.width // 4), info.width + 1, (1,), generator=g))
        rows.append((int(torch.randint(0, info.height - h + 1, (1,), generator=g)),
                     int(torch.randint(0, info.width - w + 1, (1,), generator=g)), h, w))
    return torch.tensor(rows, dtype=torch.int64)


def where(a: torch.Tensor, b: torch.Tensor) -> dict:
    d = (a.int() - b.int()).abs().amax(2)
    ys, xs = d.nonzero(as_tuple=True)
    return {"shape": list(a.shape[:2]), "pixels": int(ys.numel()), "max": int(d.max()),
            "rows": [int(ys.min()), int(ys.max())], "cols": [int(xs.min()), int(xs.max())]}


def decoder_part(files: list[str]) -> None:
    from torch_dali._native import extension
    ext = extension.load()
    data = [torch.frombuffer(bytearray(open(f, "rb").read()), dtype=torch.uint8) for f in files]
    n = 128
    batches = [data[i:i + n] for i in range(0, len(data), n)]
    for name, (hw, cu, load) in {"hardware": (1, 4, 1.0), "mixed": (1, 4, 0.9), "cuda": (0, 4, 0.0)}.items():
        dec = ext.NvJpegDecoder(torch.cuda.current_device(), hw, cu, load, 1000 * 1000, 2)
        rois = [windows(b, k) for k, b in enumerate(batches)]
        first = [[t.clone() for t in dec.decode(b, "rgb", r)] for b, r in zip(batches, rois)]
        stats = [dict(dec.last_stats)]
        for rnd in range(3):  # the same batches again, after the buffers held others
            for k in (list(range(len(batches)))[::-1] if rnd % 2 else range(len(batches))):
                out = dec.decode(batches[k], "rgb", rois[k])
                stats.append(dict(dec.last_stats))
                bad = {i: where(a, b) for i, (a, b) in enumerate(zip(first[k], out)) if not torch.equal(a, b)}
                if bad:
                    print(json.dumps({"what": "decoder", "config": name, "round": rnd, "batch": k,
                                      "differ": len(bad), "of": len(out), "examples": dict(list(bad.items())[:4]),
                                      "stats": stats[-1]}), flush=True)
        print(json.dumps({"what": "decoder_done", "config": name,
                          "retried": sum(s.get("hardware_retried", 0) for s in stats),
                          "hardware": sum(s.get("hardware", 0) for s in stats),
                          "hybrid": sum(s.get("hybrid", 0) for s in stats)}), flush=True)
        del dec
        torch.cuda.synchronize()


def pipeline_part(root: str, kind: str) -> None:
    from torch_dali import fn, pipeline_def

    @pipeline_def(batch_size=64, num_threads=4, device_id=0, seed=5)
    def p():
        jpegs, _ = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        if kind == "fused":
            images = fn.decoders.image_random_crop(jpegs, device="mixed", hw_decoder_load=1.0)
            return fn.resize(images, resize_x=96, resize_y=96)
        images = fn.decoders.image(jpegs, device="mixed")
        return fn.random_resized_crop(images, size=[96, 96])
    runs = []
    for _ in range(3):
        pipe = p()
        pipe.build()
        runs.append([pipe.run()[0].as_tensor().cpu().clone() for _ in range(6)])
        pipe.shutdown()
    for r in (1, 2):
        for it, (a, b) in enumerate(zip(runs[0], runs[r])):
            bad = {i: where(a[i], b[i]) for i in range(a.shape[0]) if not torch.equal(a[i], b[i])}
            if bad:
                print(json.dumps({"what": "pipeline", "kind": kind, "rerun": r, "iter": it, "differ": len(bad),
                                  "examples": dict(list(bad.items())[:3]),
                                  "env": {k: v for k, v in os.environ.items() if k.startswith("TORCH_DALI_")}}),
                      flush=True)
    print(json.dumps({"what": "pipeline_done", "kind": kind,
                      "env": {k: v for k, v in os.environ.items() if k.startswith("TORCH_DALI_")}}), flush=True)


if __name__ == "__main__":
    root = sys.argv[1]
    part = sys.argv[2] if len(sys.argv) > 2 else "all"
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".jpg"))[:512]
    if part in ("all", "decoder"):
        decoder_part(files)
    if part in ("all", "fused", "unfused"):
        for kind in (("fused", "unfused") if part == "all" else (part,)):
            pipeline_part(root, kind)
