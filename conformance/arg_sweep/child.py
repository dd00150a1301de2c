"""Runs probes under one side: `python -m conformance.arg_sweep.child MODULE PROBES RESULTS START`.

MODULE is `nvidia.dali` or `torch_dali`; PROBES a JSON list; one JSON line per probe is appended to
RESULTS (flushed, so the parent sees how far a child that crashed or hung got). Run in a scratch
folder: the encoded inputs are written there."""
from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any

import numpy as np

from . import setups, values

BATCH = 2


def _exc(e: BaseException, stage: str) -> dict[str, Any]:
    builtin = [c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins" and c not in (object, BaseException)]
    return {"stage": stage, "exc": type(e).__name__, "bases": builtin, "msg": str(e)[:300]}


def _sample(t: Any, i: int) -> np.ndarray:
    return np.asarray(t.at(i) if hasattr(t, "at") else t[i])


def _summary(outs: Any) -> list[list[Any]]:
    res = []
    for o in outs:
        samples = [_sample(o, i) for i in range(BATCH)]
        total = sum(float(np.asarray(s, np.float64).sum()) if s.dtype.kind in "biuf" else 0.0 for s in samples)
        res.append([str(samples[0].dtype), [list(s.shape) for s in samples], float(f"{total:.4g}")])
    return res


def _source(sample: np.ndarray) -> Any:
    return lambda: [sample.copy() for _ in range(BATCH)]  # no parameters: called once per batch


def probe(mod: Any, p: dict[str, Any]) -> dict[str, Any]:
    fn, types = mod.fn, mod.types
    op = fn
    for part in p["op"].split("."):
        op = getattr(op, part)
    env = {"np": np, "types": types}

    @mod.pipeline_def(batch_size=BATCH, num_threads=1, device_id=None, seed=7, prefetch_queue_depth=1)
    def pipe():
        ins = []
        for name in p["inputs"]:
            expr, layout = setups.INPUTS[name]
            sample = eval(expr, env)
            src = _source(sample)
            ins.append(fn.external_source(source=src, layout=layout) if layout else fn.external_source(source=src))
        kw = {k: eval(v, env) for k, v in p["base"].items()}
        if p["arg"] is not None:
            kw[p["arg"]] = values.make(p["value"], fn, types, BATCH)
        out = op(*ins, **kw)
        return tuple(out) if isinstance(out, (list, tuple)) else out

    try:
        pp = pipe()
    except Exception as e:
        return _exc(e, "def")
    try:
        pp.build()
    except Exception as e:
        return _exc(e, "build")
    try:
        outs = pp.run()
    except Exception as e:
        return _exc(e, "run")
    try:
        return {"stage": "ok", "out": _summary(outs)}
    except Exception as e:  # an output that is not an array: still accepted
        return {"stage": "ok", "out": repr(e)[:100]}


def main() -> None:
    modname, probes_path, results_path, start = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    import warnings
    warnings.simplefilter("ignore")
    if os.environ.get("ARG_SWEEP_OURS"):  # another checkout's torch_dali (this one's conformance package)
        sys.path.insert(0, os.environ["ARG_SWEEP_OURS"])
    mod = importlib.import_module(modname)
    setups.write_files()
    probes = json.load(open(probes_path))
    with open(results_path, "a") as out:
        for p in probes[start:start + 400]:  # a fresh process every 400 probes
            r = probe(mod, p)
            r["id"] = p["id"]
            out.write(json.dumps(r) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
