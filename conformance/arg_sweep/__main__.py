"""`python -m conformance.arg_sweep`: see the package docstring."""
from __future__ import annotations

import argparse
import json
import sys
import threading
from collections import Counter
from pathlib import Path

from . import compare, setups, values
from .runner import REPO, run_side

COMMON = ("device", "name", "seed", "preserve", "bytes_per_sample_hint")


def _ops(only: list[str]) -> dict[str, dict]:
    schemas = json.loads((REPO / "conformance" / "dali_schemas.json").read_text())["ops"]
    out = {k: v for k, v in sorted(schemas.items()) if "cpu" in v["devices"] and not k.startswith(setups.SKIP)}
    return {k: v for k, v in out.items() if not only or k in only}


def _reused(old: Path, probes: list[dict]) -> dict | None:
    """DALI's results of an earlier run in `old`, if it probed exactly these."""
    try:
        if json.loads((old / "probes.json").read_text()) != probes:
            return None
        res = [json.loads(line) for line in (old / "results.jsonl").read_text().splitlines() if line.strip()]
    except (OSError, ValueError):
        return None
    got = {r["id"]: r for r in res}
    return got if len(got) == len(probes) else None


def _both(a: argparse.Namespace, probes: list[dict], work: Path) -> tuple[dict, dict]:
    res: dict[str, dict] = {}
    if a.dali_from:
        old = _reused(Path(a.dali_from) / work.name / "dali", probes)
        if old is not None:
            res["dali"] = old

    def side(key: str, py: str, mod: str) -> None:
        res[key] = run_side(py, mod, probes, work / key, key, a.ours_path if key == "ours" else "")
    todo = [("ours", a.ours_python, "torch_dali")] + ([] if "dali" in res else [("dali", a.dali_python, "nvidia.dali")])
    ts = [threading.Thread(target=side, args=t) for t in todo]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return res["dali"], res["ours"]


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m conformance.arg_sweep")
    ap.add_argument("--ops", default="", help="comma-separated op names (default: every CPU op)")
    ap.add_argument("--values", default="", help="comma-separated value names, or all (default: values.CORE)")
    ap.add_argument("--out", default="/tmp/arg_sweep", help="work folder; results.json goes there")
    ap.add_argument("--dali-python", default=str(REPO.parent / "dali-venv" / "bin" / "python"))
    ap.add_argument("--ours-python", default=sys.executable)
    ap.add_argument("--ours-path", default="", help="a checkout whose torch_dali to probe (default: this one)")
    ap.add_argument("--dali-from", default="", help="an earlier --out folder whose DALI results to reuse")
    a = ap.parse_args()
    ops = _ops([x for x in a.ops.split(",") if x])
    vals = values.NAMES if a.values == "all" else [x for x in a.values.split(",") if x] or values.CORE
    out = Path(a.out)

    # 1. which setup each op runs on under DALI with no argument changed (its baseline)
    disc = [{"id": i, "op": op, "inputs": ins, "base": base, "arg": None, "value": None}
            for i, (op, (ins, base)) in enumerate((op, c) for op in ops for c in setups.candidates(op))]
    d0, o0 = _both(a, disc, out / "discover")
    chosen: dict[str, dict] = {}
    for p in disc:
        if p["op"] not in chosen and d0[p["id"]]["stage"] == "ok":
            chosen[p["op"]] = dict(p, base_ours=o0[p["id"]])
    unswept = sorted(set(ops) - set(chosen))
    ours_broken = sorted(op for op, p in chosen.items() if p["base_ours"]["stage"] != "ok")

    # 2. every argument of every op with a baseline, each value
    probes = []
    for op, p in chosen.items():
        for arg in ops[op]["args"]:
            if arg in COMMON and op != "copy":  # the common arguments once, on `copy`
                continue
            if arg in ("device", "name"):
                continue
            for v in vals:
                probes.append({"id": len(probes), "op": op, "inputs": p["inputs"], "base": p["base"], "arg": arg,
                               "value": v, "type": ops[op]["args"][arg]["type"], "tensor": ops[op]["args"][arg]["tensor"]})
    dr, orr = _both(a, probes, out / "probe")

    rows = []
    for p in probes:
        if p["op"] in ours_broken:
            continue
        d, o = dr[p["id"]], orr[p["id"]]
        kind = compare.differ(d, o, d0[chosen[p["op"]]["id"]], chosen[p["op"]]["base_ours"])
        if kind:
            rows.append({"kind": kind, "op": p["op"], "arg": p["arg"], "type": p["type"], "tensor": p["tensor"],
                         "value": p["value"], "dali": compare.describe(d), "ours": compare.describe(o),
                         "dali_msg": d.get("msg", ""), "ours_msg": o.get("msg", "")})
    summary = {"ops": len(ops), "ops_swept": len(chosen), "unswept": unswept, "ours_baseline_fails": ours_broken,
               "arguments": len({(p["op"], p["arg"]) for p in probes}), "probes": len(probes),
               "differences": dict(compare.tally(rows)),
               "by_type_value": Counter(f"{r['kind']} {r['type']} {r['value']}" for r in rows).most_common()}
    (out / "results.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k != "by_type_value"}, indent=1))
    for line, n in summary["by_type_value"][:60]:
        print(f"{n:5d} {line}")


if __name__ == "__main__":
    main()
