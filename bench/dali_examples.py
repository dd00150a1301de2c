"""DALI's documentation examples, run under DALI 2.4 and under torch_dali, outputs compared.

A script is a notebook's code cells written out as Python, cells split by `# %%` lines, with the
`nvidia.dali` imports unchanged: on torch_dali's side `conformance.shim` maps them. Each cell runs
in one shared namespace; a failing cell is recorded and the next cell still runs. Every
`Pipeline.run()` and every batch a `DALIGenericIterator` hands out is recorded (per output: layout,
dtype, per-sample arrays).

    python bench/dali_examples.py extract NB.ipynb --out DIR  # a notebook's code cells, CPU only
    python bench/dali_examples.py compare DIR [--md OUT.md]   # every DIR/*.py, both sides

Needs no network and no DALI_extra: `DALI_EXTRA_PATH` points at conformance's synthetic stand-in
(made once under the work folder) and `../data/images` (the docs' own sample folder) is written
here with PIL. Plotting is stubbed out (matplotlib / IPython calls do nothing). Pipelines built
with a GPU `device_id` are rebuilt with `device_id=None` (CPU only), as conformance does.

Each run starts in an empty working folder. DALI's side runs three times, with every pipeline seed moved in the second and third: outputs that
change with the seed are "random" and compared by dtype / layout / sample count only (and by shape where the
shape did not change with the seed); the rest must be equal value for value.
"""
from __future__ import annotations

import argparse
import functools
import inspect
import json
import linecache
import os
import pickle
import shutil
import re
import subprocess
import sys
import traceback
import types as pytypes
from pathlib import Path
from unittest import mock

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DALI_PY = os.environ.get("DALI_PYTHON", str(REPO.parent / "dali-venv" / "bin" / "python"))


# ---------------------------------------------------------------- the child: run one script


def _stub_plotting() -> None:
    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.gridspec", "matplotlib.patches",
                 "matplotlib.image", "IPython", "IPython.display", "mpl_toolkits",
                 "mpl_toolkits.axes_grid1"):
        sys.modules[name] = mock.MagicMock(name=name)


def _to_np(t) -> list:
    if hasattr(t, "as_cpu"):
        t = t.as_cpu()
    return [np.array(t[i]) if hasattr(t, "__getitem__") else np.array(t.at(i)) for i in range(len(t))]


def _record_outputs(outs) -> list:
    rec = []
    for o in (outs if isinstance(outs, (tuple, list)) else (outs,)):
        try:
            arrs = _to_np(o)
            layout = o.layout() if hasattr(o, "layout") else ""
            rec.append({"layout": layout or "", "samples": arrs})
        except Exception as e:  # an output we cannot read is itself a finding
            rec.append({"error": f"{type(e).__name__}: {e}"})
    return rec


def _patch_pipeline(Pipeline, runs: list, seed_shift: int) -> None:
    init, run = Pipeline.__init__, Pipeline.run
    counter = [0]

    @functools.wraps(init)  # pipeline_def reads the signature to sort its keyword arguments
    def __init__(self, *args, **kwargs):
        args = list(args)
        if len(args) >= 3 and args[2] is not None:
            args[2] = None
        if kwargs.get("device_id") is not None:
            kwargs["device_id"] = None
        if seed_shift:
            seed = args[3] if len(args) >= 4 else kwargs.get("seed", -1)
            seed = (1234 if seed in (None, -1) else seed) + seed_shift
            if len(args) >= 4:
                args[3] = seed
            else:
                kwargs["seed"] = seed
        init(self, *args, **kwargs)
        counter[0] += 1
        self._nb_index = counter[0]

    @functools.wraps(run)
    def run_(self, *args, **kwargs):
        outs = run(self, *args, **kwargs)
        runs.append({"pipe": getattr(self, "_nb_index", 0), "cell": _CELL[0],
                     "outputs": _record_outputs(outs)})
        return outs

    __init__.__signature__ = inspect.signature(init)  # getfullargspec ignores __wrapped__
    Pipeline.__init__ = __init__
    Pipeline.run = run_


