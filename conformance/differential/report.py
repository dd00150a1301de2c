"""Summaries of verdicts: per op counts, and differences bucketed by cause."""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path


def bucket(v: dict) -> str:
    """A difference's bucket: its cause plus the error class, or the differing dtypes/layouts."""
    detail = v.get("detail", "")
    if v["cause"] in ("dali_refuses", "ours_refuses"):
        return f"{v['cause']} ({str(detail).split(':')[0]})"
    if v["cause"] == "values":
        off = "off by 1" if detail["max_abs"] == 1 and detail.get("ulps") is None else "values"
        return f"values ({off})" if off == "off by 1" else "values"
    return f"{v['cause']}: {re.sub(r'[0-9]+', 'N', str(detail))[:60]}"


def summarize(verdicts: list[dict], brief: bool = False) -> str:
    per = defaultdict(Counter)
    buckets = defaultdict(list)
    for v in verdicts:
        per[v["family"]][v["verdict"]] += 1
        if v["verdict"] == "differ":
            buckets[(v["family"], bucket(v))].append(v["id"])
    lines = ["| op | cases | agree | both refuse | differ | skipped (DALI fails) |", "|---|---|---|---|---|---|"]
    tot = Counter()
    for fam in sorted(per):
        c = per[fam]
        tot.update(c)
        lines.append(f"| {fam} | {sum(c.values())} | {c['agree']} | {c['both_refuse']} | {c['differ']} | {c['skip']} |")
    lines.append(f"| **all** | {sum(tot.values())} | {tot['agree']} | {tot['both_refuse']} | {tot['differ']} | {tot['skip']} |")
    causes = Counter(v["cause"] for v in verdicts if v["verdict"] in ("differ", "skip"))
    lines += ["", "Differences and skips by cause: " + ", ".join(f"{k} {n}" for k, n in causes.most_common()) + "."]
    lines += ["", "| op | difference | cases | examples |", "|---|---|---|---|"]
    for (fam, b), ids in sorted(buckets.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        lines.append(f"| {fam} | {b} | {len(ids)} | {', '.join(ids[:3])} |")
    return "\n".join(lines)


def write_doc(verdicts: list[dict], doc: Path, note: str, runs: str = "") -> None:
    text = Path(note).read_text() if note else ""
    doc.write_text("# Differential fuzzing: torch_dali against DALI 2.4 (CPU)\n\n"
                   "Written by `python -m conformance.differential report` (conformance/README.md, "
                   "\"Differential fuzzing\"). Each case: one op on a seeded random batch, run under both. "
                   + runs + "\n\n" + summarize(verdicts) + "\n" + ("\n" + text if text else ""))
