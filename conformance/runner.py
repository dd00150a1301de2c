"""Runs one test module on one side in worker processes, with a watchdog per case.

A worker is a fresh interpreter (`python -m conformance.worker`) in its own process group, with
its own working directory laid out as DALI's repository expects (`dali/test/python` as the
working directory, `tools/wds2idx.py` three levels up). The watchdog kills the group when the
current case (or the import and collection before the first case) runs past `timeout`, or the
worker's resident memory passes `mem_limit_mb`; a worker that dies (signal, exit) is recorded on
the case it was running and a new worker continues after it.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MAX_RESTARTS = 40
# A file whose cases keep hanging (3 of its last 6 results) is not run further: a hang that repeats
# per case (e.g. a loop over missing DALI_extra files) would otherwise cost the timeout every time.
HANG_WINDOW, HANG_LIMIT = 6, 3
EXTRA_MARKER = "DALI_extra-not-available"


@dataclass
class TaskResult:
    side: str
    module: str
    import_error: str | None = None
    import_where: str = ""
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> status, reason, where, summary
    leaks: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    budget_exhausted: bool = False
    stopped: str = ""  # why the runner stopped before the last case (budget, repeated hangs, restarts)


@dataclass
class Settings:
    tests_dir: Path
    work_dir: Path
    timeout: float = 120.0
    import_timeout: float = 300.0
    mem_limit_mb: int = 8192
    module_budget: float = 1800.0  # seconds of wall time per (side, module)
    log_limit: int = 64 << 20  # bytes one case may print (a case stuck in a warning loop is killed)
    exclude_attrs: tuple[str, ...] = ("slow",)
    cuda: bool = False
    dali_extra: Path | None = None  # a DALI_extra (or a stand-in for it); None: a folder that does not exist


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the worker's own group (start_new_session)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _case_dir(settings: Settings, side: str, module: str) -> Path:
    base = settings.work_dir / side / module.replace(".", "_")
    cwd = base / "dali" / "test" / "python"
    cwd.mkdir(parents=True, exist_ok=True)
    tools = base / "tools"
    tools.mkdir(exist_ok=True)
    link = tools / "wds2idx.py"
    if not link.exists():
        link.symlink_to(settings.tests_dir / "wds2idx.py")
    return cwd


def _env(python: str, settings: Settings) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    extra = settings.dali_extra or settings.work_dir / "DALI_extra-not-available"
    env["DALI_EXTRA_PATH"] = str(extra)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the tests folder may be read-only; leave it untouched
    env["PATH"] = os.pathsep.join([str(Path(python).parent), env.get("PATH", "")])  # wds2idx's `python`
    env.setdefault("OMP_NUM_THREADS", "1")
    # case ids are positions in a generator's yields, and generators iterate sets of strings: a fixed
    # hash seed gives every worker, on both sides, the same order (else ids name different cases)
    env["PYTHONHASHSEED"] = "0"
    return env


def run_module(python: str, side: str, module: str, settings: Settings, ids: list[str] | None = None,
               stand_ins: bool = False, log_name: str | None = None) -> TaskResult:
    """Runs `module`'s cases (all, or `ids`) on `side` ("dali" or "ours") under `python`."""
    res = TaskResult(side, module)
    t0 = time.monotonic()
    cwd = _case_dir(settings, side, module)
    env = _env(python, settings)
    log_path = settings.work_dir / "logs" / f"{log_name or side}-{module}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    skip: list[str] = []
    restarts = 0
    with open(log_path, "w") as log:
        while True:
            if ids is not None and not set(ids) - set(skip):
                break
            if _recent_timeouts(res) >= HANG_LIMIT:
                res.stopped = (f"runner: {HANG_LIMIT} of the last {HANG_WINDOW} cases timed out; "
                               "the rest of the file was not run")
                break
            spec = {"side": side, "module": module, "tests_dir": str(settings.tests_dir),
                    "ids": ids, "skip": skip, "exclude_attrs": list(settings.exclude_attrs),
                    "stand_ins": stand_ins, "cuda": settings.cuda}
            outcome = _one_worker(python, spec, cwd, env, log, res, settings, t0)
            if outcome in ("done", "fatal"):
                break
            skip = sorted(res.cases)
            restarts += 1
            if restarts > MAX_RESTARTS:
                res.stopped = f"runner: more than {MAX_RESTARTS} worker restarts; the rest of the file was not run"
                break
    res.elapsed = time.monotonic() - t0
    return res


def _recent_timeouts(res: TaskResult) -> int:
    return sum(c["status"] == "timeout" for c in list(res.cases.values())[-HANG_WINDOW:])