_CELL = [0]


def _patch_iterator(runs: list) -> None:
    """Records what DALIGenericIterator hands out (one run per pipeline's dict, keys sorted)."""
    try:
        from nvidia.dali.plugin.pytorch import DALIGenericIterator as It
    except Exception:  # no plugin on this side: nothing to record
        return
    nxt, init = It.__next__, It.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        self._nb_init = True  # DALI prefetches the first batch here; it is recorded when handed out
        try:
            init(self, *args, **kwargs)
        finally:
            self._nb_init = False

    def __next__(self):
        out = nxt(self)
        if getattr(self, "_nb_init", False):
            return out
        for d in out if isinstance(out, list) else [out]:
            rec = [{"layout": "", "samples": [np.asarray(v.detach().cpu().numpy())[i] for i in range(len(v))]}
                   for _, v in sorted(d.items())]
            runs.append({"pipe": -1, "cell": _CELL[0], "outputs": rec})
        return out

    __init__.__signature__ = inspect.signature(init)
    It.__init__, It.__next__ = __init__, __next__


def child(script: str, side: str, out: str, seed_shift: int) -> None:
    import random
    random.seed(0)
    np.random.seed(0)
    _stub_plotting()
    if side == "torch_dali":
        sys.path.insert(0, str(REPO))
        from conformance import shim
        shim.install()
    import nvidia.dali.pipeline as dp
    runs: list = []
    _patch_pipeline(dp.Pipeline, runs, seed_shift)
    _patch_iterator(runs)
    # DALI's debug-mode pipelines are a subclass with their own run; patched through the base only
    cells = Path(script).read_text().split("\n# %%")
    ns = {"__name__": "__main__", "__file__": script}
    errors = []
    for i, src in enumerate(cells):
        _CELL[0] = i
        fname = f"{script}#cell{i}"
        # conditionals rewrite `if` from the function's source: make it readable to inspect
        linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
        try:
            exec(compile(src, fname, "exec"), ns)
        except BaseException as e:  # noqa: BLE001 - a cell's failure is a result
            tb = traceback.format_exception(type(e), e, e.__traceback__)
            errors.append({"cell": i, "error": f"{type(e).__name__}: {e}"[:400],
                           "where": "".join(tb[-3:])[-800:]})
    if side == "torch_dali" and shim.real_dali_leaks():
        errors.append({"cell": -1, "error": f"real DALI loaded: {shim.real_dali_leaks()[:3]}", "where": ""})
    with open(out, "wb") as f:
        pickle.dump({"runs": runs, "errors": errors, "cells": len(cells)}, f)


# ---------------------------------------------------------------- extraction from a notebook

_DEVICE = re.compile(r"""(device\s*=\s*)(["'])(mixed|gpu)\2""")


def extract(notebook: Path, out_dir: Path) -> Path:
    """A notebook's code cells as a script (cells split by `# %%`), made CPU only: `device` "mixed"
    or "gpu" -> "cpu", `.gpu()` dropped; IPython magics and shell lines dropped."""
    cells = json.loads(notebook.read_text())["cells"]
    parts = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        src = "".join(cell.get("source", []))
        lines = [ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))]
        src = _DEVICE.sub(r"\1\2cpu\2", "\n".join(lines)).replace(".gpu()", "")
        parts.append(src)
    target = out_dir / (notebook.stem if notebook.stem not in ("pipeline_mode", "dynamic_mode")
                        else notebook.parent.name)
    target = target.with_suffix(".py")
    target.write_text(f"# extracted from {notebook.name}: code cells, CPU only\n" + "\n# %%\n".join(parts) + "\n")
    return target


# ---------------------------------------------------------------- the parent: run and compare


