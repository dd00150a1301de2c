"""Per-op time of a plan run step by step (what `torch-dali bench` prints as its per-op profile).

A plan with `time_ops()` on records, for each op, the seconds it took: a batch step is timed as a
whole, with the GPU waited for before and after it (so its kernels count, not just their launch);
a fused pair's step counts for the op whose outputs it leaves; a chain of per-sample CPU ops, whose
samples run on several threads at once, is timed as one step and its wall time split between its
ops in proportion to the time each spent on its samples."""
from __future__ import annotations

import threading
from typing import Callable, Iterable


class OpTimes:
    """Seconds per op name since the last `reset()`."""

    def __init__(self, names: Iterable[str], sync: Callable[[], None]) -> None:
        self.seconds: dict[str, float] = {name: 0.0 for name in names}
        self.sync = sync  # waits for the device's queued work (a no-op without CUDA)
        self._sample = dict.fromkeys(self.seconds, 0.0)
        self._lock = threading.Lock()

    def reset(self) -> None:
        for name in self.seconds:
            self.seconds[name] = 0.0

    def add_step(self, name: str, seconds: float) -> None:
        """A batch step (or a fused pair, under the op whose outputs it leaves)."""
        self.seconds[name] += seconds

    def add_sample(self, name: str, seconds: float) -> None:
        """One op's work on one sample of a chain (from any worker thread)."""
        with self._lock:
            self._sample[name] += seconds

    def sample_totals(self, names: Iterable[str]) -> dict[str, float]:
        with self._lock:
            return {name: self._sample[name] for name in names}

    def add_chain(self, before: dict[str, float], wall: float) -> None:
        """A chain's wall time, split by the per-sample time its ops added since `before`."""
        spent = {name: t - before[name] for name, t in self.sample_totals(before).items()}
        total = sum(spent.values()) or 1.0
        for name, s in spent.items():
            self.seconds[name] += wall * s / total
