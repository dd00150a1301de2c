"""Reader-only throughput of the readers that memory-mapped their files (readers.mxnet,
readers.tfrecord, readers.numpy): ms per batch of the tree on PYTHONPATH, median over rounds.
Run it alternately on two trees to compare (session 36b: mmap copies/views vs pread):

    for r in 1 2 3; do for t in /work/main /work/wt36b; do
      PYTHONPATH=$t python bench/mmap_readers.py --data /tmp/mm_data --tag $t; done; done
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def _make(data: str, n: int, size: int) -> None:
    from torch_dali.io.recordio import write_recordio
    if os.path.exists(os.path.join(data, "done")):
        return
    os.makedirs(os.path.join(data, "npy"), exist_ok=True)
    rng = np.random.default_rng(0)
    blobs = [rng.bytes(size) for _ in range(n)]
    write_recordio(os.path.join(data, "x.rec"), os.path.join(data, "x.idx"),
                   [(float(k), b) for k, b in enumerate(blobs)])
    import struct
    with open(os.path.join(data, "x.tfrecord"), "wb") as f, open(os.path.join(data, "x.tfidx"), "w") as ix:
        for b in blobs:  # tf.train.Example {"d": bytes_list [b]}, CRCs zero (not checked)
            val = b"\x0a" + _varint(len(b)) + b
            blist = b"\x0a" + _varint(len(val)) + val
            feat = b"\x0a" + _varint(len(blist)) + blist  # bytes_list
            key = b"\x0a\x01d"
            entry = key + b"\x12" + _varint(len(feat)) + feat
            feats = b"\x0a" + _varint(len(entry)) + entry
            ex = b"\x0a" + _varint(len(feats)) + feats
            ix.write(f"{f.tell()} {len(ex) + 16}\n")
            f.write(struct.pack("<Q", len(ex)) + b"\0" * 4 + ex + b"\0" * 4)
    for k, b in enumerate(blobs[: n // 4]):
        np.save(os.path.join(data, "npy", f"{k:05d}.npy"), np.frombuffer(b, np.uint8).reshape(-1, 4))
    open(os.path.join(data, "done"), "w").close()


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def _pipe(kind: str, data: str, batch: int):
    from torch_dali import fn, pipeline_def, tfrecord

    @pipeline_def(batch_size=batch, num_threads=2, device_id=None, seed=1, prefetch_queue_depth=1)
    def p():
        if kind == "mxnet":
            return fn.readers.mxnet(path=os.path.join(data, "x.rec"), index_path=os.path.join(data, "x.idx"),
                                    random_shuffle=True)[0]
        if kind == "tfrecord":
            return fn.readers.tfrecord(path=os.path.join(data, "x.tfrecord"), index_path=os.path.join(data, "x.tfidx"),
                                       features={"d": tfrecord.FixedLenFeature((), tfrecord.string, "")},
                                       random_shuffle=True)["d"]
        return fn.readers.numpy(file_root=os.path.join(data, "npy"), random_shuffle=True)
    pipe = p()
    pipe.build()
    return pipe


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--tag", default="")
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--batches", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    _make(a.data, a.n, a.size)
    out = []
    for kind in ("mxnet", "tfrecord", "numpy"):
        pipe = _pipe(kind, a.data, a.batch)
        pipe.run()
        times = []
        for _ in range(a.rounds):
            t = time.perf_counter()
            for _ in range(a.batches):
                out_ = pipe.run()
                o = out_[0] if isinstance(out_, tuple) else out_
                for i in range(len(o)):  # touch each sample (a view of a map is read here)
                    o.at(i)[-1]
            times.append((time.perf_counter() - t) / a.batches * 1e3)
        pipe.shutdown()
        out.append(f"{kind} {statistics.median(times):.2f}")
    print(a.tag, " | ".join(out), "ms/batch", flush=True)


if __name__ == "__main__":
    main()
