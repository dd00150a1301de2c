"""Runs a probe list under one interpreter in child processes, surviving crashes and hangs."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
STALL_S = 60  # one probe taking longer than this is a hang
MEMORY = 6 << 30  # a child's data limit: an op asked for a 2**31-element sample fails, not the machine


def _limit() -> None:
    import resource
    resource.setrlimit(resource.RLIMIT_DATA, (MEMORY, MEMORY))


def _read(path: Path) -> dict[int, dict[str, Any]]:
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                r = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash
            out[r["id"]] = r
    return out


def run_side(python: str, module: str, probes: list[dict[str, Any]], work: Path, label: str,
             path: str = "") -> dict[int, dict]:
    """Every probe's outcome, by id; a child that dies marks the probe it was on `crash`, one that
    stalls `hang`, and the next child starts after it. `path`: another checkout whose torch_dali the
    child imports (to compare before and after a change)."""
    work.mkdir(parents=True, exist_ok=True)
    plist, results = work / "probes.json", work / "results.jsonl"
    plist.write_text(json.dumps(probes))
    results.unlink(missing_ok=True)
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONWARNINGS="ignore", ARG_SWEEP_OURS=path)
    env.pop("PYTHONSTARTUP", None)
    ids = [p["id"] for p in probes]
    done: dict[int, dict] = {}
    pos = 0
    while pos < len(probes):
        cmd = [python, "-m", "conformance.arg_sweep.child", module, str(plist), str(results), str(pos)]
        child = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=open(work / "stderr.txt", "a"), preexec_fn=_limit)
        last, seen = time.time(), len(done)
        while child.poll() is None:
            time.sleep(0.5)
            n = len(_read(results))
            if n != seen:
                last, seen = time.time(), n
            elif time.time() - last > STALL_S:
                child.kill()
                child.wait()
                break
        done = _read(results)
        rc = child.returncode
        nxt = pos
        while nxt < len(probes) and ids[nxt] in done:
            nxt += 1
        if nxt < len(probes) and nxt < pos + 400:  # the child stopped on probe `nxt`
            why = "hang" if rc in (-9,) else "crash"
            done[ids[nxt]] = {"id": ids[nxt], "stage": why, "exc": f"rc={rc}", "bases": [], "msg": ""}
            with open(results, "a") as f:
                f.write(json.dumps(done[ids[nxt]]) + "\n")
            nxt += 1
        pos = nxt
        print(f"[{label}] {pos}/{len(probes)}", file=sys.stderr, flush=True)
    return done
