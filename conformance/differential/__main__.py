"""`python -m conformance.differential run | report | show` (see conformance/README.md)."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from .compare import compare
from .driver import REPO, run_side
from .registry import OPS, RANDOM, make_case
from .report import summarize, write_doc


def load(path: Path) -> tuple[dict, dict]:
    with np.load(path, allow_pickle=False) as z:
        return json.loads(str(z["meta"])), {k: z[k] for k in z.files if k != "meta"}


def cmd_run(a) -> None:
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ops = a.ops.split(",") if a.ops else list(OPS)
    cases = [make_case(op, a.seed * 100_000 + k) for k in range(a.per_op) for op in ops]
    path = out / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    for side, py in (("dali", a.dali_python), ("ours", a.ours_python)):
        print(f"== {side}: {len(cases)} cases", flush=True)
        run_side(side, py, path, out / side, len(cases), a.timeout)
    verdicts = [{"id": c["id"], "family": c["family"],
                 **compare(load(out / "dali" / f"{i}.npz"), load(out / "ours" / f"{i}.npz"), c["family"] not in RANDOM)}
                for i, c in enumerate(cases)]
    recheck_dali(a, out, cases, verdicts)
    (out / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    print(summarize(verdicts, brief=True))


def recheck_dali(a, out: Path, cases: list[dict], verdicts: list[dict]) -> None:
    """Cases whose values differ run under DALI once more, in a fresh process and after the same op
    on other data (so that memory an op reads by mistake holds other values): where DALI's two
    results differ (uninitialized memory, reads past a sample), the case is skipped, not counted."""
    idx = [i for i, v in enumerate(verdicts) if v["cause"] == "values"]
    if not idx:
        return
    path = out / "recheck.jsonl"
    path.write_text("".join(json.dumps(cases[i]) + "\n" for i in idx))
    run_side("dali", a.dali_python, path, out / "dali2", len(idx), a.timeout, stir=True)
    for k, i in enumerate(idx):
        if compare(load(out / "dali" / f"{i}.npz"), load(out / "dali2" / f"{k}.npz"))["verdict"] != "agree":
            verdicts[i].update(verdict="skip", cause="dali_unstable")


def cmd_report(a) -> None:
    runs = [Path(d) for d in a.dirs]
    verdicts = [json.loads(line) for d in runs for line in (d / "verdicts.jsonl").read_text().splitlines()]
    lines = []
    for d in runs:  # what each run was: its seed(s) and cases per op, read back from the case ids
        ids = [json.loads(line)["id"] for line in (d / "cases.jsonl").read_text().splitlines()]
        seeds = sorted({int(i.rsplit(":", 1)[1]) // 100_000 for i in ids})
        ops = Counter(i.rsplit(":", 1)[0] for i in ids)
        lines.append(f"`run --seed {','.join(map(str, seeds))} --per-op {max(ops.values())}` "
                     f"({len(ids)} cases of {len(ops)} ops)")
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    runs_line = f"Runs: {'; '.join(lines)}; torch_dali at `{head}`, DALI 2.4.0 (CPU)."
    write_doc(verdicts, Path(a.doc), a.note or "", runs_line)
    print(summarize(verdicts, brief=True))


def cmd_show(a) -> None:
    out = Path(a.out)
    cases = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    i = next(k for k, c in enumerate(cases) if c["id"] == a.id)
    print(json.dumps(cases[i]))
    d, o = load(out / "dali" / f"{i}.npz"), load(out / "ours" / f"{i}.npz")
    print("DALI:", json.dumps(d[0]))
    print("ours:", json.dumps(o[0]))
    print("verdict:", json.dumps(compare(d, o)))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m conformance.differential")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="draw cases, run both sides, compare")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--per-op", type=int, default=50)
    r.add_argument("--ops", default="", help="comma-separated (default: all of registry.OPS)")
    r.add_argument("--out", required=True)
    r.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    r.add_argument("--dali-python", default=str(REPO.parent / "dali-venv" / "bin" / "python"))
    r.add_argument("--ours-python", default=sys.executable,
                   help="torch_dali's side, through the shim (default: this interpreter, the project's venv; "
                        "its NumPy must draw the inputs as DALI's venv does: same major version)")
    r.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="docs/differential.md from runs' verdicts")
    p.add_argument("dirs", nargs="+")
    p.add_argument("--doc", default=str(REPO / "docs" / "differential.md"))
    p.add_argument("--note", default="", help="a file whose text goes under the table (causes, fixes)")
    p.set_defaults(func=cmd_report)
    s = sub.add_parser("show", help="one case: its JSON, both results, the verdict")
    s.add_argument("out")
    s.add_argument("id")
    s.set_defaults(func=cmd_show)
    a = ap.parse_args(argv)
    a.func(a)


if __name__ == "__main__":
    main(sys.argv[1:])
