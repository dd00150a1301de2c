"""Runs fuzz cases under one side (real DALI, or torch_dali through the conformance shim).

`python -m conformance.differential.worker SIDE CASES.jsonl OUTDIR START`: for each case from START
on, appends its index to OUTDIR/progress (so the parent can tell which case hung or crashed), builds
a one-op pipeline on external-source batches drawn from the case's seed, runs it once and writes
OUTDIR/<index>.npz: a JSON `meta` (error, or each output's dtype, layout and sample shapes) and the
sample arrays. Both sides run this same file under the same interpreter, so the inputs are equal.
"""
from __future__ import annotations

import json
import operator
import os
import sys

import numpy as np

# Drawn value ranges per input dtype: full ranges for the narrow integer types, a window for wide ones.
_RANGES = {"uint8": (0, 256), "int8": (-128, 128), "uint16": (0, 65536), "int16": (-32768, 32768),
           "int32": (-100000, 100000), "uint32": (0, 100000), "int64": (-100000, 100000),
           "bool": (0, 2)}


def draw_sample(rng: np.random.Generator, shape: list[int], dtype: str, value: str | None) -> np.ndarray:
    """One input sample; `value` narrows floats ("unit": [0, 1), "byte": [0, 255], "wide": +-1000),
    or is the sample's values as a list (cases written by hand)."""
    if isinstance(value, list):
        return np.array(value, dtype=dtype).reshape(shape)
    if dtype in ("float32", "float64", "float16") and value == "special":  # IEEE edges among ordinary values
        edges = np.array([np.nan, np.inf, -np.inf, -0.0, 1e30, -1e30, 0.5, -0.5, 2.5, -2.5, 1e-40, 65504.5, 3e9],
                         dtype=np.float64)
        return rng.choice(edges, size=shape).astype(dtype)
    if dtype in ("float32", "float64", "float16"):
        lo, hi = {"unit": (0.0, 1.0), "byte": (0.0, 255.0), "wide": (-1000.0, 1000.0),
                  "signed": (-1.0, 1.0)}.get(value or "unit")
        return rng.uniform(lo, hi, size=shape).astype(dtype)
    lo, hi = _RANGES[dtype]
    if value == "small":  # labels, indices, keys
        lo, hi = max(lo, -2), min(hi, 8)
    return rng.integers(lo, hi, size=shape).astype(dtype)


def make_inputs(case: dict) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(case["seed"])
    return [[draw_sample(rng, s, inp["dtype"], inp.get("value")) for s in inp["shapes"]]
            for inp in case["inputs"]]


def decode(v, types):
    """`{"$t": "FLOAT"}` is `types.FLOAT` (DALIDataType, interpolation, image type)."""
    if isinstance(v, dict) and "$t" in v:
        return getattr(types, v["$t"])
    if isinstance(v, list):
        return [decode(x, types) for x in v]
    return v


def _call(case: dict, dali, xs: list, targs: dict):
    fn, types = dali.fn, dali.types
    args = {k: decode(v, types) for k, v in case.get("args", {}).items()}
    args.update(targs)
    kind, op = case.get("kind", "fn"), case["op"]
    if kind == "arith":
        consts = case.get("consts", {})
        operands = [consts[str(i)] if str(i) in consts else xs.pop(0) for i in range(case["arity"])]
        return getattr(operator, op)(*operands)
    if kind == "subscript":  # x[...]: ints and [start, stop, step] slices (None: left out)
        return xs[0][tuple(i if isinstance(i, int) else slice(*i) for i in case["index"])]
    if kind == "std":  # std_dev / variance of x about its own mean over the same axes
        red = {k: v for k, v in args.items() if k in ("axes", "axis_names")}
        xs = [xs[0], fn.reductions.mean(xs[0], keep_dims=True, **red)]
    target = dali.math if kind == "math" else fn
    for part in op.split("."):
        target = getattr(target, part)
    return target(*xs, *case.get("extra", []), **args)


def _source(batch: list):
    return lambda: batch  # no parameters: external_source passes an iteration index to one that has one


def build(case: dict, dali):
    batches = make_inputs(case)
    targ_batches = {k: [np.array(v, dtype=spec["dtype"]) for v in spec["values"]]
                    for k, spec in case.get("targs", {}).items()}
    bs = len(batches[0]) if batches else case["batch_size"]

    @dali.pipeline_def(batch_size=bs, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def pipe():
        xs = [dali.fn.external_source(source=_source(b), batch=True, layout=inp.get("layout") or None)
              for b, inp in zip(batches, case["inputs"])]
        targs = {k: dali.fn.external_source(source=_source(b), batch=True) for k, b in targ_batches.items()}
        for k, spec in case.get("targs", {}).items():
            if spec.get("per_frame"):  # one value per frame of a sequence (DALI's fn.per_frame)
                targs[k] = dali.fn.per_frame(targs[k])
        out = _call(case, dali, xs, targs)
        return tuple(out) if isinstance(out, (list, tuple)) else out

    return pipe()


def run_case(case: dict, dali) -> tuple[dict, dict]:
    arrays: dict[str, np.ndarray] = {}
    try:
        p = build(case, dali)
        p.build()
        outs = p.run()
        meta: dict = {"outputs": []}
        for k, o in enumerate(outs):
            samples = [np.asarray(o.at(i)) for i in range(len(o))]
            meta["outputs"].append({"dtype": str(o.dtype).split(".")[-1], "layout": o.layout() or "",
                                    "shapes": [list(s.shape) for s in samples]})
            arrays.update({f"o{k}_{i}": s for i, s in enumerate(samples)})
    except Exception as e:  # the refusal is the result
        meta = {"error": type(e).__name__, "message": str(e).strip()[:4000]}
    return meta, arrays


def main(argv: list[str]) -> None:
    side, cases_path, out, start = argv[0], argv[1], argv[2], int(argv[3])
    if side == "ours":
        from conformance import shim
        shim.install()
    import nvidia.dali as dali
    with open(cases_path) as f:
        cases = [json.loads(line) for line in f]
    with open(os.path.join(out, "progress"), "a") as prog:
        for i in range(start, len(cases)):
            prog.write(f"{i}\n")
            prog.flush()
            if os.environ.get("DIFF_STIR"):  # the same op on other data first: memory an op reads
                run_case({**cases[i], "seed": cases[i]["seed"] ^ 0x5A5A5A}, dali)  # by mistake changes
            meta, arrays = run_case(cases[i], dali)
            tmp = os.path.join(out, f"{i}.tmp.npz")
            np.savez(tmp, meta=np.array(json.dumps(meta)), **arrays)
            os.replace(tmp, os.path.join(out, f"{i}.npz"))


if __name__ == "__main__":
    main(sys.argv[1:])
