"""Cases for the geometry ops (warps, transforms, regions, crop generators), run the same way on
DALI (the table generator, `geometry_make_tables.py`) and on torch_dali (the tests).

NumPy only. A case names an `fn` path, its positional inputs (a batch per input, with a layout),
its constant arguments, and its per-sample argument inputs; `run_case` builds one CPU pipeline
with whichever `fn` / `pipeline_def` / `types` it is handed, so both sides run the same code.
Cases DALI refuses are stored as refusals and the tests check that torch_dali refuses them too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

TABLES = "geometry_tables.npz"


def noise(shape: tuple[int, ...], seed: int, dtype: Any = np.uint8) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return (rng.random(shape) * 300.0 - 20.0).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -3000), min(info.max, 3000) + 1, shape).astype(dtype)


@dataclass
class Case:
    op: str  # fn path: "rotate", "transforms.rotation"
    inputs: list[list[np.ndarray]] = field(default_factory=list)  # per input: the batch
    layouts: list[str] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)  # "dtype"/"interp_type" as names
    arg_inputs: dict[str, list[np.ndarray]] = field(default_factory=dict)
    batch: int = 0  # for ops without inputs
    seed: int = 1234
    iterations: int = 1


def _kw(kwargs: dict[str, Any], types: Any) -> dict[str, Any]:
    out = {}
    for k, v in kwargs.items():
        if k in ("dtype", "output_dtype") and isinstance(v, str):
            v = getattr(types, v)
        elif k in ("output_type", "image_type") and isinstance(v, str):
            v = getattr(types, v)
        elif k == "interp_type" and isinstance(v, str):
            v = getattr(types, "INTERP_" + v.upper())
        out[k] = v
    return out


def run_case(case: Case, fn: Any, pipeline_def: Callable, types: Any,
             to_input: Callable[[np.ndarray], Any] = lambda a: a, device: str = "cpu") -> list[list[np.ndarray]]:
    """Outputs of the case (a list of samples per output, all iterations concatenated); with
    device="gpu" the inputs move to the GPU and the op runs there (argument inputs stay on the CPU);
    device="mixed" runs a decoder as device='mixed' on GPU 0."""
    bs = len(case.inputs[0]) if case.inputs else case.batch

    def feed(batch: list[np.ndarray]) -> Callable[[], list[Any]]:
        return lambda: [to_input(a) for a in batch]  # no parameters: DALI would pass it the iteration

    @pipeline_def(batch_size=bs, num_threads=1, device_id=None if device == "cpu" else 0, seed=case.seed)
    def pipe():
        ins = [fn.external_source(source=feed(b), batch=True, layout=lay)
               for b, lay in zip(case.inputs, case.layouts)]
        args = {k: fn.external_source(source=feed(v), batch=True) for k, v in case.arg_inputs.items()}
        op = fn
        for part in case.op.split("."):
            op = getattr(op, part)
        kw = _kw(case.kwargs, types)
        if device == "gpu":
            ins = [x.gpu() for x in ins]
            kw["device"] = "gpu"
        elif device == "mixed":  # decoders: encoded data stays on the CPU
            kw["device"] = "mixed"
        out = op(*ins, **kw, **args)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    p = pipe()
    p.build()
    got: list[list[np.ndarray]] = []
    for _ in range(case.iterations):
        res = p.run()
        if not got:
            got = [[] for _ in res]
        for k, tl in enumerate(res):
            tl = tl.as_cpu() if hasattr(tl, "as_cpu") else tl
            got[k].extend(np.array(tl.at(i)) for i in range(len(tl)))
    return got


# -- inputs ---------------------------------------------------------------------------------------------

IMG = noise((23, 31, 3), seed=11)
IMG2 = noise((16, 20, 3), seed=12)
IMG_I16 = noise((9, 12, 2), seed=13, dtype=np.int16)
IMG_F = noise((9, 12, 3), seed=14, dtype=np.float32)
VOL = noise((7, 9, 11, 2), seed=15)
SEQ = noise((3, 10, 14, 3), seed=16)
AFFINE = [0.9, 0.3, -2.0, -0.2, 1.1, 3.0]
HOMOGRAPHY = [1.1, 0.1, -2.0, -0.05, 0.9, 3.0, 0.001, -0.002, 1.0]
AFFINE_3D = [0.9, 0.1, 0.0, -1.0, -0.1, 1.0, 0.2, 0.5, 0.0, 0.1, 0.8, 1.5]


def f32(*v: float) -> np.ndarray:
    return np.array(v, dtype=np.float32)


def is_tie(coord: np.ndarray, eps: float = 1e-4) -> np.ndarray:
    """Where a source coordinate lies within eps of a pixel edge: DALI's CPU warp steps the
    coordinate along a row by repeated float32 additions, ours computes each directly, so a
    nearest-neighbour pick there may land on either side."""
    return np.abs(coord - np.round(coord)) < eps


# The cases live in two modules (imported here, after the shared inputs they use).
from .geometry_cases_regions import (_decoder_cases, _dist_cases, _multipaste_cases,  # noqa: E402
                                     _random_error_cases, _rcm_cases, _region_cases)
from .geometry_cases_warp import _transform_cases, _warp_cases  # noqa: E402

CASES: dict[str, Case] = {}
CASES.update(_multipaste_cases())
CASES.update(_rcm_cases())
CASES.update(_decoder_cases())
CASES.update(_warp_cases())
CASES.update(_transform_cases())
CASES.update(_region_cases())
CASES.update(_dist_cases())
CASES.update(_random_error_cases())
