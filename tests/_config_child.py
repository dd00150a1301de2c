"""Runs YAML configs through every way in (load, check, `torch-dali validate`, `torch-dali run`) in one
child process with a timeout and a memory cap: a config that hangs, exhausts memory, exits or kills
its process fails the tests that use it, not the test run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MEMORY_CAP = 4 << 30  # bytes of heap the child may use

_CHILD = r"""
import contextlib, io, json, resource, sys, time, traceback
resource.setrlimit(resource.RLIMIT_DATA, (int(sys.argv[2]), int(sys.argv[2])))
from torch_dali import configs
from torch_dali.cli import main
from torch_dali.pipeline import Pipeline

def flags(case):
    out = []
    for m in case.get("allow_modules", []):
        out += ["--allow-module", m]
    for f in case.get("allow_functions", []):
        out += ["--allow-function", f]
    return out

def load(case):
    kw = {k: case[k] for k in ("allow_modules", "allow_functions") if k in case}
    pipe = Pipeline.deserialize(filename=case["path"], **kw)
    if case.get("build"):
        pipe.build()
        pipe.run()
        pipe.shutdown()
    return {"error": None}

def cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return {"rc": rc, "stdout": out.getvalue(), "stderr": err.getvalue()}

WAYS = {
    "load": load,
    "check": lambda c: {"problems": configs.check(c["path"], c.get("allow_modules"),
                                                  **({"allow_functions": c["allow_functions"]}
                                                     if "allow_functions" in c else {}))},
    "validate": lambda c: cli(["validate", c["path"], *flags(c)]),
    "run": lambda c: cli(["run", c["path"], "--batches", "1", *flags(c)]),
}

for case in json.loads(sys.argv[1]):
    result = {"name": case["name"]}
    for way in case["ways"]:
        print(json.dumps({"started": case["name"], "way": way}), flush=True)
        t = time.perf_counter()
        try:
            r = WAYS[way](case)
        except BaseException as e:  # noqa: BLE001 - reported to the parent, which judges it
            r = {"error": f"{type(e).__name__}: {e}", "type": type(e).__name__}
        r["seconds"] = time.perf_counter() - t
        result[way] = r
    result["imported"] = bool(case.get("watch")) and case["watch"] in sys.modules
    print(json.dumps(result), flush=True)
"""


def _child(cases: list[dict[str, Any]], timeout: float) -> tuple[dict[str, dict[str, Any]], str | None, str]:
    """Runs `cases` in one child: (finished results, the case it was running when it died, why)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(cases), str(MEMORY_CAP)],
                              capture_output=True, text=True, timeout=timeout, env=env, cwd=str(ROOT))
        stdout, stderr, how = proc.stdout, proc.stderr, f"exited with code {proc.returncode}"
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        how = f"timed out after {timeout} s"
    results: dict[str, dict[str, Any]] = {}
    running = None
    for line in stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue  # something the loaded code printed to the real stdout
        if isinstance(msg, dict) and "started" in msg:
            running = msg
        elif isinstance(msg, dict) and "name" in msg:
            results[msg["name"]] = msg
            running = None
    why = f"the child {how} during {running['way']}" if running else f"the child {how} before the first case"
    return results, (running or {}).get("started"), f"{why}; stderr: {stderr[-2000:]}"


def run_configs(cases: list[dict[str, Any]], timeout: float = 240) -> dict[str, dict[str, Any]]:
    """{case name: {way: result}}. A case during which the child died (exited, was killed, timed
    out) gets {"died": why}; the cases after it run in a fresh child."""
    results: dict[str, dict[str, Any]] = {}
    pending = list(cases)
    while pending:
        done, culprit, why = _child(pending, timeout)
        results.update(done)
        if culprit is None and not done:  # died before any case: a next child would too
            return {**results, **{c["name"]: {"died": why} for c in pending}}
        if culprit is not None:
            results[culprit] = {"died": why}
        pending = [c for c in pending if c["name"] not in results]
    return results


def finished(results: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    r = results[name]
    assert "died" not in r, f"{name}: {r['died']}"
    return r