def _log_mentions_extra(log: Any, start: int) -> bool:
    """Whether what the worker printed during the case names the missing DALI_extra folder."""
    try:
        log.flush()
        with open(log.name, "rb") as f:
            f.seek(start)
            return EXTRA_MARKER.encode() in f.read(1 << 20)
    except OSError:
        return False


def _one_worker(python: str, spec: dict[str, Any], cwd: Path, env: dict[str, str], log: Any,
                res: TaskResult, settings: Settings, t0: float) -> str:
    """One worker's life. Returns "done", "restart" (after a case crashed or hung) or "fatal"."""
    r, w = os.pipe()
    spec_path = cwd / "worker_spec.json"  # thousands of case ids do not fit on a command line
    spec_path.write_text(json.dumps(dict(spec, fd=w)))
    proc = subprocess.Popen([python, "-m", "conformance.worker", str(spec_path)], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, pass_fds=(w,),
                            start_new_session=True)
    os.close(w)
    reader = os.fdopen(r, "r")
    current: str | None = None
    log_at = os.fstat(log.fileno()).st_size  # where this worker's (and later each case's) output starts
    imported = False
    last = time.monotonic()
    buf = ""
    try:
        while True:
            limit = settings.timeout if imported else settings.import_timeout
            ready, _, _ = select.select([reader], [], [], 0.5)
            if ready:
                chunk = os.read(reader.fileno(), 1 << 16).decode("utf-8", "replace")
                if not chunk:  # the worker closed the pipe: it exited
                    proc.wait()
                    return _died(proc, current, imported, res)
                buf += chunk
                while "\n" in buf:
                    line, buf = buf.split("\n", 1)
                    msg = json.loads(line)
                    last = time.monotonic()
                    ev = msg["event"]
                    if ev == "import":
                        imported = True
                        if not msg["ok"]:
                            res.import_error, res.import_where = msg["reason"], msg.get("where", "")
                    elif ev == "start":
                        current = msg["id"]
                        # the worker says where the case's output starts (it may have printed a lot
                        # by the time this event is read)
                        at = msg.get("log_at", -1)
                        log_at = at if isinstance(at, int) and at >= 0 else os.fstat(log.fileno()).st_size
                    elif ev == "end":
                        res.cases[msg["id"]] = {k: msg.get(k, "") for k in ("status", "reason", "where", "summary", "detail")}
                        current = None
                        log_at = os.fstat(log.fileno()).st_size
                    elif ev == "leak":
                        res.leaks = msg["modules"]
                    elif ev == "done":
                        proc.wait()
                        return "done"
                continue
            now = time.monotonic()
            if now - t0 > settings.module_budget:
                _kill_group(proc)
                res.budget_exhausted = True
                res.stopped = f"runner: the file's time budget ({settings.module_budget:.0f} s) ran out"
                if current is not None:
                    res.cases[current] = {"status": "timeout", "reason": "runner: module time budget ran out",
                                          "where": "", "summary": ""}
                return "fatal"
            why, status = None, "timeout"
            if os.fstat(log.fileno()).st_size - log_at > settings.log_limit:
                why, status = f"runner: printed more than {settings.log_limit >> 20} MB (killed)", "flood"
            elif now - last > limit:
                why = f"runner: no result within {limit:.0f} s (killed)"
            elif _rss_mb(proc.pid) > settings.mem_limit_mb:
                why, status = f"runner: more than {settings.mem_limit_mb} MB resident (killed)", "memory"
            if why is not None:
                _kill_group(proc)
                if _log_mentions_extra(log, log_at):
                    why += f"; its output names the missing {EXTRA_MARKER} folder"
                if status == "flood":  # keep the log readable and the disk free
                    log.truncate(log_at + (1 << 20))
                    log.seek(0, os.SEEK_END)
                if current is None:
                    res.import_error = res.import_error or ("import/collection: " + why)
                    return "fatal"
                res.cases[current] = {"status": "timeout" if status == "flood" else status,
                                      "reason": why, "where": "", "summary": ""}
                return "restart"
            if proc.poll() is not None and not ready:
                continue  # drain the pipe first; EOF comes next
    finally:
        reader.close()
        if proc.poll() is None:
            _kill_group(proc)


def _died(proc: subprocess.Popen, current: str | None, imported: bool, res: TaskResult) -> str:
    code = proc.returncode
    how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
    if current is not None:
        res.cases[current] = {"status": "crash", "reason": f"runner: worker died ({how})", "where": "", "summary": ""}
        return "restart"
    if not imported:
        res.import_error = f"runner: worker died during import ({how})"
    elif code != 0:
        res.import_error = res.import_error or f"runner: worker died between cases ({how})"
    return "fatal"
