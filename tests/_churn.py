"""Shared by the CPU and GPU lifecycle tests: build, run and drop many pipelines."""
from __future__ import annotations

import gc
import threading
import time
from typing import Any, Callable


def churn(make: Callable[[], Any], baseline: Callable[[], Any] = lambda: None, times: int = 50,
          settle_s: float = 10.0) -> tuple[int, Any]:
    """Builds, runs once and drops `times` pipelines (every other one shut down explicitly, the rest
    only dropped), after a warm-up one; waits up to `settle_s` for their threads to end. Returns
    the thread count and `baseline()` taken after the warm-up, for the caller to compare with
    the state afterwards."""
    p = make()
    p.build()
    p.run()
    p.shutdown()
    del p
    gc.collect()
    threads0, base = threading.active_count(), baseline()
    for k in range(times):
        p = make()
        p.build()
        p.run()
        if k % 2:
            p.shutdown()
        del p
    gc.collect()
    deadline = time.time() + settle_s
    while threading.active_count() > threads0 and time.time() < deadline:
        time.sleep(0.05)
    return threads0, base
