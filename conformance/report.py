"""docs/conformance.md: per file, the cases real DALI passes here and how many torch_dali passes,
with torch_dali's failures grouped by reason."""
from __future__ import annotations

import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .classify import group_key
from .runner import TaskResult
from .shim import STAND_INS
from .suite import CATEGORIES, expand_ids

REPO = Path(__file__).resolve().parent.parent


@dataclass
class FileScore:
    module: str
    counted: int
    strict_pass: int
    pass_: int  # with stand-ins where the strict run could not import the module
    reasons: Counter = field(default_factory=Counter)  # group key -> count (of counted cases not passed)
    examples: dict[str, str] = field(default_factory=dict)  # group key -> a full reason and where
    strict_import_error: str | None = None
    budget_exhausted: bool = False


def _outcome(case_id: str, res: TaskResult | None) -> tuple[bool, str, str]:
    """(passed, reason, where) of one counted case on torch_dali's side."""
    if res is None:
        return False, "runner: torch_dali side not run", ""
    if res.import_error:
        return False, f"import: {res.import_error}", res.import_where
    case = res.cases.get(case_id)
    if case is None:
        base = case_id.rsplit(":", 1)[0]
        gen = res.cases.get(f"{base}:collect")
        if gen is not None:
            return False, f"generator failed: {gen['reason']}", gen.get("where", "")
        if res.stopped:
            return False, res.stopped, ""
        return False, "not collected on torch_dali's side (the test yielded fewer cases)", ""
    if case["status"] == "pass":
        return True, "", ""
    prefix = {"skip": "skipped: ", "timeout": "", "memory": "", "crash": ""}.get(case["status"], "")
    return False, prefix + case["reason"], case.get("where", "")


def score(module: str, entry: dict[str, Any], strict: TaskResult | None,
          stand_in: TaskResult | None) -> FileScore:
    ids = expand_ids(entry.get("passed", {}))
    fs = FileScore(module, len(ids), 0, 0)
    used = stand_in if (stand_in is not None and strict is not None and strict.import_error) else strict
    if strict is not None:
        fs.strict_import_error = strict.import_error
    fs.budget_exhausted = bool(used is not None and used.stopped)
    for cid in ids:
        fs.strict_pass += _outcome(cid, strict)[0]
        ok, reason, where = _outcome(cid, used)
        if ok:
            fs.pass_ += 1
            continue
        key = group_key(reason)
        fs.reasons[key] += 1
        fs.examples.setdefault(key, f"{reason[:300]}" + (f" (at {where})" if where else ""))
    return fs


def _pct(a: int, b: int) -> str:
    if not b:
        return "-"
    p = 100 * a / b
    return f"{p:.1f}%" if 0 < p < 10 else f"{p:.0f}%"


