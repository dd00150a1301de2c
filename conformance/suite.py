"""The test modules, running a side over many of them, and the baseline of what DALI passes here."""
from __future__ import annotations

import hashlib
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .classify import control_category, import_category
from .runner import Settings, TaskResult, run_module

HELPERS = {"test_utils", "test_noise_utils"}  # DALI helper modules named like tests, with no tests
EXTRA_MARKER = "DALI_extra-not-available"  # DALI_EXTRA_PATH points at a folder of this name


def discover(tests_dir: Path) -> list[str]:
    """Module names as DALI imports them: flat `test_x`, plus `checkpointing.test_x`, `reader.test_x`."""
    mods = [p.stem for p in sorted(tests_dir.glob("test_*.py")) if p.stem not in HELPERS]
    for pkg in ("checkpointing", "reader"):
        mods += [f"{pkg}.{p.stem}" for p in sorted((tests_dir / pkg).glob("test_*.py"))]
    return mods


def module_file(tests_dir: Path, module: str) -> Path:
    return tests_dir / (module.replace(".", "/") + ".py")


def file_sha(tests_dir: Path, module: str) -> str:
    return hashlib.sha256(module_file(tests_dir, module).read_bytes()).hexdigest()[:16]


def run_side(python: str, side: str, modules: list[str], settings: Settings, jobs: int,
             ids: dict[str, list[str]] | None = None, stand_ins: bool = False,
             store: Path | None = None, label: str | None = None) -> dict[str, TaskResult]:
    """Runs each module (in `jobs` parallel workers); saves each result as it finishes."""
    label = label or side
    out: dict[str, TaskResult] = {}
    todo = [m for m in modules if ids is None or ids.get(m)]

    def one(m: str) -> TaskResult:
        return run_module(python, side, m, settings, ids=None if ids is None else ids[m],
                          stand_ins=stand_ins, log_name=label)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futs = {pool.submit(one, m): m for m in todo}
        for fut in as_completed(futs):
            m = futs[fut]
            res = out[m] = fut.result()
            n_pass = sum(c["status"] == "pass" for c in res.cases.values())
            print(f"[{label}] {m}: {n_pass}/{len(res.cases)} pass in {res.elapsed:.0f} s"
                  + (f"; import: {res.import_error[:100]}" if res.import_error else ""), file=sys.stderr, flush=True)
            if store is not None:
                save_result(store / label / f"{m}.json", res)
    return out


def save_result(path: Path, res: TaskResult) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(res), indent=0, sort_keys=True))


def load_results(folder: Path) -> dict[str, TaskResult]:
    out = {}
    for p in sorted(folder.glob("*.json")):
        d = json.loads(p.read_text())
        out[d["module"]] = TaskResult(**d)
    return out


# -- the baseline: which cases real DALI passes here --------------------------------------------------

def _split(case_id: str) -> tuple[str, int | None]:
    base, _, idx = case_id.rpartition(":")
    if base and idx.isdigit():
        return base, int(idx)
    return case_id, None


def compress_ids(ids: list[str]) -> dict[str, str]:
    """`m.f:1`, `m.f:2`, `m.f:5` -> {"m.f": "1-2,5"}; a case without an index -> {"m.g": ""}."""
    by_base: dict[str, list[int]] = {}
    for i in ids:
        base, idx = _split(i)
        by_base.setdefault(base, [])
        if idx is not None:
            by_base[base].append(idx)
    out = {}
    for base, nums in sorted(by_base.items()):
        nums.sort()
        parts, k = [], 0
        while k < len(nums):
            j = k
            while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
                j += 1
            parts.append(str(nums[k]) if j == k else f"{nums[k]}-{nums[j]}")
            k = j + 1
        out[base] = ",".join(parts)
    return out


def expand_ids(compressed: dict[str, str]) -> list[str]:
    out = []
    for base, spec in compressed.items():
        if not spec:
            out.append(base)
            continue
        for part in spec.split(","):
            a, _, b = part.partition("-")
            out += [f"{base}:{n}" for n in range(int(a), int(b or a) + 1)]
    return out


CATEGORIES = ("pass", "gpu", "extra", "package", "skip", "excluded", "timeout", "crash", "dali_fails")


def module_baseline(res: TaskResult, tests_dir: Path) -> dict[str, Any]:
    entry: dict[str, Any] = {"file": str(module_file(tests_dir, res.module).relative_to(tests_dir)),
                             "sha": file_sha(tests_dir, res.module)}
    counts = {c: 0 for c in CATEGORIES}
    passed, fail_reasons = [], {}
    if res.import_error:
        entry["import_error"] = res.import_error
        entry["import_category"] = import_category(res.import_error, EXTRA_MARKER)
    for cid, case in res.cases.items():
        cat = control_category(case, EXTRA_MARKER)
        counts[cat] += 1
        if cat == "pass":
            passed.append(cid)
        elif cat == "dali_fails":
            fail_reasons[case["reason"]] = fail_reasons.get(case["reason"], 0) + 1
    entry["collected"] = len(res.cases)
    entry["counts"] = counts
    entry["passed"] = compress_ids(passed)
    entry["dali_fail_reasons"] = sorted(fail_reasons.items(), key=lambda kv: -kv[1])[:5]
    entry["seconds"] = round(res.elapsed, 1)
    if res.stopped:
        entry["stopped"] = res.stopped
    return entry


def make_baseline(results: dict[str, TaskResult], tests_dir: Path, dali_version: str,
                  old: dict[str, Any] | None = None) -> dict[str, Any]:
    """Entries for the modules run now replace those of `old`; the rest are kept."""
    modules = dict((old or {}).get("modules", {}))
    for m, res in results.items():
        modules[m] = module_baseline(res, tests_dir)
    return {"dali_version": dali_version, "generated": time.strftime("%Y-%m-%d"),
            "note": "Which cases real DALI passes on a CPU-only machine without DALI_extra; written by "
                    "`make conformance` (python -m conformance run) when the DALI venv is there.",
            "modules": dict(sorted(modules.items()))}
