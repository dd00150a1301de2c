"""Both sides of a notebook script, compared: DALI 2.4 three times (the pipelines' seeds moved in
the second and third: an output that changes is "random", compared by sample count, dtype, layout
and, where DALI's shape did not move, shape) and torch_dali once; every other output value for
value (`np.array_equal`). Pipeline runs pair up by (cell, n-th run of that cell), so a cell that
fails on one side only does not shift the runs after it; rec() records pair up by name."""
from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).resolve().parent / "child.py"
DALI_PY = os.environ.get("DALI_PYTHON", str(REPO.parent / "dali-venv" / "bin" / "python"))


def _fresh_cwd(work: Path, name: str) -> Path:
    """An empty working folder per run (files a notebook writes, index files say, do not leak into
    the next run) where ../data and ../../data reach the notebooks' data."""
    root = work / "run" / name
    shutil.rmtree(root, ignore_errors=True)
    (root / "a" / "b").mkdir(parents=True)
    for link in (root / "data", root / "a" / "data"):
        link.symlink_to(work / "data")
    return root / "a" / "b"


def run_side(script: Path, side: str, work: Path, seed_shift: int = 0, site: str = "") -> dict:
    """One run in its own process; torch_dali's under the caller's interpreter (its own
    environment), DALI's under $DALI_PYTHON. `site`: extra packages for both (torchdata, ...)."""
    out = work / "out" / f"{script.stem}.{side}.{seed_shift}.pkl"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    tools = work / ("bin_dali" if side == "dali" else "bin_ours")
    env = {**os.environ, "DALI_EXTRA_PATH": str(work / "extra"), "EX_ROOT": str(work),
           "PATH": f"{tools}:{Path(DALI_PY).parent}:{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(p for p in (site, str(REPO) if side != "dali" else "") if p)}
    py = DALI_PY if side == "dali" else sys.executable
    p = subprocess.run([py, str(CHILD), side, str(script.resolve()), str(out), str(seed_shift), str(work / "cells")],
                       cwd=_fresh_cwd(work, out.stem), env=env, capture_output=True, text=True, timeout=900)
    if not out.exists():
        return {"runs": [], "records": [], "errors": [{"cell": -1, "error": "crashed", "where": p.stderr[-800:]}],
                "cells": 0}
    with open(out, "rb") as f:
        return pickle.load(f)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def _value_diff(a: np.ndarray, b: np.ndarray, what: str) -> str:
    try:
        d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        return f"{what}: {int(np.count_nonzero(d))}/{a.size} values differ, max |d| {np.nanmax(d):.3g}"
    except (TypeError, ValueError) as e:
        return f"{what}: values differ ({e})"


def compare_output(d0: dict, others: list, t: dict) -> tuple[str, str]:
    """A pipeline output -> (verdict, detail): equal / equal-random / different / dali-error.
    `others`: the same output from DALI's runs with other seeds."""
    if "error" in d0:
        return "dali-error", d0["error"]
    if "error" in t:
        return "different", t["error"]
    s0, st = d0["samples"], t["samples"]
    random_ = any(len(s0) != len(o.get("samples", [])) or any(not _same(a, b) for a, b in zip(s0, o["samples"]))
                  for o in others)
    if len(s0) != len(st):
        return "different", f"samples {len(st)} vs DALI {len(s0)}"
    if d0["layout"] != t["layout"]:
        return "different", f"layout {t['layout']!r} vs DALI {d0['layout']!r}"
    for i, (a, b) in enumerate(zip(s0, st)):
        if a.dtype != b.dtype:
            return "different", f"dtype {b.dtype} vs DALI {a.dtype}"
        if random_:
            fixed_shape = all(i < len(o.get("samples", [])) and o["samples"][i].shape == a.shape for o in others)
            if a.ndim != b.ndim or (fixed_shape and a.shape != b.shape):
                return "different", f"sample {i} shape {b.shape} vs DALI {a.shape}"
        elif a.shape != b.shape:
            return "different", f"sample {i} shape {b.shape} vs DALI {a.shape}"
        elif not _same(a, b):
            return "different", _value_diff(a, b, f"sample {i}")
    return ("equal-random" if random_ else "equal"), ""


def diff_record(a: dict, b: dict, rnd: bool, path: str = "") -> list[str]:
    """A rec() record: the differences, as lines (none: equal). Both failing counts as equal."""
    if a["kind"] != b["kind"]:
        return [f"{path}: {a['kind']} vs {b['kind']}" + (f" ({b.get('value')})" if b["kind"] == "error" else "")]
    k = a["kind"]
    if k in ("ok", "error"):
        return []
    if k == "scalar":
        return [] if rnd or a["value"] == b["value"] else [f"{path}: {a['value']!r} vs {b['value']!r}"]
    if k in ("list", "batch"):
        out = [f"{path}: layout {a.get('layout')!r} vs {b.get('layout')!r}"] \
            if k == "batch" and a.get("layout") != b.get("layout") else []
        if len(a["items"]) != len(b["items"]):
            return out + [f"{path}: length {len(a['items'])} vs {len(b['items'])}"]
        return out + [d for i, (x, y) in enumerate(zip(a["items"], b["items"]))
                      for d in diff_record(x, y, rnd, f"{path}[{i}]")]
    if k == "dict":
        out = [f"{path}: keys {sorted(a['items'])} vs {sorted(b['items'])}"] if set(a["items"]) != set(b["items"]) else []
        return out + [d for key in a["items"] if key in b["items"]
                      for d in diff_record(a["items"][key], b["items"][key], rnd, f"{path}.{key}")]
    out = [f"{path}: {f} {a[f]} vs {b[f]}" for f in ("shape", "dtype", "layout") if a[f] != b[f]]
    if out or rnd or _same(a["value"], b["value"]):
        return out
    return [_value_diff(a["value"], b["value"], path)]


def _cell_key(runs: list, k: int) -> tuple:
    cell = runs[k]["cell"]
    return cell, sum(1 for r in runs[:k] if r["cell"] == cell)


def compare_script(script: Path, work: Path, site: str = "") -> dict:
    d0 = run_side(script, "dali", work, 0, site)
    d1 = run_side(script, "dali", work, 1, site)
    d2 = run_side(script, "dali", work, 2, site)  # a coin flip can repeat with one seed
    t = run_side(script, "torch_dali", work, 0, site)
    keyed = [{_cell_key(d["runs"], k): r for k, r in enumerate(d["runs"])} for d in (d1, d2, t)]
    rows = []
    for k, r0 in enumerate(d0["runs"]):
        key = _cell_key(d0["runs"], k)
        r1, r2 = (kd.get(key, {"outputs": []}) for kd in keyed[:2])
        rt = keyed[2].get(key)
        for j, o0 in enumerate(r0["outputs"]):
            if rt is None or j >= len(rt["outputs"]):
                v, det = "missing", "torch_dali produced no such run/output"
            else:
                others = [r["outputs"][j] if j < len(r["outputs"]) else {} for r in (r1, r2)]
                v, det = compare_output(o0, others, rt["outputs"][j])
            rows.append({"what": f"run {k} (cell {r0['cell']}) out {j}", "verdict": v, "detail": det})
    ours = {n: s for n, _, s in t["records"]}
    for name, rnd, s0 in d0["records"]:
        if name not in ours:
            rows.append({"what": f"rec {name}", "verdict": "missing", "detail": "torch_dali recorded no such name"})
            continue
        d = diff_record(s0, ours[name], rnd, name)
        rows.append({"what": f"rec {name}", "verdict": "different" if d else ("equal-random" if rnd else "equal"),
                     "detail": "; ".join(d[:4])})
    dali_failed = {e["cell"] for e in d0["errors"]}
    rows += [{"what": f"cell {e['cell']}", "verdict": "different", "detail": f"fails on torch_dali only: {e['error']}"}
             for e in t["errors"] if e["cell"] not in dali_failed]
    return {"script": script.stem, "dali_runs": len(d0["runs"]), "dali_records": len(d0["records"]),
            "dali_errors": d0["errors"], "td_errors": t["errors"], "rows": rows}


def counts(res: dict) -> dict:
    c: dict = {}
    for r in res["rows"]:
        c[r["verdict"]] = c.get(r["verdict"], 0) + 1
    return c


def summarize(res: dict) -> str:
    return (f"{res['script']}: {res['dali_runs']} runs, {res['dali_records']} records, "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts(res).items()))
            + f"; cell errors DALI {len(res['dali_errors'])}, torch_dali {len(res['td_errors'])}")


def table(results: list) -> str:
    """Markdown: script | runs + records | equal | equal (random: by shape / type) | other | cells failing."""
    rows = ["| script | runs + records | equal | equal-random | different | cell errors DALI / torch_dali |",
            "|---|---|---|---|---|---|"]
    for res in results:
        c = counts(res)
        other = sum(v for k, v in c.items() if k not in ("equal", "equal-random"))
        rows.append(f"| {res['script']} | {res['dali_runs']} + {res['dali_records']} | {c.get('equal', 0)} | "
                    f"{c.get('equal-random', 0)} | {other} | {len(res['dali_errors'])} / {len(res['td_errors'])} |")
    return "\n".join(rows) + "\n"
