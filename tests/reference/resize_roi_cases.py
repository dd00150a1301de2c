"""Cases for resize's regions of interest, size rules and subpixel scale (and resize_crop_mirror's),
run the same way on DALI (the table generator, `resize_roi_make.py`) and on torch_dali (the tests,
tests/test_ref_resize_roi.py).

NumPy only. A case is one CPU pipeline: a batch of images with a layout, the op's constant
arguments and its per-sample argument inputs. Most cases are drawn at random (seeded) over: sizes,
windows (absolute or relative, flipped, partly outside the image, degenerate), every interp_type and
min/mag pair, antialias on and off, uint8 / int16 / uint16 / float inputs, float outputs, odd sizes,
modes and max_size, subpixel_scale on and off. Cases DALI refuses are stored as refusals.

Windows are drawn where DALI 2.4's CPU resize reads only the image: (1) the region the filter reads
overlaps the image (else DALI reads out of bounds, or crashes); (2) with nearest neighbour, the
window stays left of the right edge (DALI's column clamp adds the width instead of setting it and
reads past the row); (3) a nearest-neighbour axis with a filtered one (min_filter / mag_filter
mixing NN with another filter) gets no window and no flip (DALI's nearest-neighbour pass then applies the
window's vertical start a second time, shifting the rows). torch_dali resamples those cases as the
others (edges repeat, one offset): the result DALI computes where it does not misread memory.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

TABLES = "resize_roi_tables.npz"
FILTERS = ("NN", "LINEAR", "CUBIC", "LANCZOS3", "TRIANGULAR", "GAUSSIAN")
DTYPES = (np.uint8, np.float32, np.int16, np.uint16)


@dataclass
class Case:
    op: str  # "resize" or "resize_crop_mirror"
    images: list[np.ndarray]
    layout: str
    kwargs: dict[str, Any] = field(default_factory=dict)  # interp names ("LINEAR") and dtype names as str
    arg_inputs: dict[str, list[np.ndarray]] = field(default_factory=dict)


def image(shape: tuple[int, ...], dtype: Any, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return (rng.random(shape) * 255.0).astype(dtype)
    info = np.iinfo(dtype)
    if info.bits == 8:
        return rng.integers(0, 256, shape).astype(dtype)
    return rng.integers(max(info.min, -3000), min(info.max, 3000) + 1, shape).astype(dtype)


def _kw(kwargs: dict[str, Any], types: Any) -> dict[str, Any]:
    out = {}
    for k, v in kwargs.items():
        if k in ("interp_type", "min_filter", "mag_filter") and isinstance(v, str):
            v = getattr(types, "INTERP_" + v)
        elif k == "dtype" and isinstance(v, str):
            v = getattr(types, v)
        out[k] = v
    return out


def run_case(case: Case, fn: Any, pipeline_def: Callable, types: Any,
             to_input: Callable[[np.ndarray], Any] = lambda a: a, device: str = "cpu") -> list[np.ndarray]:
    """The op's output samples (device "gpu": the images move to the GPU, arguments stay on the CPU)."""
    def feed(batch: list[np.ndarray]) -> Callable[[], list[Any]]:
        return lambda: [to_input(np.ascontiguousarray(a)) for a in batch]

    @pipeline_def(batch_size=len(case.images), num_threads=1, device_id=None if device == "cpu" else 0, seed=7)
    def pipe():
        x = fn.external_source(source=feed(case.images), batch=True, layout=case.layout)
        args = {k: fn.external_source(source=feed(v), batch=True) for k, v in case.arg_inputs.items()}
        kw = _kw(case.kwargs, types)
        if device == "gpu":
            x, kw["device"] = x.gpu(), "gpu"
        return getattr(fn, case.op)(x, **kw, **args)

    p = pipe()
    p.build()
    out = p.run()[0]
    out = out.as_cpu() if hasattr(out, "as_cpu") else out
    return [np.array(out.at(i)) for i in range(len(case.images))]


# -- random cases -------------------------------------------------------------------------------------

