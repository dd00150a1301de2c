"""TORCH_DALI_THREAD_NICE: the loader's threads run at a higher nice value than the process (so a
training thread gets a core first), threads they start inherit it, and 0 leaves every thread as it
was (torch_dali/_thread_priority.py). Each case runs in a child process: a nice value once raised
cannot be lowered again without privileges."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")

CHILD = textwrap.dedent("""
    import json, os, threading
    import numpy as np
    from torch_dali import fn, pipeline_def
    from torch_dali._thread_priority import lower_this_thread

    def nice():
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    seen = {}

    def probe(x):
        seen.setdefault("python_function", nice())
        return x

    def started_by_a_lowered_thread():
        out = {}
        def inner():
            out["child"] = nice()
        def outer():
            lower_this_thread()
            out["self"] = nice()
            t = threading.Thread(target=inner); t.start(); t.join()
        t = threading.Thread(target=outer); t.start(); t.join()
        return out

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1)
    def pipe():
        x = fn.random.uniform(range=[0, 1], shape=[8])
        x = fn.python_function(x, function=probe)
        return x

    p = pipe(); p.build(); p.run()
    workers = list(p.executor.plan.pool.submit(nice).result() for _ in range(4))
    print(json.dumps({"main": nice(), "workers": workers, **seen, **started_by_a_lowered_thread()}))
""")


def _run(knob: str | None) -> dict:
    import json
    env = {k: v for k, v in os.environ.items() if k != "TORCH_DALI_THREAD_NICE"}
    if knob is not None:
        env["TORCH_DALI_THREAD_NICE"] = knob
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_loader_threads_are_niced_and_their_children_inherit() -> None:
    base = os.getpriority(os.PRIO_PROCESS, 0)
    want = min(19, base + 5)
    got = _run("5")
    assert got["main"] == base  # the user's (training) thread keeps its priority
    assert set(got["workers"]) == {want}
    assert got["python_function"] == want
    assert got["self"] == want and got["child"] == want


def test_zero_leaves_every_thread_alone() -> None:
    base = os.getpriority(os.PRIO_PROCESS, 0)
    got = _run(None)
    assert got["main"] == base and set(got["workers"]) == {base}
    assert got["python_function"] == base and got["self"] == base and got["child"] == base
