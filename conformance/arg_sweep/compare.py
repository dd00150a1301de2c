"""Outcome classes and the comparison of the two sides' results."""
from __future__ import annotations

from collections import Counter
from typing import Any


def stage(r: dict[str, Any]) -> str:
    """ok / build (refused when defined or built) / run / crash / hang."""
    s = r["stage"]
    return "build" if s in ("def", "build") else s


def dali_class(r: dict[str, Any]) -> str:
    """DALI's exception as the builtin class a test's assert_raises names."""
    return r["bases"][0] if r.get("bases") else r.get("exc", "")


def differ(d: dict[str, Any], o: dict[str, Any], base_d: dict | None, base_o: dict | None) -> str | None:
    """How our outcome `o` differs from DALI's `d` (None: it does not)."""
    sd, so = stage(d), stage(o)
    if sd in ("crash", "hang"):
        return None if so != "ok" else None  # DALI's own failure: nothing to match
    if sd == "ok" and so != "ok":
        return "we_refuse"
    if sd != "ok" and so == "ok":
        return "we_accept"
    if sd != "ok":
        if dali_class(d) not in o.get("bases", []):
            return "class"
        return "stage" if sd != so else None
    od, oo = d.get("out"), o.get("out")
    if not isinstance(od, list) or not isinstance(oo, list):
        return None
    if len(od) != len(oo) or any(a[:2] != b[:2] for a, b in zip(od, oo)):
        return "output"
    same_base = (base_d and base_o and isinstance(base_d.get("out"), list) and isinstance(base_o.get("out"), list)
                 and [x[2] for x in base_d["out"]] == [x[2] for x in base_o["out"]])
    if same_base and [x[2] for x in od] != [x[2] for x in oo]:
        return "values"
    return None


def describe(r: dict[str, Any]) -> str:
    s = stage(r)
    if s == "ok":
        out = r.get("out")
        return "ok " + (" ".join(f"{x[0]}{x[1][0]}" for x in out) if isinstance(out, list) else str(out))
    return f"{s}:{r.get('exc')}"


def tally(rows: list[dict[str, Any]]) -> Counter:
    return Counter(r["kind"] for r in rows)
