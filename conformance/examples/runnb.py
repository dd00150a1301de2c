"""Run a notebook script (cells split by '# %%') under DALI 2.4 or torch_dali (conformance shim).

Used by run_all.sh (docs/dali_examples_dynamic.md).

usage: python runnb.py dali|ours SCRIPT OUT.pkl
Each cell runs in one shared namespace; a failing cell is recorded and the next one still runs.
`rec(name, obj, rnd=False)` is injected: it stores shape/dtype/layout/values of obj (rnd: values
are random, compare by shape/type only).
"""
import os
import pickle
import sys
import time
import traceback

side, script, out = sys.argv[1:4]
if side == "ours":
    sys.path.insert(0, os.environ.get("TORCH_DALI_REPO", os.getcwd()))
    from conformance import shim

    shim.install()
ROOT = os.environ.get("EX_ROOT", "/tmp/dali_examples")
os.environ.setdefault("DALI_EXTRA_PATH", os.path.join(ROOT, "extra"))
if side == "dali" and os.environ.get("EX_CPU_TORCH_PATCH", "1") == "1":
    # Harness patch (CPU-only machine): DALI 2.4 asks torch for the current CUDA stream for every
    # torch tensor it is fed, CPU ones included, and that raises without a CUDA driver. A CPU
    # tensor needs no stream, so answer None for those; nothing else changes.
    import nvidia.dali.types as _t

    _orig = _t._get_default_stream_for_array

    def _no_stream_for_cpu(array):
        a = array[0] if isinstance(array, list) and len(array) else array
        if _t._is_torch_tensor(a) and a.device.type == "cpu":
            return None
        return _orig(array)

    _t._get_default_stream_for_array = _no_stream_for_cpu
import numpy as np  # noqa: E402

records = []


def _layout(obj):
    lay = getattr(obj, "layout", None)
    if callable(lay):
        try:
            lay = lay()
        except Exception:
            lay = None
    return None if lay is None else str(lay)


def _arr(obj):
    if hasattr(obj, "detach") and hasattr(obj, "numpy"):  # torch
        return obj.detach().cpu().numpy()
    if isinstance(obj, np.ndarray):
        return obj
    if hasattr(obj, "cpu") and not hasattr(obj, "tensors"):
        try:
            obj = obj.cpu()
        except Exception:
            pass
    return np.asarray(obj)


def summarize(obj):
    """A nested summary: list of samples for batches, dict for a tensor."""
    if isinstance(obj, dict):
        return {"kind": "dict", "items": {str(k): summarize(v) for k, v in obj.items()}}
    if isinstance(obj, (list, tuple)):
        return {"kind": "list", "items": [summarize(v) for v in obj]}
    if isinstance(obj, (int, float, str, bool, type(None))):
        return {"kind": "scalar", "value": obj}
    tname = type(obj).__name__
    if tname in ("Batch",) or hasattr(obj, "tensors"):
        items = [summarize(t) for t in obj.tensors]
        return {"kind": "batch", "layout": _layout(obj), "items": items}
    if tname.startswith("TensorList"):
        if hasattr(obj, "as_cpu"):
            obj_c = obj.as_cpu()
        else:
            obj_c = obj
        items = [summarize(np.array(obj_c[i])) for i in range(len(obj_c))]
        for it in items:
            it["layout"] = _layout(obj)
        return {"kind": "batch", "layout": _layout(obj), "items": items}
    a = _arr(obj)
    return {"kind": "tensor", "shape": tuple(a.shape), "dtype": str(a.dtype),
            "layout": _layout(obj), "value": a.copy()}


def rec(name, obj, rnd=False):
    try:
        records.append((name, rnd, summarize(obj)))
    except Exception as e:  # noqa: BLE001
        records.append((name, rnd, {"kind": "error", "value": f"summarize: {type(e).__name__}: {e} (cause: {e.__cause__!r})"}))


src = open(script).read()
cells = src.split("\n# %%")
ns = {"__name__": "__main__", "rec": rec}
cell_dir = os.path.join(ROOT, "cells")
os.makedirs(cell_dir, exist_ok=True)
t0 = time.time()
for i, cell in enumerate(cells):
    try:
        # a real file per cell: DALI 2.4's dynamic mode behaves differently for code whose source
        # file does not exist (measured: warp_affine's list `matrix` then fails its shape check)
        cell_path = os.path.join(cell_dir, f"{os.path.basename(script)[:-3]}_{side}_cell{i}.py")
        with open(cell_path, "w") as cf:
            cf.write("\n" * (src.count("\n", 0, src.find(cell)) if i else 0) + cell)
        exec(compile(open(cell_path).read(), cell_path, "exec"), ns)
        records.append((f"cell{i}", False, {"kind": "ok"}))
    except BaseException as e:  # noqa: BLE001
        tb = traceback.format_exc(limit=-3)
        records.append((f"cell{i}", False, {"kind": "error", "value": f"{type(e).__name__}: {e}", "tb": tb}))
        print(f"[{side}] cell{i} failed: {type(e).__name__}: {e}", file=sys.stderr)
if side == "ours":
    leaks = shim.real_dali_leaks()
    if leaks:
        records.append(("__leaks__", False, {"kind": "error", "value": str(leaks[:5])}))
with open(out, "wb") as f:
    pickle.dump(records, f)
print(f"[{side}] {len(cells)} cells, {len(records)} records, {time.time() - t0:.1f}s")