def make_data(work: Path) -> dict:
    """DALI_extra stand-in and the docs' `data/images` folder; cwd two levels below `work`."""
    extra = work / "extra"
    if not (extra / "db").exists():
        subprocess.run([sys.executable, "-m", "conformance.extra_standin", str(extra)], cwd=REPO,
                       check=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    images = work / "data" / "images"
    if not (images / "file_list.txt").exists():
        from PIL import Image
        rng = np.random.default_rng(7)
        lines = []
        for label, cls in enumerate(("dog", "kitten")):
            (images / cls).mkdir(parents=True, exist_ok=True)
            for k in range(1, 12):
                h, w = int(rng.integers(120, 260)), int(rng.integers(120, 300))
                yy, xx = np.mgrid[0:h, 0:w]
                a = np.stack([(xx * 255 // w), (yy * 255 // h), ((xx + yy) * 3 + 40 * k) % 256], -1)
                a = (a + rng.integers(0, 40, a.shape)).clip(0, 255).astype(np.uint8)
                Image.fromarray(a).save(images / cls / f"{cls}_{k}.jpg", quality=90)
                lines.append(f"{cls}/{cls}_{k}.jpg {label}")
        (images / "file_list.txt").write_text("\n".join(lines) + "\n")
    return {"DALI_EXTRA_PATH": str(extra), "data": str(work / "data")}


def _fresh_cwd(work: Path, name: str, deep: bool) -> Path:
    """An empty working folder per run (files a notebook writes, such as index files, do not leak
    into the next one) where ../data and ../../data reach the sample images."""
    root = work / "run" / name
    shutil.rmtree(root, ignore_errors=True)
    (root / "a" / "b").mkdir(parents=True)
    for link in (root / "data", root / "a" / "data"):
        link.symlink_to(work / "data")
    return root / "a" / "b" if deep else root / "a"


def run_side(script: Path, side: str, work: Path, data: dict, seed_shift: int = 0) -> dict:
    out = work / f"{script.stem}.{side}.{seed_shift}.pkl"
    # torch_dali runs in the caller's interpreter (its own environment, with torchvision's codecs)
    py = DALI_PY if side == "dali" else sys.executable
    # DALI's index tools (tfrecord2idx, rec2idx) prepare data the same way for both sides
    path = f"{Path(DALI_PY).parent}:{os.environ.get('PATH', '')}"
    env = {**os.environ, "DALI_EXTRA_PATH": data["DALI_EXTRA_PATH"], "PYTHONPATH": str(REPO), "PATH": path}
    if side == "dali":
        env["PYTHONPATH"] = ""
    cwd = _fresh_cwd(work, out.stem, "../../data" in script.read_text())
    p = subprocess.run([py, str(Path(__file__).resolve()), "_child", str(script.resolve()), side, str(out),
                        str(seed_shift)], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if not out.exists():
        return {"runs": [], "errors": [{"cell": -1, "error": "crashed", "where": p.stderr[-800:]}], "cells": 0}
    with open(out, "rb") as f:
        return pickle.load(f)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def compare_output(d0: dict, others: list, t: dict) -> tuple[str, str]:
    """-> (verdict, detail); verdict in equal / equal-random / different. `others`: the same
    output from DALI's runs with other seeds."""
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
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            n = int(np.count_nonzero(diff))
            return "different", f"sample {i}: {n}/{a.size} values differ, max |d| {np.nanmax(diff):.3g}"
    return ("equal-random" if random_ else "equal"), ""


def _cell_key(runs: list, k: int) -> tuple:
    cell = runs[k]["cell"]
    return cell, sum(1 for r in runs[:k] if r["cell"] == cell)


def _by_cell(runs: list) -> dict:
    return {_cell_key(runs, k): r for k, r in enumerate(runs)}


def compare_script(script: Path, work: Path, data: dict) -> dict:
    d0 = run_side(script, "dali", work, data)
    d1 = run_side(script, "dali", work, data, seed_shift=1)
    d2 = run_side(script, "dali", work, data, seed_shift=2)  # a coin flip can repeat with one seed
    t = run_side(script, "torch_dali", work, data)
    rows = []
    # runs pair up by (cell, n-th run of that cell): a cell that fails on one side only does not
    # shift the runs of the cells after it
    keyed = [_by_cell(d["runs"]) for d in (d1, d2, t)]
    for k, r0 in enumerate(d0["runs"]):
        key = _cell_key(d0["runs"], k)
        r1, r2 = (kd.get(key, {"outputs": []}) for kd in keyed[:2])
        rt = keyed[2].get(key)
        for j, o0 in enumerate(r0["outputs"]):
            if rt is None or j >= len(rt["outputs"]):
                v, det = "missing", "torch_dali produced no such run/output"
            else:
                o1 = r1["outputs"][j] if j < len(r1["outputs"]) else {}
                o2 = r2["outputs"][j] if j < len(r2["outputs"]) else {}
                v, det = compare_output(o0, [o1, o2], rt["outputs"][j])
            rows.append({"run": k, "cell": r0["cell"], "pipe": r0["pipe"], "output": j, "verdict": v,
                         "detail": det})
    return {"script": script.stem, "dali_runs": len(d0["runs"]), "td_runs": len(t["runs"]),
            "dali_errors": d0["errors"], "td_errors": t["errors"], "rows": rows}


def summarize(res: dict) -> str:
    counts: dict = {}
    for r in res["rows"]:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    pipes = len({r["run"] for r in res["rows"]})
    return (f"{res['script']}: {pipes} runs, " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
            + f"; cell errors DALI {len(res['dali_errors'])}, torch_dali {len(res['td_errors'])}")


def table(results: list) -> str:
    """Markdown rows: script | pipeline runs | outputs equal | equal (random: shape/type) | different
    | cells failing on DALI / torch_dali."""
    rows = ["| script | runs | equal | equal-random | different | cell errors DALI / torch_dali |",
            "|---|---|---|---|---|---|"]
    for res in results:
        c: dict = {}
        for r in res["rows"]:
            c[r["verdict"]] = c.get(r["verdict"], 0) + 1
        other = sum(v for k, v in c.items() if k not in ("equal", "equal-random"))
        rows.append(f"| {res['script']} | {res['dali_runs']} | {c.get('equal', 0)} | {c.get('equal-random', 0)} | "
                    f"{other} | {len(res['dali_errors'])} / {len(res['td_errors'])} |")
    return "\n".join(rows) + "\n"


def main(argv=None) -> None:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "_child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("extract", help="notebook(s) -> scripts in DIR")
    e.add_argument("notebooks", type=Path, nargs="+")
    e.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare")
    c.add_argument("dir", type=Path)
    c.add_argument("--work", type=Path, default=Path("/tmp/dali_examples_work"))
    c.add_argument("--only", default="", help="comma-separated script stems")
    c.add_argument("--json", type=Path, help="write every row here")
    c.add_argument("--md", type=Path, help="write the summary table (markdown) here")
    a = ap.parse_args(argv)
    if a.cmd == "extract":
        a.out.mkdir(parents=True, exist_ok=True)
        for nb in a.notebooks:
            print(extract(nb, a.out))
        return
    a.work.mkdir(parents=True, exist_ok=True)
    data = make_data(a.work.resolve())
    only = {s for s in a.only.split(",") if s}
    results = []
    for script in sorted(a.dir.glob("*.py")):
        if only and script.stem not in only:
            continue
        res = compare_script(script, a.work.resolve(), data)
        results.append(res)
        print(summarize(res), flush=True)
        for r in res["rows"]:
            if r["verdict"] not in ("equal", "equal-random"):
                print(f"   run {r['run']} (cell {r['cell']}) out {r['output']}: {r['verdict']} {r['detail']}")
        for side in ("dali_errors", "td_errors"):
            for e in res[side]:
                print(f"   {side[:-7]} cell {e['cell']}: {e['error'][:300]}")
    if a.json:
        a.json.write_text(json.dumps(results, indent=1, default=str))
    if a.md:
        a.md.write_text(table(results))


if __name__ == "__main__":
    main()
