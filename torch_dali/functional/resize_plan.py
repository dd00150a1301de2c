"""DALI 2.4's resize planning: for each sample and spatial axis, the output extent and the source
window (a float region of interest) that the resampling maps onto it.

The rules (checked against DALI's CPU backend on random cases: tests/test_ref_resize_roi.py):
- The source window is the whole axis, or [roi_start, roi_end] (pixels, or fractions of the
  extent with `roi_relative`); coordinates follow the spatial axes in layout order ((y, x) for
  HWC and CHW). A window narrower than 1e-3 pixel is widened to 1e-3 around its centre; start >
  end flips the axis. The window's extent replaces the input's in the size rules.
- Requested sizes (0: unspecified; negative: flip) become output sizes by `mode`: "default" fills
  unspecified extents with the geometric mean of the given scales, "stretch" keeps them, and
  "not_larger" / "not_smaller" (also `resize_longer` / `resize_shorter`) apply the smallest /
  largest given scale to every axis; `max_size` caps each extent ("default", "stretch") or the
  common scale (the other modes). An unspecified extent in "default" or "stretch" mode (and every
  extent when none is given) does not flip, even for a flipped window.
- Extents round half away from zero (at least 1). With `subpixel_scale`, a fractional extent
  keeps its exact scale: the window is shrunk or grown about its centre by rounded / exact
  (factor clamped to [-10, 10]); without it, the window maps onto the rounded extent.
Arithmetic follows DALI's types (float32 sizes and windows, float64 scales) so that rounding ties
land where DALI's do. Everything is vectorized over samples: (n, ndim) arrays.
"""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

F32, F64 = np.float32, np.float64
MODES = ("default", "stretch", "not_larger", "not_smaller")
_MIN_EXTENT = F64(F32(1e-3))  # narrower windows are widened to this (DALI's guard against 0 / 0)


def per_axis(value: Any, n: int, ndim: int, name: str) -> np.ndarray:
    """A size-like argument as (n, ndim) float64 holding float32 values: one value for every axis,
    one per axis, or one row per sample (an (n, 1) or (n, ndim) array)."""
    a = np.asarray(value, dtype=F64).astype(F32).astype(F64)
    if a.ndim == 2 and a.shape[0] == n and a.shape[1] in (1, ndim):
        return np.broadcast_to(a, (n, ndim)).copy()
    a = a.reshape(-1)
    if a.size not in (1, ndim):
        raise ValueError(f"`{name}` must have 1 or {ndim} values (one per spatial axis), got {a.size}")
    return np.broadcast_to(a, (n, ndim)).copy()


def source_windows(in_size: np.ndarray, roi_start: Any = None, roi_end: Any = None,
                   relative: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi), each (n, ndim) float32 values: the region of interest per axis (the whole extent
    when none is given or the axis is empty)."""
    ins = np.asarray(in_size, dtype=F64)
    n, ndim = ins.shape
    if roi_start is None:
        return np.zeros_like(ins), ins.astype(F32).astype(F64)
    lo = per_axis(roi_start, n, ndim, "roi_start")
    hi = per_axis(roi_end, n, ndim, "roi_end")
    if relative:
        lo, hi = lo * ins, hi * ins
    narrow = np.abs(hi - lo) < _MIN_EXTENT
    half = F64(F32(0.5) * F32(1e-3)) * np.where(lo <= hi, 1.0, -1.0)
    lo, hi = np.where(narrow, lo - half, lo), np.where(narrow, hi + half, hi)
    empty = ins <= 0
    lo, hi = np.where(empty, 0.0, lo), np.where(empty, ins, hi)
    return lo.astype(F32).astype(F64), hi.astype(F32).astype(F64)


def _f32(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=F64).astype(F32).astype(F64)


def adjust_sizes(req: np.ndarray, ins: np.ndarray, mode: str, max_size: np.ndarray | None) -> np.ndarray:
    """Requested extents (n, ndim; 0 = unspecified, negative flips) -> output extents before
    rounding, for window extents `ins` (all float32 values held as float64)."""
    n, ndim = ins.shape
    given = (req != 0) & (ins != 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(ins != 0, _f32(req / np.where(ins != 0, ins, 1.0)), 1.0)
    out = req.copy()
    provided = given.sum(1)
    if mode in ("default", "stretch"):
        if mode == "default":
            avg = np.prod(np.where(given, np.abs(scale), 1.0), axis=1)
            avg = np.where(provided > 1, avg ** (1.0 / np.maximum(provided, 1)), avg)
            fill = _f32(ins * avg[:, None])
        else:
            fill = ins
        out = np.where(given, out, fill)
        if max_size is not None:
            cap = np.broadcast_to(max_size, (n, ndim))
            over = (cap > 0) & (np.abs(out) > cap)
            out = np.where(over, np.copysign(cap, out), out)
    else:
        if mode == "not_smaller":
            final = np.where(given, np.abs(scale), -np.inf).max(1)
        else:
            final = np.where(given, np.abs(scale), np.inf).min(1)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if max_size is not None:
                for d in range(ndim):
                    if max_size[d] > 0:
                        cap = max_size[d] / ins[:, d]
                        final = np.where(cap < final, cap, final)
            change = ~given | (np.abs(scale) != final[:, None])
            # the sign of the scale: an unspecified extent of a flipped window holds -0.0
            signed = np.copysign(np.broadcast_to(final[:, None], (n, ndim)), scale)
            out = np.where(change, _f32(ins * signed), out)
    return np.where(provided[:, None] > 0, out, ins)


def plan(in_size: Any, requested: Any, mode: str = "default", max_size: Any = None,
         roi_start: Any = None, roi_end: Any = None, roi_relative: bool = False,
         subpixel_scale: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(out, lo, hi): every sample's output extents (n, ndim) int64 and source windows (float32
    values in float64 arrays; lo > hi flips), for input extents `in_size` (n, ndim) and the
    requested extents (n, ndim), spatial axes in layout order."""
    if mode not in MODES:
        raise ValueError(f"`mode` must be one of {MODES}, got {mode!r}")
    ins = np.asarray(in_size, dtype=F64)
    if ins.ndim == 1:
        ins = ins[None]
    n, ndim = ins.shape
    req = per_axis(requested, n, ndim, "size")
    caps = None if max_size is None else per_axis(max_size, 1, ndim, "max_size")[0]
    lo, hi = source_windows(ins, roi_start, roi_end, roi_relative)
    for what, v in (("the sizes (`size`, `resize_x`/`resize_y`, `resize_shorter`, `resize_longer`)", req),
                    ("`roi_start`", lo), ("`roi_end`", hi)):
        if not np.isfinite(v).all():
            raise ValueError(f"{what} must be finite numbers, got {v.tolist()}")
    ext = _f32(hi - lo)
    flipped = ext < 0
    lo, hi = np.where(flipped, hi, lo), np.where(flipped, lo, hi)
    req = np.where(flipped, -req, req)  # -0.0 for an unspecified extent: the sign survives a fill
    out_f = adjust_sizes(req, np.abs(ext), mode, caps)
    empty = (ins <= 0).any(1, keepdims=True)
    rounded = np.floor(np.abs(out_f.astype(F32)).astype(F64) + 0.5)
    out = np.maximum(np.where(empty, 0, 1), rounded).astype(np.int64)
    flip = out_f < 0
    lo, hi = np.where(flip, hi, lo), np.where(flip, lo, hi)
    if subpixel_scale:
        exact = np.abs(out_f)
        adjust = out != exact
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.clip(out / exact, -10.0, 10.0)  # a 0 extent: x10, as DALI clamps it
            centre = (lo + hi) * 0.5
            new_lo = _f32(np.clip(centre + (lo - centre) * factor, -1e9, 1e9))
            new_hi = _f32(np.clip(centre + (hi - centre) * factor, -1e9, 1e9))
        lo, hi = np.where(adjust, new_lo, lo), np.where(adjust, new_hi, hi)
    return out, lo, hi


