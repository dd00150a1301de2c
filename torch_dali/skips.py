"""Bad data with `on_error="skip"`: what was left out, and why.

Readers (`readers.file`, `readers.mxnet`) and `decoders.image*` take `on_error`: "raise" (the
default: the error names the file or record and what is wrong) or "skip" (the sample is left out
and the batch is refilled from the following samples). Every skip is logged as a `Skip`
(op, source, reason), once per distinct sample and reason; `skipped(pipe)` lists them.
"""
from __future__ import annotations

import os
import threading
from typing import Any, NamedTuple


class Skip(NamedTuple):
    """One sample left out: the op that found the problem, the sample (file or record), why."""

    op: str
    source: str
    reason: str


class SkipLog:
    """Thread-safe, ordered, de-duplicated record of skipped samples."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[Skip, None] = {}

    def add(self, op: str, source: str, reason: str) -> None:
        with self._lock:
            self._items.setdefault(Skip(op, printable(source), printable(reason)), None)

    def items(self) -> list[Skip]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        return len(self._items)


def printable(text: str) -> str:
    """`text` with undecodable file-name bytes (surrogate escapes) shown as `\\xNN`, so error
    messages and logs can be printed whatever the file names hold."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")


def skipped(pipe: Any) -> list[Skip]:
    """Every sample `pipe` left out so far (builds the pipeline if needed), in plan order: what
    `pipe.skipped()` gives."""
    return pipe.skipped()
