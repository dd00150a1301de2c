"""Runs calls that might crash or hang the interpreter in a child process, so a regression fails a
test instead of killing pytest.

`run_isolated("module:function", requests)` calls the function on each JSON request in one child
Python process, in order, and returns each JSON result. A call that kills the child (a signal) or
takes longer than `timeout` seconds gets a `Died` in its place, and the calls after it run in a new
child. `python -m tests._isolate module:function` is the child's side: JSON requests on stdin, one
JSON line per result on stdout.
"""
from __future__ import annotations

import importlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Died:
    """A call that ended its process: killed by a signal, exited, or hung past the timeout."""

    reason: str


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env.setdefault("PYTHONFAULTHANDLER", "1")  # a crash prints the child's stack on its stderr
    return env


def _one_child(target: str, requests: list[Any], timeout: float) -> tuple[list[Any], Died | None, str]:
    """Results in order until the child ends; (results, why it ended early or None, its stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "tests._isolate", target], cwd=ROOT,
                            env=_child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(json.dumps(requests).encode())
    proc.stdin.close()
    results: list[Any] = []
    buf = b""
    deadline = time.monotonic() + timeout + 30  # the first call also pays for the imports
    died: Died | None = None
    while len(results) < len(requests):
        left = deadline - time.monotonic()
        ready = select.select([proc.stdout], [], [], max(left, 0))[0] if left > 0 else []
        if not ready:
            proc.kill()
            died = Died(f"hung: no result within {timeout:.0f} s")
            break
        chunk = os.read(proc.stdout.fileno(), 1 << 16)
        if not chunk:
            code = proc.wait()
            name = signal.Signals(-code).name if code < 0 else f"exit status {code}"
            died = Died(f"the process died ({name})")
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            results.append(json.loads(line))
            deadline = time.monotonic() + timeout
    proc.stdout.close()
    proc.wait()
    err = proc.stderr.read().decode("utf-8", "replace")
    proc.stderr.close()
    return results, died, err


def run_isolated(target: str, requests: list[Any], timeout: float = 60, workers: int = 1) -> list[Any]:
    """Each request's JSON result, or a `Died` for the calls that ended their process. `workers`
    children share the requests (child i takes every `workers`-th from i, in order) when the calls
    are independent."""
    if workers > 1 and len(requests) > 1:
        from concurrent.futures import ThreadPoolExecutor
        k = min(workers, len(requests))
        with ThreadPoolExecutor(k) as pool:
            done = list(pool.map(lambda i: run_isolated(target, requests[i::k], timeout), range(k)))
        out = [None] * len(requests)
        for i, part in enumerate(done):
            out[i::k] = part
        return out
    out: list[Any] = []
    while len(out) < len(requests):
        results, died, err = _one_child(target, requests[len(out):], timeout)
        out += results
        if died is not None:
            lines = err.splitlines()
            fatal = [ln for ln in lines if ln.startswith("Fatal Python error")]
            frames = [ln.strip() for ln in lines if ln.startswith("  File")][:3]
            out.append(Died(" | ".join([died.reason] + fatal[:1] + frames)))
    return out


def _main(target: str) -> None:
    module, func = target.split(":")
    fn = importlib.import_module(module).__dict__[func]
    for request in json.loads(sys.stdin.read()):
        sys.stdout.write(json.dumps(fn(request)) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _main(sys.argv[1])
