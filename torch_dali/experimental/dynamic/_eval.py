"""Evaluation state of the dynamic mode: `EvalMode` (when work runs), `EvalContext` (threads and
device for the ops in a `with` block), `ThreadPool`, the global thread count, and `Stream`.

torch_dali runs every dynamic-mode op when it is called (each is a cached one-op pipeline, see
torch_dali.eager), so all four modes compute the same results at the same time; the modes are kept
so that DALI code that selects one runs unchanged. Streams: _stream.py."""
from __future__ import annotations

import enum
import os
import threading
from typing import Any

import torch

from . import _stream as S
from ._stream import (Stream, get_current_stream, get_default_stream, set_current_stream,  # noqa: F401
                      set_default_stream, stream)

__all__ = ["EvalMode", "EvalContext", "ThreadPool", "Stream", "get_num_threads", "set_num_threads", "stream",
           "get_default_stream", "set_default_stream", "get_current_stream", "set_current_stream"]


class EvalMode(enum.Enum):
    """When ops run (DALI: deferred < eager < sync_cpu < sync_full). Here every mode evaluates at
    the call; `with ndd.EvalMode.deferred:` selects one for a block."""

    deferred = 1
    eager = 2
    sync_cpu = 3
    sync_full = 4
    default = 2  # an alias of eager

    def __enter__(self) -> "EvalMode":
        _stack("modes", [EvalMode.eager]).append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _stack("modes", [EvalMode.eager]).pop()

    @staticmethod
    def current() -> "EvalMode":
        return _stack("modes", [EvalMode.eager])[-1]


_tls = threading.local()


def _stack(name: str, initial: list[Any]) -> list[Any]:
    if not hasattr(_tls, name):
        setattr(_tls, name, list(initial))
    return getattr(_tls, name)


_num_threads: int | None = None


def get_num_threads() -> int:
    """Threads the ops use unless a context says otherwise: what `set_num_threads` set, else the
    CPUs this process may run on (as DALI 2.4)."""
    if _num_threads is not None:
        return _num_threads
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def set_num_threads(n: int | None) -> None:
    global _num_threads
    if n is not None and int(n) < 1:
        raise ValueError(f"set_num_threads: needs a positive number, got {n}")
    _num_threads = None if n is None else int(n)


def _default_device_id() -> int | None:
    return torch.cuda.current_device() if torch.cuda.is_available() else None


class ThreadPool:
    """A pool of `num_threads` worker threads for the ops of an EvalContext; `device_id` is the GPU
    it serves (None where there is no CUDA)."""

    def __init__(self, num_threads: int | None = None, device_id: int | None = None) -> None:
        if num_threads is not None and int(num_threads) < 1:
            raise ValueError(f"ThreadPool: needs at least one thread, got {num_threads}")
        self._num_threads = None if num_threads is None else int(num_threads)
        self._device_id = device_id if device_id is not None else _default_device_id()

    @property
    def num_threads(self) -> int:
        """Its thread count; a pool made without one follows `set_num_threads`."""
        return self._num_threads if self._num_threads is not None else get_num_threads()

    @property
    def device_id(self) -> int | None:
        return self._device_id


class EvalContext:
    """The threads and device the ops in a `with EvalContext(...):` block use. Outside any block,
    `EvalContext.current()` is the default context (the global thread count, the current CUDA device
    or None without CUDA)."""

    def __init__(self, *, num_threads: int | None = None, device_id: int | None = None,
                 cuda_stream: Any = None, thread_pool: ThreadPool | None = None, **_unused: Any) -> None:
        self._cuda_stream = (S.stream(stream=cuda_stream, device_id=device_id) if cuda_stream is not None
                             else S.thread_stream())
        if device_id is not None and not torch.cuda.is_available():
            device_id = None  # no CUDA: ops run on the CPU
        self._device_id = device_id if device_id is not None else _default_device_id()
        self._thread_pool = thread_pool or ThreadPool(num_threads, self._device_id)
        self._owner: int | None = None  # the thread it is active in (as in DALI: one at a time)
        self._depth = 0
        self._guard = threading.Lock()
        self._checkpoint: Any = None

    @property
    def device_id(self) -> int | None:
        return self._device_id

    @property
    def num_threads(self) -> int:
        return self._thread_pool.num_threads

    @property
    def thread_pool(self) -> ThreadPool:
        return self._thread_pool

    @property
    def cuda_stream(self) -> Stream | None:
        """The stream this context's GPU ops run on: the one it was made with (or the thread's current
        stream then), for the default context the thread's current stream, else the default stream set
        for its device, else torch's current stream (None without CUDA)."""
        s = self.op_stream()
        if s is None and self._device_id is not None:
            s = S.stream(stream=torch.cuda.current_stream(self._device_id))
        return s

    def op_stream(self) -> Stream | None:
        """The stream set for this context's GPU ops, or None: torch's current stream."""
        s = self._cuda_stream
        if s is None and self is EvalContext._default:
            s = S.thread_stream()
        if s is None and self._device_id is not None:
            s = S.get_default_stream(self._device_id)
        return s

    @property
    def checkpoint(self) -> Any:
        """This context's `ndd.checkpoint.Checkpoint` (made at the first use)."""
        if self._checkpoint is None:
            from .checkpoint import Checkpoint

            self._checkpoint = Checkpoint()
        return self._checkpoint

    def evaluate_all(self) -> None:
        """Waits for this context's pending work: none here (ops run at the call)."""

    def __enter__(self) -> "EvalContext":
        me = threading.get_ident()
        with self._guard:
            if self._owner not in (None, me):
                raise RuntimeError("This EvalContext is already active in another thread; a context is active "
                                   "in one thread at a time (make one EvalContext per thread)")
            self._owner = me
            self._depth += 1
        _stack("contexts", []).append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _stack("contexts", []).pop()
        with self._guard:
            self._depth -= 1
            if self._depth == 0:
                self._owner = None

    @staticmethod
    def current() -> "EvalContext":
        stack = _stack("contexts", [])
        return stack[-1] if stack else EvalContext.default()

    _default: "EvalContext | None" = None

    @staticmethod
    def default() -> "EvalContext":
        if EvalContext._default is None:
            ctx = EvalContext()
            ctx._cuda_stream = None  # its stream is each thread's current one (op_stream)
            EvalContext._default = ctx
        return EvalContext._default
