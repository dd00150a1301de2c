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
        elif k == "interp_type" and isinstance(v, str):
            v = getattr(types, "INTERP_" + v.upper())
        out[k] = v
    return out


def run_case(case: Case, fn: Any, pipeline_def: Callable, types: Any,
             to_input: Callable[[np.ndarray], Any] = lambda a: a, device: str = "cpu") -> list[list[np.ndarray]]:
    """Outputs of the case (a list of samples per output, all iterations concatenated); with
    device="gpu" the inputs move to the GPU and the op runs there (argument inputs stay on the CPU)."""
    bs = len(case.inputs[0]) if case.inputs else case.batch

    def feed(batch: list[np.ndarray]) -> Callable[[], list[Any]]:
        return lambda: [to_input(a) for a in batch]  # no parameters: DALI would pass it the iteration

    @pipeline_def(batch_size=bs, num_threads=1, device_id=0 if device == "gpu" else None, seed=case.seed)
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
AFFINE_3D = [0.9, 0.1, 0.0, -1.0, -0.1, 1.0, 0.2, 0.5, 0.0, 0.1, 0.8, 1.5]


def f32(*v: float) -> np.ndarray:
    return np.array(v, dtype=np.float32)


# -- warps (rotate, warp_affine) -------------------------------------------------------------------------

