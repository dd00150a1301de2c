"""Host work a reader and the mixed decoder's header parse do per batch under the GIL, with the
readers' data handed over packed (one buffer + offsets, session 29) and as a tensor per sample (the
path before; `_packed_batch` patched to None), alternating in one process. Both readers of the
reference rows: readers.mxnet (the Serialization row) and readers.file (the others).

Timed per batch, on the calling thread: the reader's `run_batch` (no pool: what its stage thread
holds the GIL for, bar the C reads of readers.file, which release it) and the header table the
mixed decoder asks for each batch (`host_io.image_info_table`, the GIL held throughout), plus the
per-sample views a packed batch would still cost a consumer that asks for them. Medians over rounds.

    python bench/packed_readers.py --images 2048 --batch 256 --rounds 7 --out bench/results/packed_readers_cpu.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _reader(kind: str, data: str, batch: int):
    import torch

    from torch_dali import fn, pipeline_def
    from torch_dali.ops._operator import BatchContext
    from torch_dali.ops.readers._base import ReaderBase

    @pipeline_def(batch_size=batch, num_threads=1, device_id=None, seed=12)
    def p():
        if kind == "mxnet":
            j, lab = fn.readers.mxnet(path=[data], index_path=[data[:-4] + ".idx"], random_shuffle=True, name="r")
        else:
            j, lab = fn.readers.file(file_root=data, random_shuffle=True, name="r")
        return j, lab

    pipe = p()
    pipe.build()
    op = next(o for o in pipe.executor.plan.ops.values() if isinstance(o, ReaderBase))
    return pipe, op, BatchContext(op.node, 0, batch, torch.device("cpu"), None)


def _time(fn, n: int) -> float:
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--batches", type=int, default=40)
    ap.add_argument("--out", default="packed_readers_cpu.json")
    args = ap.parse_args()
    from torch_dali.io import host_io
    from torch_dali.io.recordio import write_recordio
    from torch_dali.sample_data import make_benchmark_folder

    tmp = tempfile.mkdtemp()
    folder = os.path.join(tmp, "q90")
    make_benchmark_folder(folder, args.images, quality=90, subsampling="4:2:0")
    files = sorted(str(p) for p in Path(folder).rglob("*.jpg"))
    rec = os.path.join(tmp, "d.rec")
    write_recordio(rec, rec[:-4] + ".idx", ((float(i % 10), Path(f).read_bytes()) for i, f in enumerate(files)))

    results: dict[str, dict[str, list[float]]] = {}
    for kind, data in (("mxnet", rec), ("file", folder)):
        pipe, op, ctx = _reader(kind, data, args.batch)
        packed_fn = op._packed_batch  # noqa: SLF001 - the A/B switch of this benchmark
        r = results[kind] = {k: [] for k in ("reader_packed_ms", "reader_per_sample_ms", "table_packed_ms",
                                             "table_per_sample_ms", "views_of_packed_ms")}
        for _ in range(args.rounds):
            for mode in ("packed", "per_sample"):
                op._packed_batch = packed_fn if mode == "packed" else (lambda c, i: None)  # noqa: SLF001
                for _ in range(3):
                    op.run_batch(ctx, [], {})
                r[f"reader_{mode}_ms"].append(_time(lambda: op.run_batch(ctx, [], {}), args.batches))
                data_tl = op.run_batch(ctx, [], {})[0]
                enc = data_tl.packed if mode == "packed" else list(data_tl)
                assert (enc is not None) if mode == "packed" else True
                r[f"table_{mode}_ms"].append(_time(lambda: host_io.image_info_table(enc), args.batches))
                if mode == "packed":
                    r["views_of_packed_ms"].append(_time(enc.views, args.batches))
        op._packed_batch = packed_fn  # noqa: SLF001
        pipe.shutdown()
    summary = {kind: {k: round(statistics.median(v), 3) for k, v in r.items()} for kind, r in results.items()}
    out = {
        "what": "per-batch host work (ms, median of rounds) of the reader's run_batch and the mixed decoder's "
                "header table, packed vs a tensor per sample, alternating in one process",
        "command": "python bench/packed_readers.py " + " ".join(sys.argv[1:]),
        "machine": f"{platform.node()} ({os.cpu_count()} CPUs, {platform.processor() or platform.machine()}), "
                   f"Python {platform.python_version()}",
        "images": args.images, "batch": args.batch, "rounds": args.rounds,
        "summary": summary, "rounds_ms": results,
    }
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
