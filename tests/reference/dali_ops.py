"""Runs each reference case through NVIDIA DALI's CPU backend (needs `nvidia.dali`).

Used by make_dali_tables.py to write the stored tables and by the tests' live comparisons when DALI
is importable. Only DALI and NumPy here: never torch_dali.
"""
from __future__ import annotations

import io
from typing import Any, Callable

import numpy as np
from nvidia.dali import fn, pipeline_def, types

from . import cases as C

_DT = {"float": types.FLOAT, "uint8": types.UINT8, "int8": types.INT8, "int16": types.INT16,
       "int32": types.INT32, "uint16": types.UINT16, "float16": types.FLOAT16}
_INTERP = {"nn": types.INTERP_NN, "linear": types.INTERP_LINEAR, "triangular": types.INTERP_TRIANGULAR,
           "gaussian": types.INTERP_GAUSSIAN, "cubic": types.INTERP_CUBIC, "lanczos3": types.INTERP_LANCZOS3}
_OOB = {"error": "error", "pad": "pad", "trim_to_shape": "trim_to_shape"}


def run(graph: Callable[..., Any], inputs: list[np.ndarray] | None = None, batch: int = 1, seed: int = 1234,
        iterations: int = 1, layout: str = "HWC") -> list[list[np.ndarray]]:
    """Outputs (one list of samples per output) of `graph(x)` on a CPU pipeline."""
    @pipeline_def(batch_size=batch, num_threads=1, device_id=None, seed=seed)
    def pipe():
        if inputs is None:
            outs = graph()
        else:
            x = fn.external_source(source=lambda: list(inputs), batch=True, layout=layout)
            outs = graph(x)
        return outs if isinstance(outs, (tuple, list)) else (outs,)

    p = pipe()
    p.build()
    got: list[list[np.ndarray]] = []
    for _ in range(iterations):
        res = p.run()
        if not got:
            got = [[] for _ in res]
        for k, tl in enumerate(res):
            got[k].extend(np.array(tl.at(i)) for i in range(len(tl)))
    return got


def _kw(args: dict[str, Any]) -> dict[str, Any]:
    out = dict(args)
    if "dtype" in out:
        out["dtype"] = _DT[out["dtype"]]
    return out


def resize(case: dict[str, Any]) -> np.ndarray:
    h, w = case["size"]
    kw: dict[str, Any] = dict(resize_x=w, resize_y=h, interp_type=_INTERP[case["filter"]],
                              antialias=case["antialias"])
    for name in ("min_filter", "mag_filter"):
        if name in case:
            kw[name] = _INTERP[case[name]]
    if "dtype" in case:
        kw["dtype"] = _DT[case["dtype"]]
    if "roi" in case:
        y, x, rh, rw = case["roi"]
        kw.update(roi_start=[y, x], roi_end=[y + rh, x + rw], roi_relative=False)
    return run(lambda x: fn.resize(x, **kw), [C.RESIZE_IMG])[0][0]


def output_sizes(args: dict[str, Any]) -> np.ndarray:
    imgs = [np.zeros((h, w, 1), np.uint8) for h, w in C.SIZE_SHAPES]
    outs = run(lambda x: fn.resize(x, **args), imgs, batch=len(imgs))[0]
    return np.array([o.shape[:2] for o in outs], np.int32)


def crop(args: dict[str, Any]) -> np.ndarray:
    return run(lambda x: fn.crop(x, **_kw(args)), [C.CROP_IMG])[0][0]


def flip(args: dict[str, Any]) -> np.ndarray:
    return run(lambda x: fn.flip(x, **args), [C.CROP_IMG])[0][0]


def crop_mirror_normalize(args: dict[str, Any]) -> np.ndarray:
    return run(lambda x: fn.crop_mirror_normalize(x, **_kw(args)), [C.CMN_IMG])[0][0]


def brightness_contrast(args: dict[str, Any], img: np.ndarray = C.RAMP) -> np.ndarray:
    return run(lambda x: fn.brightness_contrast(x, **_kw(args)), [img])[0][0]