def _window(rng: np.random.Generator, h: int, w: int, nn: bool, point: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) in relative units: overlapping the image, sometimes flipped, sometimes past an
    edge (nearest neighbour: never past the right edge, see the module doc); `point`: start = end."""
    kind = rng.choice(["inside", "outside", "whole_flipped"])
    if point:
        a = rng.uniform(0.1, 0.9, 2)
        return a, a.copy()
    if kind == "whole_flipped":  # the whole image, one axis read backwards
        a = np.array([1.0, 0.0]) if rng.random() < 0.5 else np.array([0.0, 1.0])
        return a, 1.0 - a
    lo, hi = (0.0, 1.0) if kind == "inside" else (-0.4, 1.4)
    while True:
        a, b = rng.uniform(lo, hi, 2), rng.uniform(lo, hi, 2)
        # the window must cover some of the image's interior (DALI reads out of bounds otherwise)
        if not ((np.minimum(a, b) < 0.8).all() and (np.maximum(a, b) > 0.2).all() and (np.abs(a - b) > 0.05).all()):
            continue
        if nn and max(a[1], b[1]) > 1.0:
            continue
        return a, b


def _sizing(rng: np.random.Generator, both: bool) -> tuple[dict[str, Any], str]:
    """One way of sizing (constants) and a mode; `both`: both extents given (a point window's
    extent is 1e-3 pixel: a scale from it alone would make huge outputs)."""
    def r() -> float:
        return float(rng.choice([rng.integers(1, 28), np.round(rng.uniform(1, 28), 2)]))
    kind = rng.choice(["xy", "size", "neg"] if both else ["xy", "x", "y", "size", "size0", "shorter", "longer", "neg"])
    mode = str(rng.choice(["default", "default", "stretch", "not_larger", "not_smaller"]))
    if kind == "xy":
        return dict(resize_x=r(), resize_y=r()), mode
    if kind == "x":
        return dict(resize_x=r()), mode
    if kind == "y":
        return dict(resize_y=r()), mode
    if kind == "size":
        return dict(size=[r(), r()]), mode
    if kind == "size0":
        return dict(size=[0.0, r()] if rng.random() < 0.5 else [r(), 0.0]), mode
    if kind == "neg":
        return dict(resize_x=-r(), resize_y=r()) if rng.random() < 0.5 else dict(size=[-r(), r()]), mode
    return {"resize_shorter" if kind == "shorter" else "resize_longer": r()}, "default"


def _filters(rng: np.random.Generator) -> dict[str, Any]:
    k = rng.random()
    if k < 0.7:
        return dict(interp_type=str(rng.choice(FILTERS)))
    return dict(min_filter=str(rng.choice(FILTERS)), mag_filter=str(rng.choice(FILTERS)))


def _random_case(seed: int) -> Case:
    rng = np.random.default_rng(1000 + seed)
    dtype = DTYPES[int(rng.choice(len(DTYPES), p=[0.55, 0.25, 0.1, 0.1]))]
    n = int(rng.choice([1, 1, 2, 3]))
    c = int(rng.choice([1, 3]))
    shapes = [(int(rng.integers(2, 20)), int(rng.integers(2, 20)), c) for _ in range(n)]
    images = [image(s, dtype, seed * 7 + i) for i, s in enumerate(shapes)]
    point = rng.random() < 0.12
    kw, mode = _sizing(rng, both=point)
    kw.update(_filters(rng))
    if mode != "default":
        kw["mode"] = mode
    if rng.random() < 0.3:
        kw["max_size"] = [float(rng.integers(3, 30))] if rng.random() < 0.5 else [float(rng.integers(3, 30)), float(rng.choice([0, 12, 25]))]
    else:  # keeps the stored outputs small (a narrow window's scale applied to a free extent); the
        kw["max_size"] = [40.0]  # uncapped rules are checked on shapes (size_cases)
    kw["antialias"] = bool(rng.random() < 0.6)
    kw["subpixel_scale"] = bool(rng.random() < 0.6)
    if dtype != np.float32 and rng.random() < 0.3:
        kw["dtype"] = "FLOAT"
    args: dict[str, list[np.ndarray]] = {}
    filters = {kw.get("interp_type"), kw.get("min_filter"), kw.get("mag_filter")} - {None}
    mixed_nn = "NN" in filters and len(filters) > 1  # see the module doc: no window (nor flip) for these
    if mixed_nn:
        kw = {k: ([abs(x) for x in v] if k == "size" else abs(v) if k.startswith("resize_") else v) for k, v in kw.items()}
    if rng.random() < 0.85 and not mixed_nn:
        nn = "NN" in filters
        rel = bool(rng.random() < 0.4)
        wins = [_window(rng, h, w, nn, point) for h, w, _ in shapes]
        if not rel:
            wins = [(a * (h, w), b * (h, w)) for (a, b), (h, w, _) in zip(wins, shapes)]
            if rng.random() < 0.4:  # whole pixels
                wins = [(np.round(a), np.round(b)) if (np.round(a) != np.round(b)).all() else (a, b) for a, b in wins]
        kw["roi_relative"] = rel
        if n == 1 or (rng.random() < 0.3 and all(np.allclose(wins[0][k], x[k]) for x in wins for k in (0, 1))):
            kw["roi_start"], kw["roi_end"] = [float(v) for v in wins[0][0]], [float(v) for v in wins[0][1]]
        else:  # per-sample windows (tensor arguments)
            args["roi_start"] = [np.asarray(a, np.float32) for a, _ in wins]
            args["roi_end"] = [np.asarray(b, np.float32) for _, b in wins]
    if n > 1 and rng.random() < 0.5:  # per-sample sizes
        for k in ("resize_x", "resize_y", "resize_shorter", "resize_longer"):
            if k in kw:
                v = kw.pop(k)
                args[k] = [np.float32(v * (1 + 0.3 * i)) for i in range(n)]
        if "size" in kw:
            v = kw.pop("size")
            args["size"] = [np.asarray(v, np.float32) * np.float32(1 + 0.25 * i) for i in range(n)]
    return Case("resize", images, "HWC", kw, args)


def _layout_cases() -> dict[str, Case]:
    """Every layout resize takes, with a window and a fractional size: spatial axes in layout order."""
    base = image((2, 13, 17, 3), np.uint8, 5)
    kw = dict(resize_x=11.5, roi_start=[1.5, 15.0], roi_end=[12.0, 2.25], interp_type="CUBIC")
    return {
        "layout/HWC": Case("resize", [base[0]], "HWC", kw),
        "layout/CHW": Case("resize", [base[0].transpose(2, 0, 1)], "CHW", kw),
        "layout/FHWC": Case("resize", [base], "FHWC", kw),
        "layout/FCHW": Case("resize", [base.transpose(0, 3, 1, 2)], "FCHW", kw),
        "layout/CFHW": Case("resize", [base.transpose(3, 0, 1, 2)], "CFHW", kw),
        "layout/HWC1": Case("resize", [base[0][..., :1]], "HWC", kw),  # torch_dali's HW is compared to this
    }


def _error_cases() -> dict[str, Case]:
    img = [image((9, 12, 3), np.uint8, 3)]
    return {
        "error/roi_start_alone": Case("resize", img, "HWC", dict(resize_x=5, roi_start=[1.0, 1.0])),
        "error/roi_end_alone": Case("resize", img, "HWC", dict(resize_x=5, roi_end=[1.0, 1.0])),
        "error/roi_length": Case("resize", img, "HWC", dict(resize_x=5, roi_start=[0.0, 0.0, 0.0], roi_end=[5.0, 5.0, 1.0])),
        "error/size_and_resize_x": Case("resize", img, "HWC", dict(resize_x=5, size=[4, 4])),
        "error/shorter_and_mode": Case("resize", img, "HWC", dict(resize_shorter=5, mode="stretch")),
        "error/size_length": Case("resize", img, "HWC", dict(size=[4.0, 4.0, 4.0])),
        "error/max_size_length": Case("resize", img, "HWC", dict(resize_x=5, max_size=[4.0, 4.0, 4.0])),
        "error/dtype": Case("resize", img, "HWC", dict(resize_x=5, dtype="INT16")),
        "error/int32": Case("resize", [img[0].astype(np.int32)], "HWC", dict(resize_x=5)),
        "error/roi_per_sample_length": Case("resize", img, "HWC", dict(resize_x=5), dict(
            roi_start=[np.zeros(3, np.float32)], roi_end=[np.full(3, 4.0, np.float32)])),
        "error/rcm_roi_alone": Case("resize_crop_mirror", img, "HWC", dict(resize_x=8, crop=(4, 4), roi_start=[1.0, 1.0])),
    }


def _rcm_cases() -> dict[str, Case]:
    """resize_crop_mirror: the crop is cut from the resized window (flipped windows, subpixel off)."""
    out: dict[str, Case] = {}
    for k in range(10):
        rng = np.random.default_rng(500 + k)
        h, w = int(rng.integers(8, 26)), int(rng.integers(8, 26))
        img = image((h, w, 3), np.uint8, 40 + k)
        a, b = _window(rng, h, w, nn=False)
        kw: dict[str, Any] = dict(resize_shorter=float(np.round(rng.uniform(6, 30), 1)), crop=(5.0, 6.0),
                                  crop_pos_x=float(rng.random()), crop_pos_y=float(rng.random()),
                                  mirror=int(k % 2), roi_start=[float(v) for v in a], roi_end=[float(v) for v in b],
                                  roi_relative=True, subpixel_scale=bool(k % 3), interp_type=str(rng.choice(FILTERS[1:])),
                                  antialias=bool(k % 4))
        if k >= 7:
            kw.pop("resize_shorter")
            kw["size"] = [float(rng.integers(6, 20)), -float(rng.integers(6, 20))] if k == 9 else [0.0, 13.5]
        out[f"rcm/{k}"] = Case("resize_crop_mirror", [img], "HWC", kw)
    # the deprecated fast variant: the same op, but no antialiasing by default (a downscale shows it)
    out["rcm/fast_default"] = Case("fast_resize_crop_mirror", [image((40, 60, 3), np.uint8, 60)], "HWC", dict(
        resize_shorter=13.0, crop=(8.0, 8.0), roi_start=[2.0, 50.0], roi_end=[38.0, 4.0]))
    return out


def _subpixel_cases() -> dict[str, Case]:
    """No window: a fractional size (given or computed) with and without subpixel_scale."""
    out: dict[str, Case] = {}
    img = image((23, 31, 3), np.uint8, 77)
    for f in FILTERS:
        for sub in (True, False):
            out[f"subpixel/{f}_{int(sub)}_shorter"] = Case("resize", [img], "HWC", dict(
                resize_shorter=20, interp_type=f, subpixel_scale=sub))
            out[f"subpixel/{f}_{int(sub)}_frac"] = Case("resize", [img], "HWC", dict(
                size=[10.4, 41.7], interp_type=f, subpixel_scale=sub, antialias=sub))
    return out


def size_cases() -> dict[str, Case]:
    """Output shapes only (blank 1-channel images, nearest neighbour), many samples per case: every
    way of sizing, mode and max_size, with and without windows (absolute and relative)."""
    rng = np.random.default_rng(99)
    out: dict[str, Case] = {}
    ways = ("xy", "x", "y", "size", "shorter", "longer")
    for way in ways:
        for mode in ("default", "stretch", "not_larger", "not_smaller"):
            if way in ("shorter", "longer") and mode != "default":
                continue
            for k, max_size in enumerate((None, [37.0], [25.0, 0.0], [40.5, 33.0])):
                for rel in (None, False, True):
                    n = 24
                    shapes = [(int(rng.integers(1, 60)), int(rng.integers(1, 60))) for _ in range(n)]

                    def r() -> float:
                        return float(rng.choice([rng.uniform(1, 80), rng.integers(1, 80), 0.0, -rng.uniform(1, 80)]))
                    if way == "xy":
                        args = dict(resize_x=[r() for _ in range(n)], resize_y=[r() for _ in range(n)])
                    elif way in ("x", "y"):
                        args = {f"resize_{way}": [r() for _ in range(n)]}
                    elif way == "size":
                        args = dict(size=[[r(), r()] for _ in range(n)])
                    else:
                        args = {f"resize_{way}": [abs(r()) for _ in range(n)]}
                    kw: dict[str, Any] = dict(interp_type="NN")
                    if mode != "default":
                        kw["mode"] = mode
                    if max_size is not None:
                        kw["max_size"] = max_size
                    if rel is not None:
                        kw["roi_relative"] = rel
                        wins = [_window(rng, h, w, nn=True, point=rng.random() < 0.1) for h, w in shapes]
                        if not rel:
                            wins = [(a * (h, w), b * (h, w)) for (a, b), (h, w) in zip(wins, shapes)]
                        args["roi_start"] = [a for a, _ in wins]
                        args["roi_end"] = [b for _, b in wins]
                    out[f"sizes/{way}_{mode}_{k}_{rel}"] = Case(
                        "resize", [np.zeros((h, w, 1), np.uint8) for h, w in shapes], "HWC", kw,
                        {a: [np.asarray(v, np.float32) for v in vals] for a, vals in args.items()})
    return out


def _edge_cases() -> dict[str, Case]:
    """Rounding decisions pinned by hand."""
    img = image((25, 25, 1), np.uint8, 92)
    x0 = float(np.float32(0.5) - np.float32(2.0 ** -24))  # 0.5 less one float32 step below 1
    return {
        # the window's centre is taken in double precision: here float32 would make the adjusted
        # extent exactly 12 (the cubic mag filter) where DALI's is 12.000002 (the linear min filter)
        "edge/centre_in_double": Case("resize", [img], "HWC", dict(
            resize_y=26.0, min_filter="LINEAR", mag_filter="CUBIC", mode="stretch", antialias=False,
            roi_start=[16.787813, 17.177479], roi_end=[26.627602, 5.5168204])),
        # nearest neighbour at scale 1 copies a run of columns from floor(start + 0.5): here
        # floor(start + i + 0.5) (float32) would skip a column
        "edge/nn_unit_scale_run": Case("resize", [img], "HWC", dict(
            size=[25, 12], interp_type="NN", roi_start=[0.0, x0], roi_end=[25.0, x0 + 12.0])),
    }


SIZE_CASES = size_cases()
CASES: dict[str, Case] = {
    **{f"rand/{i}": _random_case(i) for i in range(150)},
    **_layout_cases(),
    **_error_cases(),
    **_rcm_cases(),
    **_subpixel_cases(),
    **_edge_cases(),
}
