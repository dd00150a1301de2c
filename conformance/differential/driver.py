"""Runs a case file under one side in child processes, one case at a time with a timeout.

A worker runs cases in order and appends each index to `progress` before it starts; when it hangs
past the timeout (its process group is killed) or dies, that case is recorded as `Timeout` /
`Crash` and a new worker goes on from the next case.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def _last_started(progress: Path) -> int | None:
    if not progress.exists():
        return None
    lines = progress.read_text().split()
    return int(lines[-1]) if lines else None


def _record(out: Path, i: int, error: str, message: str) -> None:
    np.savez(out / f"{i}.npz", meta=np.array(json.dumps({"error": error, "message": message})))


def run_side(side: str, python: str, cases: Path, out: Path, n: int, timeout: float, stir: bool = False) -> None:
    """Fills `out` with `<i>.npz` for every case index below n (results already there are kept);
    `stir`: each case runs after the same op on other data (see `__main__.recheck_dali`)."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), **({"DIFF_STIR": "1"} if stir else {}), "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
           "OMP_NUM_THREADS": "1", "DALI_DISABLE_NVML": "1", "CUDA_VISIBLE_DEVICES": ""}
    progress = out / "progress"
    log = open(out / "worker.log", "ab")
    while True:
        start = next((i for i in range(n) if not (out / f"{i}.npz").exists()), None)
        if start is None:
            return
        progress.write_text("")
        proc = subprocess.Popen([python, "-m", "conformance.differential.worker", side, str(cases), str(out), str(start)],
                                cwd=REPO, env=env, stdout=log, stderr=log, start_new_session=True)
        current, since = None, time.monotonic()
        while proc.poll() is None:
            time.sleep(0.05)
            now = _last_started(progress)
            if now != current:
                current, since = now, time.monotonic()
            if current is None and time.monotonic() - since > 300:
                os.killpg(proc.pid, signal.SIGKILL)
                raise RuntimeError(f"{side} worker did not start a case in 300 s (see {out / 'worker.log'})")
            if current is not None and time.monotonic() - since > timeout and not (out / f"{current}.npz").exists():
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                _record(out, current, "Timeout", f"no result in {timeout:.0f} s")
        if current is not None and not (out / f"{current}.npz").exists():
            _record(out, current, "Crash", f"worker exit status {proc.returncode}")
        elif proc.returncode not in (0, None) and current is None:
            raise RuntimeError(f"{side} worker failed before its first case (see {out / 'worker.log'})")
