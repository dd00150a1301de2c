"""Compares one case's results from both sides (pure NumPy: unit-tested without DALI).

A result is `(meta, arrays)` as `worker.py` writes them. Verdicts: `agree`, `both_refuse`, `skip`
(DALI crashed, hung or is not deterministic there) or `differ` with a cause: `dali_refuses`,
`ours_refuses`, `outputs`, `dtype`, `layout`, `shape`, `values` (integers: any element;
floats: past `RTOL`/`ATOL` scaled by the reference's magnitude).
"""
from __future__ import annotations

import re

import numpy as np

RTOL = 1e-5   # floats: relative to each reference element
ATOL = 1e-5   # ... plus this fraction of the output's largest reference magnitude (at least 1)
SIDE_FAILS = ("Timeout", "Crash")


def gist(message: str) -> str:
    """The reason in an error message: the last line of DALI's text after its last "encountered:"
    (before the C++ context or stack trace), else the last line; the operator's traceback dropped."""
    text = message.split("encountered:")[-1].split("Stacktrace")[0].split("C++ context")[0]
    lines = [ln.strip() for ln in text.splitlines()
             if ln.strip() and not ln.startswith("Current pipeline object is no longer valid")]
    return re.sub(r"^\[/opt/dali/[^]]*\] ", "", lines[-1] if lines else "")[:200]


def _ulps(a: np.ndarray, b: np.ndarray) -> int:
    """Largest distance in units in the last place between finite float32 values."""
    fa, fb = a.astype(np.float32).view(np.int32).astype(np.int64), b.astype(np.float32).view(np.int32).astype(np.int64)
    fa = np.where(fa < 0, -(fa & 0x7FFFFFFF), fa)
    fb = np.where(fb < 0, -(fb & 0x7FFFFFFF), fb)
    finite = np.isfinite(a) & np.isfinite(b)
    return int(np.abs(fa - fb)[finite].max(initial=0))


def compare_values(ref: np.ndarray, got: np.ndarray) -> dict | None:
    """None when equal (floats: within tolerance, NaNs where the reference has NaNs); else a summary."""
    if ref.size == 0:
        return None
    if np.issubdtype(ref.dtype, np.floating):
        r, g = ref.astype(np.float64), got.astype(np.float64)
        scale = max(1.0, float(np.abs(r[np.isfinite(r)]).max(initial=0)))
        close = np.isclose(g, r, rtol=RTOL, atol=ATOL * scale, equal_nan=True)
        if close.all():
            return None
        d = np.abs(g - r)[~close]
        d = d[np.isfinite(d)]
        return {"bad": int((~close).sum()), "of": int(ref.size), "max_abs": float(d.max()) if d.size else np.inf,
                "ulps": _ulps(ref, got)}
    if np.array_equal(ref, got):
        return None
    d = np.abs(ref.astype(np.int64) - got.astype(np.int64))
    return {"bad": int((d != 0).sum()), "of": int(ref.size), "max_abs": int(d.max())}


def compare(dali: tuple[dict, dict], ours: tuple[dict, dict], values: bool = True) -> dict:
    """`values=False` (random ops) compares outputs' types, layouts and shapes only."""
    (dm, da), (om, oa) = dali, ours
    if dm.get("error") in SIDE_FAILS:
        return {"verdict": "skip", "cause": "dali_" + dm["error"].lower()}
    if "error" in dm and "error" in om:
        return {"verdict": "both_refuse", "cause": ""}
    if "error" in dm:
        return {"verdict": "differ", "cause": "dali_refuses", "detail": f"{dm['error']}: {gist(dm['message'])}"}
    if "error" in om:
        return {"verdict": "differ", "cause": "ours_refuses", "detail": f"{om['error']}: {gist(om['message'])}"}
    if len(dm["outputs"]) != len(om["outputs"]):
        return {"verdict": "differ", "cause": "outputs", "detail": f"{len(dm['outputs'])} vs {len(om['outputs'])}"}
    for k, (d, o) in enumerate(zip(dm["outputs"], om["outputs"])):
        for cause in ("dtype", "layout", "shapes"):
            if d[cause] != o[cause]:
                return {"verdict": "differ", "cause": cause.rstrip("s"), "output": k,
                        "detail": f"DALI {d[cause]} ours {o[cause]}"}
        if not values:
            continue
        for i in range(len(d["shapes"])):
            diff = compare_values(da[f"o{k}_{i}"], oa[f"o{k}_{i}"])
            if diff:
                return {"verdict": "differ", "cause": "values", "output": k, "sample": i, "detail": diff}
    return {"verdict": "agree", "cause": ""}
