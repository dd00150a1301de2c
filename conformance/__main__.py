"""`python -m conformance run | report | coverage` (see conformance/README.md)."""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from . import coverage
from .patches import cuda_present
from .runner import Settings
from .suite import discover, load_results, make_baseline, run_side

REPO = Path(__file__).resolve().parent.parent
BASELINE = REPO / "conformance" / "baseline.json"
DOC = REPO / "docs" / "conformance.md"


def _default_tests() -> Path:
    root = os.environ.get("DALI_CONFORMANCE_DIR") or str(REPO.parent / "shared" / "dali_conformance")
    return Path(root).resolve() / "tests"


def _default_dali_python() -> str:
    return os.environ.get("DALI_PYTHON") or str(REPO.parent / "dali-venv" / "bin" / "python")


def _usable(python: str | None) -> bool:
    return bool(python) and python != "none" and Path(python).exists()


def _dali_version(python: str) -> str:
    out = subprocess.run([python, "-c", "import nvidia.dali as d; print(d.__version__)"],
                         capture_output=True, text=True, timeout=300)
    return out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else "unknown"


def cmd_run(a: argparse.Namespace) -> int:
    tests = Path(a.tests).resolve() if a.tests else _default_tests()
    if not (tests / "test_utils.py").exists():
        print(f"conformance: DALI's test folder not found at {tests} (set DALI_CONFORMANCE_DIR or --tests)",
              file=sys.stderr)
        return 2
    dali_py = a.dali_python or _default_dali_python()
    control = _usable(dali_py) and not a.no_control
    ours_py = a.ours_python or os.environ.get("OURS_PYTHON") or (dali_py if _usable(dali_py) else sys.executable)
    work = Path(a.work).resolve()
    settings = Settings(tests_dir=tests, work_dir=work, timeout=a.timeout, module_budget=a.module_budget,
                        exclude_attrs=() if a.include_slow else ("slow",), cuda=cuda_present(),
                        dali_extra=Path(a.dali_extra).resolve() if a.dali_extra else None)
    modules = a.files.split(",") if a.files else discover(tests)
    baseline_path = Path(a.baseline)
    old = json.loads(baseline_path.read_text()) if baseline_path.exists() else None
    store = work / "results"
    if control:
        print(f"conformance: control run under {dali_py}", file=sys.stderr)
        results = run_side(dali_py, "dali", modules, settings, a.jobs, store=store)
        baseline = make_baseline(results, tests, _dali_version(dali_py), old)
        baseline_path.write_text(json.dumps(baseline, indent=1, sort_keys=False) + "\n")
        if a.control_only:
            print(f"conformance: wrote {baseline_path}", file=sys.stderr)
            return 0
    elif old is None:
        print(f"conformance: no DALI at {dali_py} and no baseline at {baseline_path}", file=sys.stderr)
        return 2
    else:
        baseline = old
        print(f"conformance: no control run; counting against {baseline_path}", file=sys.stderr)
    missing = [m for m in modules if m not in baseline["modules"]]
    if missing:
        print(f"conformance: not in the baseline (skipped): {', '.join(missing)}", file=sys.stderr)
        modules = [m for m in modules if m in baseline["modules"]]
    from .suite import expand_ids, file_sha
    for m in modules:
        if baseline["modules"][m]["sha"] != file_sha(tests, m):
            print(f"conformance: warning: {m} changed since the baseline was made", file=sys.stderr)
    ids = {m: expand_ids(baseline["modules"][m]["passed"]) for m in modules}
    print(f"conformance: torch_dali run under {ours_py}", file=sys.stderr)
    strict = run_side(ours_py, "ours", modules, settings, a.jobs, ids=ids, store=store)
    from .shim import STAND_INS
    blocked = [m for m in modules if m in strict and strict[m].import_error
               and any(name in strict[m].import_error for name in STAND_INS)]
    stand_in = {}
    if blocked and not a.no_stand_ins:
        stand_in = run_side(ours_py, "ours", blocked, settings, a.jobs, ids=ids, stand_ins=True,
                            store=store, label="ours-stand-ins")
    from .report import render
    command = a.command or "python -m conformance run " + " ".join(shlex.quote(x) for x in sys.argv[2:])
    Path(a.doc).parent.mkdir(parents=True, exist_ok=True)
    machine = "this machine, which has a GPU," if settings.cuda else "this CPU-only machine"
    default = baseline_path.resolve() == BASELINE.resolve()
    Path(a.doc).write_text(render(baseline, strict, stand_in, command.strip(),
                                  modules=None if not a.files else modules, machine=machine,
                                  baseline_file="conformance/baseline.json" if default else baseline_path.name))
    print(f"conformance: wrote {a.doc}", file=sys.stderr)
    return 0


