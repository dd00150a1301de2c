"""External source data fetched on the thread that calls `pipe.run()`, as DALI does.

DALI calls a (non-parallel) external source's `source` in the Python thread that runs the
pipeline: the first `run()` calls it for `prefetch_queue_depth` iterations, each later `run()` for
one more. Code that shares state with its source (NumPy's global random state, a counter, a
thread-local) sees the same interleaving here: the executor's consumer asks each such source to
fetch ahead (`ExternalSource.pump`) before it waits for a batch, and the op, running on the
producer thread, takes what was fetched in order (`take`), waiting for it when it ran ahead.
An error the source raises reaches the caller of `run()` as it was raised.
"""
from __future__ import annotations

import collections
import threading
from typing import Any

from ..errors import PipelineError

END = object()  # the source ran out: the op raises StopIteration when it reaches this
_POLL_S = 0.1


class Ahead:
    """What was fetched for iterations the producer has not run yet: (raw data or END, the source's
    position after it)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.fetched = 0  # iterations fetched since the last clear
        self.ended = False  # END was fetched: fetch no more until cleared
        self._items: collections.deque = collections.deque()
        self._cv = threading.Condition()
        self._halt = threading.Event()  # replaced by the executor's stop event (`watch`)

    def put(self, raw: Any, position: tuple[int, int, int]) -> None:
        with self._cv:
            self._items.append((raw, position))
            self.fetched += 1
            self.ended = self.ended or raw is END
            self._cv.notify_all()

    def take(self) -> tuple[Any, tuple[int, int, int]]:
        """The next fetched iteration, waiting for the consumer to fetch it; a stopping executor
        ends the wait."""
        with self._cv:
            while not self._items:
                if self._halt.is_set():
                    raise PipelineError(f"{self.where}: the pipeline stopped while waiting for data")
                self._cv.wait(_POLL_S)
            return self._items.popleft()

    def clear(self) -> None:
        with self._cv:
            self._items.clear()
            self.fetched = 0
            self.ended = False

    def watch(self, stop: threading.Event) -> None:
        """A wait in `take` ends (with an error) once `stop` is set: the executor is stopping."""
        self._halt = stop
