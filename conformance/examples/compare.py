"""Compare two runnb.py record files: python compare.py dali.pkl ours.pkl [-v]"""
import pickle
import sys

import numpy as np


def diff(a, b, rnd, path=""):
    """Returns a list of difference strings."""
    if a["kind"] != b["kind"]:
        return [f"{path}: kind {a['kind']} vs {b['kind']}" + (f" ({b.get('value')})" if b["kind"] == "error" else "")
                + (f" (dali: {a.get('value')})" if a["kind"] == "error" else "")]
    k = a["kind"]
    if k in ("ok",):
        return []
    if k == "error":
        return []  # both failed
    if k == "scalar":
        return [] if (rnd or a["value"] == b["value"]) else [f"{path}: {a['value']!r} vs {b['value']!r}"]
    if k in ("list", "batch"):
        out = []
        if k == "batch" and a.get("layout") != b.get("layout"):
            out.append(f"{path}: batch layout {a.get('layout')!r} vs {b.get('layout')!r}")
        if len(a["items"]) != len(b["items"]):
            return out + [f"{path}: length {len(a['items'])} vs {len(b['items'])}"]
        for i, (x, y) in enumerate(zip(a["items"], b["items"])):
            out += diff(x, y, rnd, f"{path}[{i}]")
        return out
    if k == "dict":
        out = []
        if set(a["items"]) != set(b["items"]):
            out.append(f"{path}: keys {sorted(a['items'])} vs {sorted(b['items'])}")
        for key in a["items"]:
            if key in b["items"]:
                out += diff(a["items"][key], b["items"][key], rnd, f"{path}.{key}")
        return out
    out = []
    for f in ("shape", "dtype", "layout"):
        if a[f] != b[f]:
            out.append(f"{path}: {f} {a[f]} vs {b[f]}")
    if out or rnd:
        return out
    va, vb = a["value"], b["value"]
    if va.dtype.kind in "fc":
        same = np.array_equal(va, vb, equal_nan=True)
    else:
        same = np.array_equal(va, vb)
    if not same:
        try:
            d = np.abs(va.astype(np.float64) - vb.astype(np.float64))
            out.append(f"{path}: values differ: max|d|={d.max():.4g}, {int((d > 0).sum())}/{d.size} elements")
        except Exception as e:  # noqa: BLE001
            out.append(f"{path}: values differ ({e})")
    return out


def main():
    ra = pickle.load(open(sys.argv[1], "rb"))
    rb = pickle.load(open(sys.argv[2], "rb"))
    verbose = "-v" in sys.argv
    da = {n: (r, s) for n, r, s in ra}
    db = {n: (r, s) for n, r, s in rb}
    eq = ne = 0
    for name, (rnd, sa) in da.items():
        if name not in db:
            print(f"MISSING in ours: {name}")
            ne += 1
            continue
        sb = db[name][1]
        if sa["kind"] == "error" and name.startswith("cell"):
            print(f"DALI FAILS {name}: {sa['value'][:200]}")
        d = diff(sa, sb, rnd, name)
        if d:
            ne += 1
            print(f"DIFF {name}:")
            for line in d[:8]:
                print("   ", line[:300])
            if sb.get("tb") and verbose:
                print(sb["tb"])
        else:
            eq += 1
    for name in db:
        if name not in da:
            print(f"EXTRA in ours: {name}")
    print(f"== equal {eq}, different {ne}")


main()