def hsv(args: dict[str, Any], img: np.ndarray) -> np.ndarray:
    return run(lambda x: fn.hsv(x, **_kw(args)), [img])[0][0]


def color_twist(args: dict[str, Any], img: np.ndarray) -> np.ndarray:
    return run(lambda x: fn.color_twist(x, **_kw(args)), [img])[0][0]


def cast(dtype: str) -> np.ndarray:
    return run(lambda x: fn.cast(x, dtype=_DT[dtype]), [C.CAST_VALUES], layout="")[0][0]


def random_draws(kind: str, args: dict[str, Any], seed: int = 4321) -> np.ndarray:
    """C.RANDOM_DRAWS scalars of one random op, 250 samples a batch."""
    op = {"uniform": fn.random.uniform, "normal": fn.random.normal, "coin_flip": fn.random.coin_flip}[kind]
    n_it = C.RANDOM_DRAWS // 250
    return np.array(run(lambda: op(**_kw(args)), None, batch=250, seed=seed, iterations=n_it)[0]).reshape(-1)


def random_sample_shape(kind: str, args: dict[str, Any]) -> tuple[int, ...]:
    op = {"uniform": fn.random.uniform, "normal": fn.random.normal, "coin_flip": fn.random.coin_flip}[kind]
    return run(lambda: op(**_kw(args)), None)[0][0].shape


def rrc_windows(name: str, seed: int = 99, per_batch: int = 100) -> np.ndarray:
    """(y, x, h, w) of C.WINDOW_DRAWS random_resized_crop windows, read back from the probe image."""
    (h, w), area, ratio = C.WINDOW_CASES[name]
    probe = C.window_probe(h, w)
    outs = run(lambda x: fn.random_resized_crop(x, size=(16, 16), random_area=list(area),
                                                random_aspect_ratio=list(ratio), antialias=False,
                                                dtype=types.FLOAT),
               [probe] * per_batch, batch=per_batch, seed=seed, iterations=C.WINDOW_DRAWS // per_batch)[0]
    return np.array([C.windows_from_probe(o) for o in outs], np.int16)


def coordinate_png(h: int, w: int) -> bytes:
    """A lossless PNG whose red channel is the row and green channel the column index."""
    from PIL import Image
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([y, x % 256, x // 256], -1).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG")
    return buf.getvalue()


def decoder_windows(seed: int = 77, per_batch: int = 100) -> np.ndarray:
    """(y, x, h, w) of decoders.image_random_crop windows on the coordinate PNG."""
    (h, w), area, ratio = C.DECODER_WINDOW_CASE
    png = np.frombuffer(coordinate_png(h, w), np.uint8)
    outs = run(lambda x: fn.decoders.image_random_crop(x, random_area=list(area), random_aspect_ratio=list(ratio)),
               [png] * per_batch, batch=per_batch, seed=seed, iterations=C.WINDOW_DRAWS // per_batch,
               layout="")[0]
    return np.array([(o[0, 0, 0], int(o[0, 0, 1]) + 256 * int(o[0, 0, 2]), o.shape[0], o.shape[1]) for o in outs],
                    np.int16)


def _const(v: np.ndarray) -> Callable[[], list[np.ndarray]]:
    return lambda: [v]


def arithmetic(expr: str) -> np.ndarray:
    """DALI's result of `expr` (cases.ARITH_CASES) on the arithmetic inputs."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, seed=1)
    def pipe():
        a, b, i, f = (fn.external_source(source=_const(v), batch=True, layout="HWC")
                      for v in (C.ARITH_A, C.ARITH_B, C.ARITH_I, C.ARITH_F))
        return eval(expr, {}, {"a": a, "b": b, "i": i, "f": f})  # our own expressions, not input

    p = pipe()
    p.build()
    return np.array(p.run()[0].at(0))


def decode(data: np.ndarray, output_type: str, dtype: str | None = None) -> np.ndarray:
    kw: dict[str, Any] = dict(output_type=getattr(types, output_type))
    if dtype is not None:
        kw["dtype"] = _DT[dtype]
    return run(lambda x: fn.decoders.image(x, **kw), [data], layout="")[0][0]
