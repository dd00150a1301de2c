"""Who holds the GIL: a summary of `py-spy record --gil --threads -f raw` output (each line one
stack of the thread that held the GIL when sampled, then its count). Threads are grouped by what
they run (the main thread, the executor's stage threads, the worker pool, others); per group: its
share of the GIL samples and the lines that held it most (own time) and the torch_dali functions
under which it was held (inclusive). Stacks inside an import (start-up) are left out. Used by
bench/diag/feed_gil.sh.

    python bench/diag/gil_summary.py RAW [--top N]
"""
from __future__ import annotations

import argparse
import collections
import re

_THREAD = re.compile(r"^thread \((\w+)\): ?([^;]*)")


def group(frames: list[str], name: str) -> str:
    if name == "MainThread":
        return "main (training loop, iterator)"
    joined = ";".join(frames)
    if "Executor._loop" in joined:
        return "executor stage threads"
    if "concurrent/futures/thread.py" in joined or "_worker" in joined:
        return "worker pool (per-sample ops)"
    return "other threads"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    total = 0
    per_group: collections.Counter[str] = collections.Counter()
    own: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    inclusive: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for line in open(a.raw, encoding="utf-8", errors="replace"):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        frames = stack.split(";")
        m = _THREAD.match(frames[0]) if frames else None
        name = m.group(2).strip() if m else ""
        if m:
            frames = frames[1:]
        if any("importlib._bootstrap" in f for f in frames):
            continue  # start-up: modules being imported, not the steady state
        g = group(frames, name)
        total += n
        per_group[g] += n
        if frames:
            own[g][frames[-1]] += n
        for f in set(frames):
            if "torch_dali/" in f:
                inclusive[g][f] += n
    print(f"GIL samples: {total}")
    for g, n in per_group.most_common():
        print(f"\n== {g}: {n / max(total, 1) * 100:.1f}% of the GIL samples")
        print("   held at (own):")
        for f, k in own[g].most_common(a.top):
            print(f"   {k / max(total, 1) * 100:5.1f}%  {f[:150]}")
        print("   under (torch_dali, inclusive):")
        for f, k in inclusive[g].most_common(a.top):
            print(f"   {k / max(total, 1) * 100:5.1f}%  {f[:150]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
