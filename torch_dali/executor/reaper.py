"""Dropping a stage's dead batches on a thread of their own (TORCH_DALI_REAPER).

PyTorch releases the GIL while it destroys a tensor (its Python object's clear, so that freeing
memory never waits under the GIL). A batch of 256 per-sample tensors freed on a stage thread is then
256 short releases, and each can let another thread take the GIL for up to Python's switch interval
(5 ms) before the stage thread gets it back: measured with bench/diag/gil_releases.py, the GPU
stage's waits for the GIL were mostly at the line where the decoded batch died. Handed here, the
releases happen on a thread nobody waits for."""
from __future__ import annotations

import os
import queue
import threading
from typing import Any

from .. import _knobs
from .._thread_priority import lower_this_thread

_lock = threading.Lock()
_state: dict[str, Any] = {"pid": None, "queue": None}


def enabled() -> bool:
    return bool(_knobs.get("TORCH_DALI_REAPER"))


def drop(obj: Any) -> None:
    """Hands the caller's reference to `obj` to the reaper thread (with the knob off, or nothing to
    drop, the reference simply goes when the caller's does)."""
    if obj is None or not enabled():
        return
    _queue().put(obj)


def flush(timeout: float = 5.0) -> bool:
    """Waits until everything handed over so far has been dropped (True), or `timeout` passed."""
    q = _state["queue"]
    if q is None or _state["pid"] != os.getpid():
        return True
    done = threading.Event()
    q.put(done)
    return done.wait(timeout)


def _queue() -> "queue.SimpleQueue[Any]":
    if _state["pid"] == os.getpid():  # a forked child starts its own (the parent's thread is not there)
        return _state["queue"]
    with _lock:
        if _state["pid"] != os.getpid():
            q: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
            threading.Thread(target=_run, args=(q,), name="torch_dali-reaper", daemon=True).start()
            _state["queue"], _state["pid"] = q, os.getpid()
    return _state["queue"]


def _run(q: "queue.SimpleQueue[Any]") -> None:
    lower_this_thread()
    while True:
        obj = q.get()
        if isinstance(obj, threading.Event):
            obj.set()
        del obj  # the last reference, often: the tensors die here, on this thread
