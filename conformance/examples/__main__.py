"""DALI's documentation notebooks, run under DALI 2.4 and under torch_dali, outputs compared.

    python -m conformance.examples extract NB.ipynb [...] --out DIR   # code cells as scripts, CPU only
    python -m conformance.examples compare DIR [--work W] [--only a,b] [--md OUT.md] [--json OUT.json]

Each script runs unchanged on both sides (`nvidia.dali` resolved to torch_dali by conformance/shim.py
on ours): DALI 2.4 from $DALI_PYTHON (default ../dali-venv/bin/python), torch_dali under this
interpreter. No network and no DALI_extra: the work folder gets conformance's synthetic stand-in and
the notebooks' data (make_data.py). $EX_SITE: a folder of extra packages both sides import
(torchdata, tqdm, ...), kept out of DALI's venv. docs/dali_examples.md and
docs/dali_examples_dynamic.md hold the results.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from . import compare, extract, make_data


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m conformance.examples", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("extract", help="notebooks -> scripts in --out")
    e.add_argument("notebooks", type=Path, nargs="+")
    e.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare", help="every DIR/*.py on both sides")
    c.add_argument("dir", type=Path)
    c.add_argument("--work", type=Path, default=Path("/tmp/dali_examples_work"))
    c.add_argument("--only", default="", help="comma-separated script names")
    c.add_argument("--json", type=Path, help="every row, here")
    c.add_argument("--md", type=Path, help="the summary table (markdown), here")
    a = ap.parse_args(argv)
    if a.cmd == "extract":
        a.out.mkdir(parents=True, exist_ok=True)
        for nb in a.notebooks:
            print(extract.extract(nb, a.out))
        return
    work = a.work.resolve()
    make_data.write(work, Path(compare.DALI_PY).parent)
    only = {s for s in a.only.split(",") if s}
    results = []
    for script in sorted(a.dir.glob("*.py")):
        if only and script.stem not in only:
            continue
        res = compare.compare_script(script, work, os.environ.get("EX_SITE", ""))
        results.append(res)
        print(compare.summarize(res), flush=True)
        for r in res["rows"]:
            if r["verdict"] not in ("equal", "equal-random"):
                print(f"   {r['what']}: {r['verdict']} {r['detail']}")
        for side in ("dali_errors", "td_errors"):
            for err in res[side]:
                print(f"   {side[:-7]} cell {err['cell']}: {err['error'][:300]}")
    if a.json:
        a.json.write_text(json.dumps(results, indent=1, default=str))
    if a.md:
        a.md.write_text(compare.table(results))


if __name__ == "__main__":
    main()
