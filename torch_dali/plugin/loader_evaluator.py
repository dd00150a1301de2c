"""`nvidia.dali.plugin.pytorch.loader_evaluator`: LoaderEvaluator wraps any iterable loader (a
torch DataLoader, a DALI iterator) to time it ("log") or to stand in for an ideal, zero-cost loader
("replay"). Behaviour as DALI 2.4's:

* "replay" goes through the whole wrapped loader once, at construction, and keeps its last
  `num_cached_batches` batches; each epoch then yields `len(loader)` batches, cycling through the
  kept ones. With nothing kept (an empty loader, or `num_cached_batches=0`) iterating raises
  RuntimeError.
* "log" (and any other mode string) iterates the wrapped loader, timing each `next()`.
* `len()` is the wrapped loader's; `get_metrics()` is {} before any batch, else a dict of the
  mode, batch count and times; `save_metrics(path)` writes it as JSON; `print_summary()` prints it.
"""
from __future__ import annotations

import collections
import json
import time
from typing import Any, Iterator


class LoaderEvaluator:
    def __init__(self, dataloader: Any, mode: str = "log", num_cached_batches: int = 20,
                 metrics_file: str | None = None) -> None:
        self.dataloader = dataloader
        self.mode = mode
        self.num_cached_batches = num_cached_batches
        self.metrics_file = metrics_file
        self.cached_batches: collections.deque = collections.deque(maxlen=num_cached_batches)
        self.cache_ready = False
        self.batch_times: list[float] = []
        self.start_time: float | None = None
        self.end_time: float | None = None
        if mode == "replay":
            self._fill_cache()

    def __len__(self) -> int:
        return len(self.dataloader)

    def __iter__(self) -> Iterator[Any]:
        return self._replay() if self.mode == "replay" else self._timed()

    def _fill_cache(self) -> None:
        self.cached_batches.clear()
        for batch in self.dataloader:
            self.cached_batches.append(batch)
        self.cache_ready = len(self.cached_batches) > 0

    def _timed(self) -> Iterator[Any]:
        self.batch_times = []
        self.start_time = time.time()
        it = iter(self.dataloader)
        while True:
            t0 = time.time()
            try:
                batch = next(it)
            except StopIteration:
                break
            self.batch_times.append(time.time() - t0)
            yield batch
        self.end_time = time.time()

    def _replay(self) -> Iterator[Any]:
        if not self.cache_ready or not self.cached_batches:
            raise RuntimeError("LoaderEvaluator: replay mode has no cached batches (the wrapped loader gave none, "
                               "or num_cached_batches is 0)")
        self.batch_times = []
        self.start_time = time.time()
        kept = len(self.cached_batches)
        for i in range(len(self.dataloader)):
            t0 = time.time()
            batch = self.cached_batches[i % kept]
            self.batch_times.append(time.time() - t0)
            yield batch
        self.end_time = time.time()

    def get_metrics(self) -> dict[str, Any]:
        if not self.batch_times:
            return {}
        times = self.batch_times
        total = self.end_time - self.start_time if self.start_time and self.end_time else 0
        return {"mode": self.mode, "total_batches": len(times), "total_time": total,
                "avg_batch_time": sum(times) / len(times), "min_batch_time": min(times),
                "max_batch_time": max(times), "batch_times": list(times),
                "cached_batches": len(self.cached_batches), "cache_ready": self.cache_ready}

    def save_metrics(self, filename: str | None = None) -> None:
        path = filename if filename is not None else self.metrics_file
        if path is None:
            print("LoaderEvaluator: no file name given for the metrics")
            return
        with open(path, "w") as f:
            json.dump(self.get_metrics(), f, indent=2)
        print(f"LoaderEvaluator: metrics written to {path}")

    def print_summary(self) -> None:
        m = self.get_metrics()
        lines = ["LoaderEvaluator summary:", f"  mode: {self.mode}"]
        dataset = getattr(self.dataloader, "dataset", None)
        if dataset is not None:
            lines.append(f"  dataset size: {len(dataset)}")
        lines += [f"  batches per epoch: {len(self.dataloader)}",
                  f"  cached: {len(self.cached_batches)}/{self.num_cached_batches} (ready: {self.cache_ready})"]
        if m:
            lines += [f"  batches timed: {m['total_batches']}", f"  total time: {m['total_time']:.2f}s",
                      f"  batch time avg/min/max: {m['avg_batch_time']:.4f}s / {m['min_batch_time']:.4f}s / "
                      f"{m['max_batch_time']:.4f}s"]
        print("\n".join(lines))
