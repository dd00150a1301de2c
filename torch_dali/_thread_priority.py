"""Scheduling priority of the loader's own threads (TORCH_DALI_THREAD_NICE).

A training loop's Python thread issues its GPU kernels one by one; when every core is busy with the
loader's workers (a batch's decode, reads and per-sample ops start on all of them at once), the
scheduler may leave it waiting, and the GPU idles between its kernels. A higher nice value on the
loader's threads lets the training thread take a core first. On Linux nice is per thread, and a
thread inherits it from the thread that starts it (the C++ decoder's workers too)."""
from __future__ import annotations

import os
import sys
import threading

from . import _knobs


def lower_this_thread() -> None:
    """Sets this thread's nice value to the process's plus TORCH_DALI_THREAD_NICE (never lower than
    it is). Linux only; never raises (raising a nice value needs no privilege)."""
    n = _knobs.get("TORCH_DALI_THREAD_NICE")
    if n <= 0 or not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        target = min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + n)
        if os.getpriority(os.PRIO_PROCESS, tid) < target:
            os.setpriority(os.PRIO_PROCESS, tid, target)
    except OSError:
        pass
