"""Time to the first batch of a reference pipeline in a fresh process, and what it is made of.

    python bench/first_batch.py KIND DATA [--split]

Without --split: the clock starts after the CUDA context exists (as ../shared/bench does) and stops
when the first batch from DALIGenericIterator is on the GPU. With --split: the same, after first
timing, one after the other, the pieces the first batch would otherwise pay for (importing
torch_dali, loading the extension, making the nvJPEG decoder), so the remainder shows.
Prints one JSON line.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    kind, data = sys.argv[1], sys.argv[2]
    split = "--split" in sys.argv
    import torch
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    res: dict = {"kind": kind, "split": split}
    t0 = time.perf_counter()
    if split:
        import torch_dali  # noqa: F401
        res["import_s"] = round(time.perf_counter() - t0, 3)
        t = time.perf_counter()
        from torch_dali._native import extension as _extension
        _extension.load()
        res["extension_s"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        from torch_dali.io import nvjpeg
        dec = nvjpeg._nvjpeg_decoder(torch.device("cuda", 0), 0.65 if kind != "fused" else 1.0)
        res["decoder_s"] = round(time.perf_counter() - t, 3)
        if dec is not None and hasattr(dec, "build_stats"):
            time.sleep(2)  # the other slots, made in the background
            res["decoder_build_us"] = dict(dec.build_stats)
    import reference_pipes as R
    import torch_dali.plugin.pytorch as plugin
    t = time.perf_counter()
    pipe = R.make("torch_dali", kind, data)
    pipe.build()
    res["build_s"] = round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    it = plugin.DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                                    last_batch_policy=plugin.LastBatchPolicy.DROP, auto_reset=True)
    next(iter(it))
    torch.cuda.synchronize()
    res["first_batch_after_build_s"] = round(time.perf_counter() - t, 3)
    res["total_s"] = round(time.perf_counter() - t0, 3)
    print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