def requested(n: int, ndim: int, *, resize_x: Any = 0.0, resize_y: Any = 0.0, resize_shorter: Any = 0.0,
              resize_longer: Any = 0.0, size: Any = None, mode: str = "default",
              resize_z: Any = 0.0) -> tuple[np.ndarray, str]:
    """The requested extents (n, ndim) and the mode DALI uses, from one way of sizing (`size`,
    `resize_shorter`, `resize_longer`, else `resize_x` / `resize_y` (/ `resize_z` for volumes):
    whichever is given first)."""
    if size is not None:
        return per_axis(size, n, ndim, "size"), mode
    for value, implied in ((resize_shorter, "not_smaller"), (resize_longer, "not_larger")):
        v = np.broadcast_to(np.asarray(value, dtype=F64).reshape(-1), (n,))
        if (v != 0).any():
            return per_axis(v[:, None], n, ndim, "size"), implied
    ry = np.broadcast_to(np.asarray(resize_y, dtype=F64).reshape(-1), (n,))
    rx = np.broadcast_to(np.asarray(resize_x, dtype=F64).reshape(-1), (n,))
    rz = np.broadcast_to(np.asarray(resize_z, dtype=F64).reshape(-1), (n,))
    cols = [ry, rx] if ndim == 2 else [np.zeros(n)] * (ndim - 3) + [rz, ry, rx]
    return per_axis(np.stack(cols, 1), n, ndim, "size"), mode


def _key(v: Any) -> Any:
    """`v` as a hashable value (lists and arrays as tuples of floats)."""
    if v is None or isinstance(v, (int, float, str, bool)):
        return v
    return tuple(float(x) for x in np.asarray(v, dtype=F64).reshape(-1))


def one(in_size: Sequence[int], sizing: dict[str, Any], mode: str = "default", max_size: Any = None,
        roi: tuple[Any, Any] | None = None, roi_relative: bool = False,
        subpixel_scale: bool = True) -> tuple[tuple[int, float, float], ...]:
    """One sample's plan: [(out, lo, hi)] per spatial axis. `sizing` holds the sizing arguments
    (`requested`'s keywords, one value each); `roi` = (roi_start, roi_end) or None. Cached: a
    dataset's images repeat a few sizes, and NumPy's per-call cost is ~0.1 ms."""
    key = tuple(sorted((k, _key(v)) for k, v in sizing.items()))
    win = None if roi is None else (_key(roi[0]), _key(roi[1]))
    return _one(tuple(int(v) for v in in_size), key, mode, _key(max_size), win, bool(roi_relative), bool(subpixel_scale))


@functools.lru_cache(maxsize=4096)
def _one(in_size: tuple[int, ...], sizing: tuple[tuple[str, Any], ...], mode: str, max_size: Any,
         roi: tuple[Any, Any] | None, roi_relative: bool, subpixel_scale: bool) -> tuple[tuple[int, float, float], ...]:
    ndim = len(in_size)
    req, mode = requested(1, ndim, mode=mode, **dict(sizing))
    start, end = roi if roi is not None else (None, None)
    out, lo, hi = plan(np.asarray([in_size]), req, mode, max_size, start, end, roi_relative, subpixel_scale)
    return tuple((int(out[0, d]), float(lo[0, d]), float(hi[0, d])) for d in range(ndim))