def _git_head() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def render(baseline: dict[str, Any], strict: dict[str, TaskResult], stand_in: dict[str, TaskResult],
           command: str, modules: list[str] | None = None, machine: str = "this CPU-only machine",
           baseline_file: str = "conformance/baseline.json") -> str:
    mods = modules if modules is not None else list(baseline["modules"])
    scores = {m: score(m, baseline["modules"][m], strict.get(m), stand_in.get(m)) for m in mods}
    tot = Counter()
    for m in mods:
        e = baseline["modules"][m]
        tot["collected"] += e["collected"]
        for c in CATEGORIES:
            tot[c] += e["counts"].get(c, 0)
        tot["counted"] += scores[m].counted
        tot["ours_strict"] += scores[m].strict_pass
        tot["ours"] += scores[m].pass_
    out = [
        "# DALI conformance: DALI's own tests run against torch_dali",
        "",
        f"Generated on {time.strftime('%Y-%m-%d')} by `{command}` (torch_dali at `{_git_head()}`; control: "
        f"NVIDIA DALI {baseline['dali_version']}, baseline of {baseline['generated']} in "
        f"`{baseline_file}`). Do not edit by hand. The runner, the shim and what they patch "
        "are described in `conformance/README.md`.",
        "",
        "Each test case (each generator yield, each parameter set) of DALI's test files in "
        f"`shared/dali_conformance/tests` runs on {machine} twice: under real DALI (the "
        "control) and under torch_dali through the `nvidia.dali` import shim. Only the cases real "
        "DALI passes here are counted; cases that need a GPU, DALI_extra data or a package not "
        "installed are not runnable here on either side and are counted apart, as are the cases "
        "DALI itself fails or skips here.",
        "",
        "## Totals",
        "",
        f"- Cases collected under DALI: {tot['collected']}; not runnable here: {tot['gpu']} need a GPU, "
        f"{tot['extra']} need DALI_extra, {tot['package']} need a package not installed; "
        f"{tot['excluded']} are tagged `slow` (not run); DALI skips {tot['skip']}, fails "
        f"{tot['dali_fails']}, times out on {tot['timeout']} and crashes on {tot['crash']}.",
        f"- **Real DALI passes {tot['counted']} cases here. torch_dali passes {tot['ours_strict']} of them "
        f"({_pct(tot['ours_strict'], tot['counted'])})**; with the import stand-ins "
        f"({', '.join('`nvidia.dali.' + n + '`' for n in STAND_INS)}), {tot['ours']} "
        f"({_pct(tot['ours'], tot['counted'])}).",
        "",
        "## Per file",
        "",
        "Columns: cases collected under DALI; DALI passes (the counted cases); not runnable here "
        "(GPU / DALI_extra / package); DALI skips, fails or times out here, or `slow` (not counted); "
        "torch_dali passes of the counted cases, strict and with the import stand-ins.",
        "",
        "| file | collected | DALI passes | GPU | DALI_extra | package | DALI skip/fail/slow | "
        "torch_dali | % | with stand-ins | % |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in sorted(mods, key=lambda m: baseline["modules"][m]["file"]):
        e, s, c = baseline["modules"][m], scores[m], baseline["modules"][m]["counts"]
        other = c.get("skip", 0) + c.get("dali_fails", 0) + c.get("excluded", 0) + c.get("timeout", 0) + c.get("crash", 0)
        name = f"`{e['file']}`" + (" (not importable under DALI)" if e.get("import_error") else "")
        flag = " (run stopped early)" if s.budget_exhausted else ""
        out.append(f"| {name} | {e['collected']} | {s.counted} | {c.get('gpu', 0)} | {c.get('extra', 0)} | "
                   f"{c.get('package', 0)} | {other} | {s.strict_pass}{flag} | {_pct(s.strict_pass, s.counted)} | "
                   f"{s.pass_} | {_pct(s.pass_, s.counted)} |")
    out.append(f"| **total** | {tot['collected']} | {tot['counted']} | {tot['gpu']} | {tot['extra']} | "
               f"{tot['package']} | {tot['skip'] + tot['dali_fails'] + tot['excluded'] + tot['timeout'] + tot['crash']} | "
               f"{tot['ours_strict']} | {_pct(tot['ours_strict'], tot['counted'])} | {tot['ours']} | "
               f"{_pct(tot['ours'], tot['counted'])} |")
    on_purpose = REPO / "conformance" / "on_purpose.md"  # written by hand: the choices, with why
    out += ["", "## Where we differ on purpose", ""]
    out += ([on_purpose.read_text().strip(), ""] if on_purpose.exists() else
            ["None are recorded yet: every counted case torch_dali does not pass is a gap, not a choice.", ""])
    strict_blockers = Counter()
    for s in scores.values():
        if s.strict_import_error and s.counted:
            strict_blockers[group_key("import: " + s.strict_import_error)] += s.counted
    if strict_blockers:
        out += ["## What stops whole files in the strict run", "",
                "Counted cases lost because the test module cannot be imported through the shim at all "
                "(the stand-ins column runs those files again with the stand-ins):", ""]
        out += [f"- {n} x `{_md(k)}`" for k, n in strict_blockers.most_common()]
        out.append("")
    overall = Counter()
    examples: dict[str, str] = {}
    for s in scores.values():
        overall.update(s.reasons)
        for k, v in s.examples.items():
            examples.setdefault(k, v)
    out += ["## The most common failure reasons (all files, with the stand-ins)", "",
            "Reasons are grouped with numbers, addresses and temporary paths blanked (`N`); one full "
            "example of each follows it.", ""]
    for k, n in overall.most_common(25):
        out.append(f"1. **{n}** x `{_md(k)}`  \n   e.g. {_md_plain(examples[k])}")
    out += ["", "## Failure reasons per file", "",
            "For each file with counted cases torch_dali does not all pass: the five most common reasons.", ""]
    for m in sorted(mods, key=lambda m: baseline["modules"][m]["file"]):
        s = scores[m]
        if not s.counted or s.pass_ == s.counted:
            continue
        out.append(f"### `{baseline['modules'][m]['file']}`: {s.pass_} of {s.counted}")
        out.append("")
        for k, n in s.reasons.most_common(5):
            out.append(f"- {n} x `{_md(k)}`")
        if len(s.reasons) > 5:
            out.append(f"- ... and {sum(s.reasons.values()) - sum(n for _, n in s.reasons.most_common(5))} "
                       f"more in {len(s.reasons) - 5} other groups")
        out.append("")
    unimportable = [(m, e) for m, e in baseline["modules"].items() if m in mods and e.get("import_error")]
    if unimportable:
        out += ["## Files real DALI cannot import or collect here", ""]
        out += [f"- `{e['file']}` ({e.get('import_category', '?')}): {_md_plain(e['import_error'][:200])}"
                for m, e in unimportable]
        out.append("")
    return "\n".join(out) + "\n"


def _md(s: str) -> str:
    return s.replace("`", "'").replace("|", "\\|")


def _md_plain(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")
