"""Per CUDA stream, what ran on the GPU in an Nsight Systems capture (its SQLite export), and how
the busiest stream (the training's) spent its steady part: kernel time, idle gaps between its
kernels, and the other streams' kernel time that overlapped it. Splits a feed loss into the
loader's GPU work (overlap grows the training kernels) and host-side delays (gaps grow).

    python bench/diag/nsys_streams.py CAPTURE.sqlite [label]     (one JSON line)
"""
from __future__ import annotations

import json
import sqlite3
import sys
from collections import defaultdict


def _rows(db: sqlite3.Connection, table: str, cols: str) -> list[tuple]:
    try:
        return db.execute(f"SELECT {cols} FROM {table}").fetchall()
    except sqlite3.OperationalError:
        return []


def _union(iv: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Total length of the intersection of two sorted disjoint interval lists."""
    i = j = tot = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        tot += max(0, e - s)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tot


_BINS_US = (5, 20, 100, 1000, 10000)


def _gap_hist(gaps: list[int]) -> dict[str, list[float]]:
    """{"<5": [count, total ms], "5-20": ..., ">10000": ...} of gaps given in ns."""
    edges = (0,) + _BINS_US + (float("inf"),)
    out: dict[str, list[float]] = {}
    for lo, hi in zip(edges, edges[1:]):
        sel = [g for g in gaps if lo * 1e3 <= g < hi * 1e3]
        key = f"<{hi}" if lo == 0 else (f">{lo}" if hi == float("inf") else f"{lo}-{hi}")
        out[key] = [len(sel), round(sum(sel) / 1e6, 2)]
    return out


def analyse(kern: list[tuple[int, int, int, str]], copies: list[tuple[int, int, int, int, int]],
            label: str) -> dict:
    """kern: (start ns, end ns, stream, name); copies: (start ns, end ns, stream, bytes, kind)."""
    by_stream: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for s, e, st, nm in kern:
        by_stream[st].append((s, e, nm))
    train = max(by_stream, key=lambda k: sum(e - s for s, e, _ in by_stream[k]))
    tk = sorted(by_stream[train])
    t0 = tk[len(tk) // 4][0]  # the steady part: past the first quarter of the training's kernels
    t1 = tk[-1][1]
    win = t1 - t0
    tr = _union([(s, e) for s, e, _ in tk if s >= t0])
    busy = sum(e - s for s, e in tr)
    gaps = [tr[i + 1][0] - tr[i][1] for i in range(len(tr) - 1)]
    holes = [(tr[i][1], tr[i + 1][0]) for i in range(len(tr) - 1) if tr[i + 1][0] - tr[i][1] > 1e5]
    streams = {}
    for st, ks in by_stream.items():
        inwin = [(s, e, n) for s, e, n in ks if s >= t0 and e <= t1]
        iv = _union([(s, e) for s, e, _ in inwin])
        per_name: dict[str, int] = defaultdict(int)
        for s, e, n in inwin:
            per_name[n] += e - s
        streams[str(st)] = {
            "kernels": len(inwin), "kernel_ms": round(sum(e - s for s, e, _ in inwin) / 1e6, 2),
            "overlaps_training_ms": round(_overlap(iv, tr) / 1e6, 2) if st != train else None,
            # busy while the training stream sat idle >100 us: work the training may have waited on
            "in_training_holes_ms": round(_overlap(iv, holes) / 1e6, 2) if st != train else None,
            "top": [[n[:70], round(v / 1e6, 2)] for n, v in sorted(per_name.items(), key=lambda x: -x[1])[:6]],
        }
    cp: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    cp_iv: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for s, e, st, nb, kind in copies:
        if s >= t0 and e <= t1:
            cp_iv[st].append((s, e))
            c = cp[f"{st}/kind{kind}"]
            c[0] += 1
            c[1] += nb / 2**20
            c[2] += (e - s) / 1e6
    return {
        "label": label,
        "window_ms": round(win / 1e6, 1), "training_stream": train,
        "training_busy_ms": round(busy / 1e6, 1), "training_idle_ms": round((win - busy) / 1e6, 1),
        "idle_gaps": {"n": len(gaps), "over_100us": sum(g > 1e5 for g in gaps),
                      "over_100us_ms": round(sum(g for g in gaps if g > 1e5) / 1e6, 2),
                      "max_ms": round(max(gaps, default=0) / 1e6, 2)},
        # idle time by gap length: many short gaps grown a little (the host issuing kernels only
        # just in time) read differently from a few long ones (a wait for a batch, a held GIL)
        "idle_by_gap_us": _gap_hist(gaps),
        "streams": dict(sorted(streams.items(), key=lambda kv: -kv[1]["kernel_ms"])),
        "copies": {k: {"n": v[0], "MiB": round(v[1], 1), "ms": round(v[2], 2)} for k, v in cp.items()},
        "copies_in_training_holes_ms": {str(k): round(_overlap(_union(v), holes) / 1e6, 2) for k, v in cp_iv.items()},
    }


def main() -> None:
    db = sqlite3.connect(sys.argv[1])
    names = dict(_rows(db, "StringIds", "id, value"))
    kern = [(s, e, st, names.get(nm, str(nm)))
            for s, e, st, nm in _rows(db, "CUPTI_ACTIVITY_KIND_KERNEL", "start, end, streamId, shortName")]
    copies = _rows(db, "CUPTI_ACTIVITY_KIND_MEMCPY", "start, end, streamId, bytes, copyKind")
    print(json.dumps(analyse(kern, copies, sys.argv[2] if len(sys.argv) > 2 else sys.argv[1])))


if __name__ == "__main__":
    main()
