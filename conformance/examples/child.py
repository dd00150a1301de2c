"""One side's run of a notebook script (cells split by `# %%`), in a process of its own:
    python -m conformance.examples.child dali|torch_dali SCRIPT OUT.pkl SEED_SHIFT CELL_DIR

Each cell runs in one shared namespace from a real file of its own (DALI 2.4's dynamic mode reads
an op call's source file: for code without one, `warp_affine`'s list `matrix` failed its shape
check); a failing cell is recorded and the next one still runs. Recorded: every `Pipeline.run()`
and every batch a `DALIGenericIterator` hands out (per output: layout, per-sample arrays), and what
the script passes to `rec(name, value, rnd=False)` (injected; rnd: values are random, compare by
shape and type). Pipelines built for a GPU run with `device_id=None`; SEED_SHIFT moves every
pipeline's seed (DALI's side runs thrice to tell random outputs from fixed ones).
"""
from __future__ import annotations

import functools
import inspect
import os
import pickle
import random
import sys
import traceback
from pathlib import Path
from unittest import mock

import numpy as np

REPO = Path(__file__).resolve().parents[2]
_CELL = [0]


def _stub_plotting() -> None:
    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.gridspec", "matplotlib.patches",
                 "matplotlib.image", "IPython", "IPython.display", "mpl_toolkits", "mpl_toolkits.axes_grid1"):
        sys.modules[name] = mock.MagicMock(name=name)


def _cpu_tensors_need_no_stream() -> None:
    """DALI's side, on a machine without a CUDA driver: DALI 2.4 asks torch for the current CUDA
    stream for every torch tensor it is fed, CPU ones included, and that raises. A CPU tensor needs
    no stream, so the answer for those is None; nothing else changes."""
    import nvidia.dali.types as t
    orig = t._get_default_stream_for_array

    def no_stream_for_cpu(array):
        a = array[0] if isinstance(array, list) and len(array) else array
        if t._is_torch_tensor(a) and a.device.type == "cpu":
            return None
        return orig(array)
    t._get_default_stream_for_array = no_stream_for_cpu


def _samples(t) -> list:
    if hasattr(t, "as_cpu"):
        t = t.as_cpu()
    return [np.array(t[i]) if hasattr(t, "__getitem__") else np.array(t.at(i)) for i in range(len(t))]


def _outputs(outs) -> list:
    rec = []
    for o in (outs if isinstance(outs, (tuple, list)) else (outs,)):
        try:
            rec.append({"layout": (o.layout() if hasattr(o, "layout") else "") or "", "samples": _samples(o)})
        except Exception as e:  # noqa: BLE001 - an output we cannot read is itself a finding
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
        runs.append({"pipe": getattr(self, "_nb_index", 0), "cell": _CELL[0], "outputs": _outputs(outs)})
        return outs

    __init__.__signature__ = inspect.signature(init)  # getfullargspec ignores __wrapped__
    Pipeline.__init__, Pipeline.run = __init__, run_


def _patch_iterator(runs: list) -> None:
    try:
        from nvidia.dali.plugin.pytorch import DALIGenericIterator as It
    except Exception:  # noqa: BLE001 - no plugin on this side: nothing to record
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


def _layout(obj):
    lay = getattr(obj, "layout", None)
    if callable(lay):
        try:
            lay = lay()
        except Exception:  # noqa: BLE001
            lay = None
    return None if lay is None else str(lay)


def summarize(obj) -> dict:
    """What rec() keeps: nested lists / dicts / batches down to arrays with shape, dtype, layout."""
    if isinstance(obj, dict):
        return {"kind": "dict", "items": {str(k): summarize(v) for k, v in obj.items()}}
    if isinstance(obj, (list, tuple)):
        return {"kind": "list", "items": [summarize(v) for v in obj]}
    if isinstance(obj, (int, float, str, bool, type(None))):
        return {"kind": "scalar", "value": obj}
    if type(obj).__name__ == "Batch" or hasattr(obj, "tensors"):
        return {"kind": "batch", "layout": _layout(obj), "items": [summarize(t) for t in obj.tensors]}
    if type(obj).__name__.startswith("TensorList"):
        items = [summarize(a) for a in _samples(obj)]
        for it in items:
            it["layout"] = _layout(obj)
        return {"kind": "batch", "layout": _layout(obj), "items": items}
    if hasattr(obj, "detach") and hasattr(obj, "numpy"):  # torch
        a = obj.detach().cpu().numpy()
    elif isinstance(obj, np.ndarray):
        a = obj
    else:
        if hasattr(obj, "cpu") and not hasattr(obj, "tensors"):
            try:
                obj = obj.cpu()
            except Exception:  # noqa: BLE001
                pass
        a = np.asarray(obj)
    return {"kind": "tensor", "shape": tuple(a.shape), "dtype": str(a.dtype), "layout": _layout(obj),
            "value": a.copy()}


def main(side: str, script: str, out: str, seed_shift: int, cell_dir: str) -> None:
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        sys.path.pop(0)  # run as a file: this folder's modules are not the notebook's
    random.seed(0)
    np.random.seed(0)
    _stub_plotting()
    if side == "torch_dali":
        sys.path.insert(0, str(REPO))
        from conformance import shim
        shim.install()
    else:
        _cpu_tensors_need_no_stream()
    import nvidia.dali.pipeline as dp
    runs: list = []
    records: list = []
    _patch_pipeline(dp.Pipeline, runs, seed_shift)
    _patch_iterator(runs)

    def rec(name, obj, rnd=False):
        try:
            records.append((name, rnd, summarize(obj)))
        except Exception as e:  # noqa: BLE001
            records.append((name, rnd, {"kind": "error", "value": f"summarize: {type(e).__name__}: {e}"}))

    src = Path(script).read_text()
    cells = src.split("\n# %%")
    ns = {"__name__": "__main__", "__file__": script, "rec": rec}
    errors = []
    os.makedirs(cell_dir, exist_ok=True)
    for i, cell in enumerate(cells):
        _CELL[0] = i
        # line numbers as in the script, so tracebacks and inspect point at the right lines
        path = os.path.join(cell_dir, f"{Path(script).stem}_{side}_{seed_shift}_cell{i}.py")
        Path(path).write_text("\n" * (src.count("\n", 0, src.find(cell)) if i else 0) + cell)
        try:
            exec(compile(Path(path).read_text(), path, "exec"), ns)
        except BaseException as e:  # noqa: BLE001 - a cell's failure is a result
            tb = traceback.format_exception(type(e), e, e.__traceback__)
            errors.append({"cell": i, "error": f"{type(e).__name__}: {e}"[:400], "where": "".join(tb[-3:])[-800:]})
    if side == "torch_dali" and shim.real_dali_leaks():
        errors.append({"cell": -1, "error": f"real DALI loaded: {shim.real_dali_leaks()[:3]}", "where": ""})
    with open(out, "wb") as f:
        pickle.dump({"runs": runs, "records": records, "errors": errors, "cells": len(cells)}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