def _warp_cases() -> dict[str, Case]:
    c: dict[str, Case] = {}
    for interp in ("nn", "linear"):
        for fill in (None, 42.0):
            extra = {} if fill is None else {"fill_value": fill}
            tag = f"{interp}_{'fill' if fill is not None else 'clamp'}"
            for ang in (30.0, 90.0, -135.5, 7.0, 180.0):
                c[f"rotate/{tag}_{ang}"] = Case("rotate", [[IMG]], ["HWC"],
                                                dict(angle=ang, interp_type=interp, **extra))
            c[f"rotate/{tag}_keep"] = Case("rotate", [[IMG]], ["HWC"],
                                           dict(angle=33.0, keep_size=True, interp_type=interp, **extra))
            c[f"warp_affine/{tag}"] = Case("warp_affine", [[IMG]], ["HWC"],
                                           dict(matrix=AFFINE, interp_type=interp, **extra))
            c[f"warp_affine/{tag}_size"] = Case("warp_affine", [[IMG]], ["HWC"],
                                                dict(matrix=AFFINE, size=(17, 40), interp_type=interp, **extra))
            c[f"warp_affine/{tag}_fwd"] = Case("warp_affine", [[IMG]], ["HWC"],
                                               dict(matrix=AFFINE, inverse_map=False, interp_type=interp, **extra))
            c[f"warp_affine/{tag}_3d"] = Case("warp_affine", [[VOL]], ["DHWC"],
                                              dict(matrix=AFFINE_3D, interp_type=interp, **extra))
            c[f"rotate/{tag}_3d"] = Case("rotate", [[VOL]], ["DHWC"],
                                         dict(angle=40.0, axis=[0.3, -1.0, 0.5], interp_type=interp, **extra))
    c["rotate/size_rounds"] = Case("rotate", [[IMG]], ["HWC"], dict(angle=20.0, size=(12.5, 13.5)))
    c["rotate/per_sample"] = Case("rotate", [[IMG, IMG2, IMG]], ["HWC"], dict(fill_value=7.0),
                                  arg_inputs={"angle": [f32(10.0), f32(-75.0), f32(123.0)]})
    c["rotate/per_sample_size"] = Case("rotate", [[IMG, IMG2]], ["HWC"], dict(angle=15.0),
                                       arg_inputs={"size": [f32(10.7, 20.2), f32(5.0, 9.9)]})
    c["rotate/seq"] = Case("rotate", [[SEQ]], ["FHWC"], dict(angle=25.0, fill_value=0.0))
    c["rotate/no_layout"] = Case("rotate", [[IMG2]], [""], dict(angle=-40.0))
    c["rotate/int16"] = Case("rotate", [[IMG_I16]], ["HWC"], dict(angle=25.0, fill_value=-5.0))
    c["rotate/int16_to_float"] = Case("rotate", [[IMG_I16]], ["HWC"], dict(angle=25.0, dtype="FLOAT"))
    c["rotate/float"] = Case("rotate", [[IMG_F]], ["HWC"], dict(angle=-60.0))
    c["rotate/float_to_u8"] = Case("rotate", [[IMG_F]], ["HWC"], dict(angle=-60.0, dtype="UINT8", fill_value=300.0))
    c["rotate/u8_fill_saturates"] = Case("rotate", [[IMG2]], ["HWC"], dict(angle=45.0, fill_value=-20.0))
    c["warp_affine/per_sample_matrix"] = Case(
        "warp_affine", [[IMG, IMG2]], ["HWC"], dict(fill_value=1.0),
        arg_inputs={"matrix": [f32(*AFFINE).reshape(2, 3), f32(1.2, -0.1, 0.5, 0.1, 0.8, -1.0).reshape(2, 3)]})
    c["warp_affine/err_per_sample_matrix_flat"] = Case(
        "warp_affine", [[IMG]], ["HWC"], {}, arg_inputs={"matrix": [f32(*AFFINE)]})
    c["warp_affine/matrix_input"] = Case(
        "warp_affine", [[IMG, IMG2], [f32(*AFFINE).reshape(2, 3), f32(0.5, 0.0, 2.0, 0.0, 0.5, 1.0).reshape(2, 3)]],
        ["HWC", ""], dict(fill_value=3.0, size=(11, 13)))
    c["warp_affine/matrix_input_fwd"] = Case(
        "warp_affine", [[IMG2], [f32(2.0, 0.5, -3.0, 0.0, 1.5, 1.0).reshape(2, 3)]], ["HWC", ""],
        dict(inverse_map=False))
    c["warp_affine/seq"] = Case("warp_affine", [[SEQ]], ["FHWC"], dict(matrix=AFFINE, fill_value=9.0))
    c["warp_affine/per_sample_size"] = Case("warp_affine", [[IMG2]], ["HWC"], dict(matrix=AFFINE),
                                            arg_inputs={"size": [f32(3.9, 4.2)]})
    # refused by DALI
    c["rotate/err_cubic"] = Case("rotate", [[IMG]], ["HWC"], dict(angle=10.0, interp_type="cubic"))
    c["rotate/err_chw"] = Case("rotate", [[IMG.transpose(2, 0, 1).copy()]], ["CHW"], dict(angle=10.0))
    c["rotate/err_3d_no_axis"] = Case("rotate", [[VOL]], ["DHWC"], dict(angle=10.0))
    c["rotate/err_u8_to_i16"] = Case("rotate", [[IMG]], ["HWC"], dict(angle=10.0, dtype="INT16"))
    c["rotate/err_size_0"] = Case("rotate", [[IMG]], ["HWC"], dict(angle=10.0, size=(0, 5)))
    c["rotate/err_uint16"] = Case("rotate", [[IMG.astype(np.uint16)]], ["HWC"], dict(angle=10.0))
    c["warp_affine/err_no_matrix"] = Case("warp_affine", [[IMG]], ["HWC"], {})
    c["warp_affine/err_matrix_len"] = Case("warp_affine", [[IMG]], ["HWC"], dict(matrix=[1.0, 0.0, 0.0, 1.0]))
    return c


CASES: dict[str, Case] = {}
CASES.update(_warp_cases())


def is_tie(coord: np.ndarray, eps: float = 1e-4) -> np.ndarray:
    """Where a source coordinate lies within eps of a pixel edge: DALI's CPU warp steps the
    coordinate along a row by repeated float32 additions, ours computes each directly, so a
    nearest-neighbour pick there may land on either side."""
    return np.abs(coord - np.round(coord)) < eps
