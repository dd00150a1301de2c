"""What the executor measures and reports about itself: how long a stop waits, when a stalled
pipeline prints its threads, per-stage timing, the bytes batches hold."""
from __future__ import annotations

import faulthandler
import sys
import threading
import time

from .. import _knobs
from ..errors import PipelineError
from ..io import nvjpeg
from ..ops.python_function import ending_threads
from ..tensor_list import TensorList


def stop_timeout_s() -> float:
    """TORCH_DALI_STOP_TIMEOUT_S: how long stopping a pipeline waits for a running op."""
    return _knobs.get("TORCH_DALI_STOP_TIMEOUT_S")


def add_times(tm: list[float], t0: float, t1: float, t2: float) -> None:
    tm[0] += t1 - t0
    tm[1] += t2 - t1
    tm[2] += time.perf_counter() - t2
    tm[3] += 1


def stall_dump_s() -> float:
    """TORCH_DALI_STALL_DUMP_S: seconds without a batch before the stacks are printed (0: never)."""
    v = _knobs.get("TORCH_DALI_STALL_DUMP_S")
    return v if v > 0 else float("inf")


def dump_stall(waited: float, handed: int = 0) -> None:
    """A pipeline that stops delivering should say where it is stuck, not hang silently: every
    thread's stack to stderr, once per wait (the wait goes on; a slow first build is not an error)."""
    print(f"torch_dali: no batch for {waited:.0f} s, after {handed} batches; the threads are at "
          "(TORCH_DALI_STALL_DUMP_S sets when this is printed):", file=sys.stderr, flush=True)
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    for line in nvjpeg.activity_lines():  # native threads, which the stacks above cannot show
        print("torch_dali: " + line, file=sys.stderr, flush=True)


def no_batch_error(timeout: float, running_ops: list[str]) -> PipelineError:
    """The error of a wait past the caller's `timeout`: the ops still running and where the
    decoders' native threads are."""
    return PipelineError(f"torch_dali: no batch within timeout={timeout:g} s; "
                         + ("running: " + "; ".join(running_ops) if running_ops else "no op is running")
                         + "".join("; " + ln for ln in nvjpeg.activity_lines()))


def tensor_bytes(tls: list[TensorList]) -> tuple[int, int]:
    """(host, device) bytes held by these batches."""
    host = dev = 0
    for tl in tls:
        for t in ([tl.dense] if tl.dense is not None else tl.samples):
            n = t.numel() * t.element_size()
            if t.is_cuda:
                dev += n
            else:
                host += n
    return host, dev


def memory_report(prefetched: list[list[TensorList]], staged: list[list[TensorList]], threads: int) -> dict[str, int]:
    """`Executor.memory_stats()`: the batches ready for the consumer and those between stages (each
    batch as its TensorLists), with their bytes, and the executor's live threads."""
    host, dev = tensor_bytes([tl for b in prefetched for tl in b])
    s_host, s_dev = tensor_bytes([tl for p in staged for tl in p])
    return {"prefetched_batches": len(prefetched), "prefetched_host_bytes": host,
            "prefetched_device_bytes": dev, "staged_batches": len(staged), "staged_host_bytes": s_host,
            "staged_device_bytes": s_dev, "threads": threads}


# Threads stopping gave up on, and build-time set-up threads (`Operator.prepare`). At interpreter
# exit they get one more stop timeout to finish: a
# native torch call still running in one while the interpreter tears down aborts the process
# ("terminate called without an active exception", exit 134), where waiting a little lets a slow
# op return and the process exit cleanly. One stuck for good is left as it is.
_LEFT_RUNNING: list[threading.Thread] = []
_EXIT_WAIT_MAX_S = 30.0


def leave_running(threads: list[threading.Thread]) -> None:
    """Threads the exit handler waits for (bounded); those that ended are forgotten here."""
    _LEFT_RUNNING[:] = [t for t in _LEFT_RUNNING if t.is_alive()]
    _LEFT_RUNNING.extend(t for t in threads if t not in _LEFT_RUNNING)


def wait_for_left_running() -> None:
    """At exit (the executor's shutdown of all pipelines): one more stop timeout, in all, for the threads left running."""
    deadline = time.monotonic() + min(stop_timeout_s(), _EXIT_WAIT_MAX_S)
    for t in [*_LEFT_RUNNING, *ending_threads()]:  # python_function's timeout watchers too
        t.join(timeout=max(0.0, deadline - time.monotonic()))