def cmd_report(a: argparse.Namespace) -> int:
    """Rewrites the doc from the results a previous run stored (no test runs)."""
    from .report import render
    work = Path(a.work).resolve()
    baseline = json.loads(Path(a.baseline).read_text())
    strict = load_results(work / "results" / "ours")
    stand_in = load_results(work / "results" / "ours-stand-ins")
    Path(a.doc).write_text(render(baseline, strict, stand_in, a.command or "make conformance"))
    print(f"conformance: wrote {a.doc}", file=sys.stderr)
    return 0


def cmd_coverage(a: argparse.Namespace) -> int:
    if a.extract:
        dali_py = a.dali_python or _default_dali_python()
        if _usable(dali_py):
            subprocess.run([dali_py, "-m", "conformance.dali_schemas", str(coverage.SNAPSHOT)], cwd=REPO,
                           env=dict(os.environ, PYTHONPATH=str(REPO)), check=True, timeout=600)
        else:
            print(f"conformance: no DALI at {dali_py}; keeping {coverage.SNAPSHOT.name}", file=sys.stderr)
    coverage.write()
    print(f"conformance: wrote {coverage.DOC}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m conformance")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run DALI's tests under DALI (if present) and torch_dali; write the doc")
    r.add_argument("--tests", help="DALI's tests folder (default: $DALI_CONFORMANCE_DIR/tests or "
                                   "../shared/dali_conformance/tests)")
    r.add_argument("--dali-python", help="the DALI venv's python (default: $DALI_PYTHON or ../dali-venv/bin/python); "
                                         "'none': no control run, count against the baseline")
    r.add_argument("--ours-python", help="python for torch_dali's side (default: the DALI venv's, so both "
                                         "sides have the same numpy/scipy/cv2/nose2; else this python)")
    r.add_argument("--no-control", action="store_true", help="use the committed baseline even if DALI is there")
    r.add_argument("--control-only", action="store_true", help="only the DALI run (refreshes the baseline)")
    r.add_argument("--files", help="comma-separated module names (test_flip,checkpointing.test_x)")
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    r.add_argument("--module-budget", type=float, default=1800.0, help="seconds per file and side")
    r.add_argument("--include-slow", action="store_true", help="also run cases tagged `slow`")
    r.add_argument("--dali-extra", help="a DALI_extra folder (or a stand-in) for DALI_EXTRA_PATH on both sides; "
                   "default: a folder that does not exist, so cases needing it are counted apart")
    r.add_argument("--no-stand-ins", action="store_true")
    r.add_argument("--work", default=str(REPO / "build" / "conformance"))
    r.add_argument("--baseline", default=str(BASELINE))
    r.add_argument("--doc", default=str(DOC))
    r.add_argument("--command", help="the command line to print in the doc")
    r.set_defaults(func=cmd_run)
    rep = sub.add_parser("report", help="rewrite the doc from the stored results of the last run")
    rep.add_argument("--work", default=str(REPO / "build" / "conformance"))
    rep.add_argument("--baseline", default=str(BASELINE))
    rep.add_argument("--doc", default=str(DOC))
    rep.add_argument("--command")
    rep.set_defaults(func=cmd_report)
    c = sub.add_parser("coverage", help="write docs/dali_coverage.md from the schema snapshot")
    c.add_argument("--extract", action="store_true", help="first refresh the snapshot from the DALI venv")
    c.add_argument("--dali-python")
    c.set_defaults(func=cmd_coverage)
    a = p.parse_args(argv)
    return a.func(a)


if __name__ == "__main__":
    sys.exit(main())
