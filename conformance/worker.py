"""One worker process: imports one DALI test module (through the shim on torch_dali's side),
collects its cases and runs them (all, or the ids given, less those already done), reporting on a
pipe. A generator that fails while collecting reports its `:collect` case too.

Run by the runner as `python -m conformance.worker SPEC.json`; never imported by torch_dali.
Protocol (one JSON object per line on fd `spec["fd"]`):
  {"event": "import", "ok": bool, "reason": ..., "where": ...}
  {"event": "start", "id": ...}
  {"event": "end", "id": ..., "status": "pass|fail|error|skip|excluded", "reason": ..., "where": ...}
  {"event": "done"}
The runner's watchdog kills the process group when a case outlives its timeout or its memory limit;
it then starts a new worker at the next case.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import traceback
import unittest
import warnings
from typing import Any


def _where(tb: Any, roots: list[str]) -> str:
    """The innermost frame in torch_dali (or DALI), else in the test files: where it went wrong."""
    frames = traceback.extract_tb(tb)
    for root in roots:
        for fr in reversed(frames):
            if fr.filename.startswith(root):
                return f"{os.path.relpath(fr.filename, os.path.dirname(root.rstrip(os.sep)))}:{fr.lineno}"
    if frames:
        fr = frames[-1]
        return f"{os.path.basename(fr.filename)}:{fr.lineno}"
    return ""


_PREFIXES: list[str] = []  # machine-specific path prefixes blanked in messages (set in main)


def _scrub(text: str) -> str:
    for prefix in _PREFIXES:
        text = text.replace(prefix, "")
    return text


def _reason(e: BaseException) -> str:
    """`Type: first line`; a first line that ends in ':' (DALI's "Critical error when building
    pipeline:") takes the next line too."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    text = " ".join(lines[:2]) if lines and lines[0].endswith(":") else (lines[0] if lines else "")
    return _scrub(f"{type(e).__name__}: {text}")[:400] if text else type(e).__name__


def _detail(e: BaseException) -> str:
    """The whole message (bounded): what the control's classification reads."""
    return _scrub(str(e))[:4000]


class _Patcher:
    """Applies conformance.patches to `nvidia.dali.pipeline.Pipeline` once DALI (or the shim) is
    loaded: after the module's import, and before each case for modules that import it lazily."""

    def __init__(self, cuda: bool) -> None:
        self.done = cuda  # with CUDA nothing is patched

    def __call__(self) -> None:
        if self.done or "nvidia.dali" not in sys.modules:
            return
        self.done = True
        from conformance.patches import patch_device_id
        import nvidia.dali.pipeline as dali_pipeline
        patch_device_id(dali_pipeline.Pipeline)


class _Out:
    def __init__(self, fd: int) -> None:
        self._f = os.fdopen(fd, "w", buffering=1)

    def send(self, **msg: Any) -> None:
        self._f.write(json.dumps(msg, default=str) + "\n")
        self._f.flush()


def _log_position() -> int:
    """Where the case's output will start in the log (stdout and stderr are the log file): the
    runner measures a flood from here, not from when it reads the start event, which may come
    after megabytes of output on a loaded machine."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        return os.lseek(1, 0, os.SEEK_CUR)
    except OSError:
        return -1


def main(spec: dict[str, Any]) -> None:
    out = _Out(spec["fd"])
    tests_dir = spec["tests_dir"]
    import sysconfig
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    _PREFIXES.extend(p + os.sep for p in (repo, os.path.dirname(os.path.abspath(tests_dir)),
                                          sysconfig.get_paths()["purelib"]))
    sys.path.insert(0, tests_dir)
    roots: list[str] = []
    lib = "torch_dali" if spec["side"] == "ours" else "nvidia.dali"
    found = importlib.util.find_spec(lib)  # imports only the `nvidia` namespace package, if any
    if found is not None and found.origin:  # frames inside the library say where it failed
        roots.append(os.path.dirname(found.origin) + os.sep)
    if spec["side"] == "ours":
        from conformance import shim
        shim.install(stand_ins=spec.get("stand_ins", False))
    roots.append(os.path.abspath(tests_dir) + os.sep)
    warnings.simplefilter("ignore")
    patch = _Patcher(spec.get("cuda", False))
    try:
        module = importlib.import_module(spec["module"])
        patch()
    except BaseException as e:  # noqa: B036 - SystemExit from a module top is a failure too
        out.send(event="import", ok=False, reason=_reason(e), where=_where(e.__traceback__, roots))
        return
    out.send(event="import", ok=True)
    from conformance.collect import collect
    only = set(spec["ids"]) if spec.get("ids") is not None else None
    bases = {i.rsplit(":", 1)[0] for i in only} if only is not None else set()
    skip = set(spec.get("skip", ()))
    exclude = set(spec.get("exclude_attrs", ()))
    remaining = len(only - skip) if only is not None else -1
    setup = getattr(module, "setUpModule", None) or getattr(module, "setup_module", None)
    teardown = getattr(module, "tearDownModule", None) or getattr(module, "teardown_module", None)
    if callable(setup):
        setup()
    try:
        for case in collect(module):
            if remaining == 0:
                break
            if case.id in skip:
                continue
            if only is not None:
                failed_generator = case.id.endswith(":collect") and case.id[: -len(":collect")] in bases
                if case.id not in only and not failed_generator:
                    continue
                remaining -= case.id in only
            if case.attrs & exclude:
                out.send(event="end", id=case.id, status="excluded", reason=",".join(sorted(case.attrs & exclude)),
                         where="", summary=case.summary)
                continue
            out.send(event="start", id=case.id, log_at=_log_position())
            status, reason, where, detail = "pass", "", "", ""
            try:
                patch()
                case.run()
            except unittest.SkipTest as e:
                status, reason = "skip", _reason(e)
            except AssertionError as e:
                status, reason, where, detail = "fail", _reason(e), _where(e.__traceback__, roots), _detail(e)
            except BaseException as e:  # noqa: B036 - a case that calls sys.exit fails, it does not end the run
                status, reason, where, detail = "error", _reason(e), _where(e.__traceback__, roots), _detail(e)
            out.send(event="end", id=case.id, status=status, reason=reason, where=where, summary=case.summary,
                     detail=detail)
    finally:
        if callable(teardown):
            try:
                teardown()
            except Exception:
                pass
    if spec["side"] == "ours":
        from conformance import shim
        leaks = shim.real_dali_leaks()
        if leaks:
            out.send(event="leak", modules=leaks[:10])
    out.send(event="done")


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        main(json.load(f))
