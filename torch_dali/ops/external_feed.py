"""What `pipe.feed_input()` queued for an external source without a `source`: one queue per output.

DALI makes one input operator per output of `external_source(num_outputs=k)`, so each output can
be fed on its own (`pipe.feed_input(outputs[1], batch)`), and an output no pipeline output needs is
pruned: it is never fed and never asked for. Here the op keeps its k outputs and a queue for each;
feeding the op by name takes a tuple of k batches (one per output), feeding one output's DataNode
takes that output's batch. An iteration takes one batch from the queue of every output the
pipeline uses.
"""
from __future__ import annotations

import collections
import threading
from typing import Any

from ..errors import DataError


class FeedQueues:
    """Per-output queues of (batch, layout) fed ahead of the iterations that take them."""

    def __init__(self, k: int, repeat_last: bool) -> None:
        self.k = k
        self.repeat_last = repeat_last
        self.used: set[int] = set(range(k))
        self._queues: list[collections.deque] = [collections.deque() for _ in range(k)]
        self._last: list[Any] = [None] * k
        self._lock = threading.Lock()

    def put(self, output: int, raw: Any, layout: str | None) -> None:
        with self._lock:
            self._queues[output].append((raw, layout))

    def take(self, where: str, name: str) -> list[tuple[Any, str | None] | None]:
        """One iteration's batch of each used output (None for outputs nothing reads)."""
        with self._lock:
            missing = [k for k in sorted(self.used) if not self._queues[k]
                       and not (self.repeat_last and self._last[k] is not None)]
            if missing:
                what = "" if self.k == 1 else f" for output{'s' if len(missing) > 1 else ''} " \
                                              f"{', '.join(map(str, missing))}"
                raise DataError(f"{where}: no data was fed{what}; call pipe.feed_input('{name}', batch) "
                                "before each pipe.run(), or give the external source a `source`")
            items: list[tuple[Any, str | None] | None] = []
            for k in range(self.k):
                if k not in self.used:
                    items.append(None)
                    continue
                if self._queues[k]:
                    self._last[k] = self._queues[k].popleft()
                items.append(self._last[k])
            return items
