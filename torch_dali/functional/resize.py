"""Pure-torch image resizing (HWC tensors, any device) with DALI's filters, and DALI's size rules.

Resampling follows DALI 2.4's CPU resize (checked against it: tests/reference, test_ref_resize.py):
separable passes, one per axis, each output sample a normalised weighted sum of `support` source
samples whose indices are clamped to the image (borders repeat; nothing is renormalised). The
weights come from the filter tables DALI uses (triangle, exp(-x^2) over [-2, 2], Keys cubic with
a=-0.5 over [-2, 2], Lanczos-3), read with linear interpolation, in float32 in DALI's order.
- `interp_type` names the filter; when a dimension shrinks with `antialias`, linear becomes the
  triangular filter and every filter widens by in/out (the Gaussian's and the triangle's radius,
  cubic's and Lanczos' support); without `antialias`, triangular becomes linear. Growing
  dimensions never widen (DALI's mag filter has no antialiasing).
- nn picks source index floor(origin + (i + 0.5) * in / out), computed in float32 (row positions
  as DALI steps them, by repeated addition; at scale 1 a run of columns from floor(origin + 0.5)).
- Integer outputs saturate and round half to even, or half away from zero when the last pass is
  nearest-neighbour, as DALI's CPU resize does; uint8 / int16 / uint16 values that DALI stores
  one by one round half away from zero: the last row % 16 (16-bit: 8) values of a row after a
  last pass down the columns, the columns outside `vector_cols` after one along the rows
  (`to_output`, which also has int16's vector rounding of [-0.5, 0) to -1).
- A source window (`roi` = (y, x, h, w), or `window` = float (start, end) per axis, as planned by
  `resize_plan` from roi_start / roi_end / subpixel_scale) is resampled as DALI resamples its
  region of interest: output i of an axis is centred on start + (i + 0.5) * (end - start) / out,
  in float32; start > end reads the axis backwards (a flip, resampled, not mirrored); the filter's
  taps beyond the window read the image where it has pixels and repeat its border elsewhere.
Pass order: DALI's, from its cost estimate (each value a pass writes costs 3 + taps down the
columns, 3 + 1.4 taps along the rows; fitted to its choices in 1,950 random cases, none off).
Float32 sums in the other order differ by an ulp in many values, uint8 outputs where one lands
on .5. Measured against DALI 2.4 (CPU) after that: 0 values differ in 400 random resizes with
one extent derived (resize_shorter / resize_longer / resize_x / resize_y, every filter, uint8 and
float32, 1 and 3 channels) and in 850 random two-extent resizes (float32, every filter).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
from typing import Callable, NamedTuple, Sequence

import numpy as np
import torch

from . import resize_plan
from .crop import convert

Size2 = tuple[int, int]
Roi = tuple[float, float, float, float]  # (y, x, h, w) of the source window
Window = Sequence[tuple[float, float]]  # ((y0, y1), (x0, x1)); y0 > y1 (x0 > x1) flips that axis
FILTERS = ("nn", "linear", "triangular", "gaussian", "cubic", "lanczos3")


def output_size(in_h: int, in_w: int, *, resize_x: float = 0.0, resize_y: float = 0.0,
                resize_shorter: float = 0.0, resize_longer: float = 0.0,
                size: Sequence[float] | None = None, max_size: float | Sequence[float] | None = None,
                mode: str = "default") -> Size2:
    """The (height, width) DALI's Resize produces for an (in_h, in_w) image (no region of interest;
    `resize_plan` has the rules, windows included).

    `size` and `max_size` are in (height, width) order; 0 leaves a dimension unspecified, and a
    negative size (a flip) counts by its magnitude. `resize_shorter` acts as mode "not_smaller" and
    `resize_longer` as "not_larger"; the first of `size`, `resize_shorter`, `resize_longer`,
    `resize_x`/`resize_y` that is given decides.
    """
    sizing = dict(resize_x=resize_x, resize_y=resize_y, resize_shorter=resize_shorter,
                  resize_longer=resize_longer, size=size)
    (h, _, _), (w, _, _) = resize_plan.one((in_h, in_w), sizing, mode, max_size)
    return h, w


# -- filter tables (DALI's), built once -------------------------------------------------------------

def _c_float_fn(name: str, fallback: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """C's float32 `name` (sinf, expf) of each value, as DALI builds its tables with the C library's
    (glibc's sinf is not correctly rounded: 10 of the 386 Lanczos arguments differ from float64 sin
    rounded, and NumPy's float32 exp differs from expf in 20 of the 65 Gaussian entries); without a
    C library, `fallback` in float64, rounded."""
    try:
        f = getattr(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"), name)
    except (OSError, AttributeError):
        return fallback(x.astype(np.float64)).astype(np.float32)
    f.restype, f.argtypes = ctypes.c_float, [ctypes.c_float]
    return np.array([f(float(v)) for v in x.reshape(-1)], np.float32).reshape(x.shape)


def _sinc(x: np.ndarray) -> np.ndarray:
    """DALI's float sinc: a = float32(x * pi), sinf(a) / a (1 - a^2 / 6 below 1e-5)."""
    a = (x.astype(np.float64) * np.pi).astype(np.float32)
    small = np.abs(a) < np.float32(1e-5)
    safe = np.where(small, np.float32(1), a)
    out = (_c_float_fn("sinf", np.sin, safe) / safe).astype(np.float32)
    return np.where(small, np.float32(1) - a * a * (np.float32(1) / np.float32(6)), out).astype(np.float32)


def _grid(n: int, half_width: float) -> np.ndarray:
    """n points spanning [-half_width, half_width], computed in float32 as DALI's tables are."""
    i = np.arange(n, dtype=np.float32)
    return np.float32(2 * half_width) * (i - np.float32((n - 1) * 0.5)) / np.float32(n - 1)


def _tables() -> dict[str, np.ndarray]:
    g = _grid(65, 2.0)
    gauss = _c_float_fn("expf", np.exp, (-g * g).astype(np.float32))
    c = np.abs(_grid(129, 2.0))
    c2, c3 = c * c, c * c * c
    cubic = np.where(c > 1, np.float32(-0.5) * c3 + np.float32(2.5) * c2 - np.float32(4) * c + np.float32(2),
                     np.float32(1.5) * c3 - np.float32(2.5) * c2 + np.float32(1)).astype(np.float32)
    cubic[c >= 2] = 0
    lz = _grid(193, 3.0)
    lanczos = (_sinc(lz) * _sinc(lz / np.float32(3))).astype(np.float32)
    lanczos[np.abs(lz) >= 3] = 0
    return {"triangle": np.array([0, 1, 0], np.float32), "gaussian": gauss, "cubic": cubic,
            "lanczos3": lanczos}


_TABLES: dict[str, np.ndarray] = {}  # built on first use
_SQRT2 = math.sqrt(2.0)


def _table(name: str) -> np.ndarray:
    if not _TABLES:
        _TABLES.update(_tables())
    return _TABLES[name]


def filter_table(kind: str) -> np.ndarray:
    """The float32 table DALI samples for filter `kind` (linear and triangular: the triangle)."""
    return _table("triangle" if kind in ("linear", "triangular") else kind)


def _filter(kind: str, n_in: float, n_out: int, antialias: bool) -> tuple[np.ndarray, np.float32, np.float32, int]:
    """(table, table units per source pixel, anchor, number of taps) of one axis's filter."""
    F = np.float32
    shrink = antialias and n_out < n_in
    ratio = F(F(n_in) / F(n_out))
    if kind in ("linear", "triangular"):  # linear is the triangle of radius 1; antialias widens it
        table, width = _table("triangle"), max(F(1), F(2) * (ratio if shrink else F(1)))
    elif kind == "gaussian":  # DALI passes sigma = radius / (2 sqrt 2), then width 4 sqrt 2 sigma
        radius = ratio if shrink else F(1)
        sigma = F(float(F(radius * F(0.5))) / _SQRT2)
        table, width = _table("gaussian"), max(F(1), F(F(4 * _SQRT2) * sigma))
    elif kind == "cubic":
        radius = F(F(2) * F(n_in)) / F(n_out) if shrink else F(2)
        table, width = _table("cubic"), F(2) * max(F(2), F(radius))
    elif kind == "lanczos3":
        radius = F(F(3) * F(n_in)) / F(n_out) if shrink else F(3)
        table, width = _table("lanczos3"), F(2) * max(F(3), F(radius))
    else:
        raise ValueError(f"resize: unknown filter {kind!r}; expected one of {FILTERS}")
    n = len(table)
    units = F(F(n - 1) / F(width))
    anchor = F(F(n - 1) * F(0.5)) / units
    return table, units, F(anchor), int(math.ceil(F(F(n - 1) / units)))


def pass_reach(kind: str, n_in: int, n_out: int, antialias: bool, axis: "Axis") -> tuple[int, int, int]:
    """(first source sample, number of samples, taps) one axis's pass reads: DALI's region of
    interest grown by the filter (in float32, as DALI; its end rounded up), which decides its pass
    order and its second pass's shift and width."""
    F = np.float32
    if kind == "nn":
        anchor, taps = F(0), 1
    else:
        _, _, anchor, taps = _filter(kind, abs(axis.span), n_out, antialias)
    a, b = (axis.start, axis.end) if axis.start <= axis.end else (axis.end, axis.start)
    lo = max(0, min(n_in, math.floor(F(F(a) - anchor))))
    hi = max(0, min(n_in, math.ceil(F(F(F(b) - anchor) + F(taps)))))
    return lo, hi - lo, taps


class Axis(NamedTuple):
    """One axis's source window: output i is centred on start + (i + 0.5) * span / n_out; `end`
    (start + span) bounds what the filter reads. A negative span reads the axis backwards."""
    start: float
    span: float
    end: float


def source_axes(in_h: int, in_w: int, roi: Roi | None, window: Window | None) -> tuple[Axis, Axis]:
    """Both axes' windows (float32 values) from `window` ((lo, hi) per axis) or `roi` (y, x, h, w)."""
    F = np.float32
    if window is not None:
        return tuple(Axis(float(F(lo)), float(F(F(hi) - F(lo))), float(F(hi))) for lo, hi in window)  # type: ignore
    oy, ox, sh, sw = (0.0, 0.0, float(in_h), float(in_w)) if roi is None else (float(v) for v in roi)
    return tuple(Axis(float(F(o)), float(F(sp)), float(F(F(o) + F(sp)))) for o, sp in ((oy, sh), (ox, sw)))  # type: ignore


@functools.lru_cache(maxsize=512)
def pass_weights(kind: str, n_in: int, n_out: int, antialias: bool, origin: float, span: float,
             rows: bool, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """(source indices (n_out, taps), float32 weights (n_out, taps)) of one axis: output i is
    centred on source origin + (i + 0.5) * span / n_out - 0.5 (a negative span runs backwards).
    `shift` is where DALI's pass starts reading (its positions are computed from origin - shift,
    which rounds differently)."""
    F = np.float32
    o = F(F(origin) - F(shift))
    scale = F(F(span) / F(n_out))
    if kind == "nn":
        if rows:  # DALI steps row positions by adding the scale (float32 sums; a tie can drop a row)
            steps = np.full(n_out, scale, F)
            steps[0] = o + F(F(0.5) * scale)
            src = np.floor(np.cumsum(steps, dtype=F))
        elif scale == 1:  # DALI copies a run of columns from round(origin)
            src = np.floor(F(o + F(0.5))) + np.arange(n_out, dtype=F)
        else:
            src = np.floor(o + (np.arange(n_out, dtype=F) + F(0.5)) * scale)
        return np.clip(src.astype(np.int64) + shift, 0, n_in - 1)[:, None], np.ones((n_out, 1), F)
    table, units, anchor, taps = _filter(kind, abs(span), n_out, antialias)
    start = F(o + F(F(F(F(0.5) * scale) - F(0.5)) - anchor))
    left = np.arange(n_out, dtype=F) * scale + start  # where the filter starts, in source pixels
    first = np.ceil(left)
    frac = (first - left).astype(F)
    n = len(table)
    # every tap at once (elementwise float32, as one tap at a time would compute it)
    pos = ((frac[:, None] + np.arange(taps, dtype=F)[None, :]) * units).astype(F)
    lo = np.floor(pos)
    d = (pos - lo).astype(F)
    lo_i = lo.astype(np.int64)
    f0 = np.where(lo_i >= 0, table[np.clip(lo_i, 0, n - 1)], F(0))
    f1 = np.where(lo_i + 1 < n, table[np.clip(lo_i + 1, 0, n - 1)], F(0))
    w = (f0 + d * (f1 - f0)).astype(F)
    w[~((pos > -1) & (pos < n))] = 0
    # float32 sums tap after tap, in DALI's order (cumsum accumulates left to right)
    total = np.cumsum(w, axis=1, dtype=F)[:, -1] if taps else np.zeros(n_out, F)
    w = np.where(total[:, None] != 0, w / np.where(total == 0, F(1), total)[:, None], w).astype(F)
    idx = np.clip(first.astype(np.int64)[:, None] + np.arange(taps) + shift, 0, n_in - 1)
    return idx, w


def vector_cols(kind: str, n_out: int, antialias: bool, axis: "Axis", shift: int, width: int,
                 lanes: int) -> np.ndarray:
    """Which output columns DALI's CPU resize rounds half to even when its last pass runs along
    the rows (horizontal): it splits the columns into up to four runs (taps past the input's start
    (`width` pixels from `shift`), past both ends, inside, past its end; the first and last swap
    for a backwards read) and computes each run `lanes` pixels at a time from its start (16 for
    uint8, 8 for 16-bit results), the run's last columns one by one, rounding an exact x.5 away from
    zero (measured on DALI 2.4's uint8 and int16 / uint16 outputs, 1 to 5 channels)."""
    F = np.float32
    _, _, anchor, taps = _filter(kind, abs(axis.span), n_out, antialias)
    o = F(F(axis.start) - F(shift))
    scale = F(F(axis.span) / F(n_out))
    start = F(o + F(F(F(F(0.5) * scale) - F(0.5)) - anchor))
    first = np.ceil(np.arange(n_out, dtype=F) * scale + start)
    lead, trail = first < 0, first + taps > width
    if n_out > 1 and first[-1] < first[0]:  # read backwards: DALI scans from the other side
        lead, trail = trail, lead
    lo = int(np.argmin(lead)) if not lead.all() else n_out  # first column past the leading run
    hi = n_out - (int(np.argmin(trail[::-1])) if not trail.all() else n_out)  # end of the inner one
    cut = min(lo, hi)
    runs = (0, cut, max(cut, lo), max(cut, lo, hi), n_out)
    vec = np.zeros(n_out, bool)
    for a, b in zip(runs, runs[1:]):
        vec[a:a + (b - a) // lanes * lanes] = True
    return vec


def gather_sum(m: torch.Tensor, dim: int, idx: np.ndarray, w: np.ndarray) -> torch.Tensor:
    """out = sum_k w[k] * m.index_select(dim, idx[k]) for a 2-D matrix m (idx, w: (taps, n)),
    accumulated tap by tap in m's float type (DALI's order), in two preallocated buffers (a fresh
    tensor per tap costs several times more)."""
    dev = m.device
    it = torch.from_numpy(np.ascontiguousarray(idx)).to(dev)
    wt = torch.from_numpy(np.ascontiguousarray(w)).to(device=dev, dtype=m.dtype)
    wk = (lambda k: wt[k, :, None]) if dim == 0 else (lambda k: wt[k])
    shape = (idx.shape[1], m.shape[1]) if dim == 0 else (m.shape[0], idx.shape[1])
    out = torch.empty(shape, dtype=m.dtype, device=dev)
    torch.index_select(m, dim, it[0], out=out)
    out.mul_(wk(0))
    buf = torch.empty_like(out) if idx.shape[0] > 1 else out
    for k in range(1, idx.shape[0]):
        torch.index_select(m, dim, it[k], out=buf)
        out.add_(buf.mul_(wk(k)))
    return out


def _axis_pass(x: torch.Tensor, dim: int, idx: np.ndarray, w: np.ndarray) -> torch.Tensor:
    """One separable pass along `dim` (0: rows, 1: columns) of an (H, W, C) float tensor, on its
    (H, W * C) view: rows gather whole rows; columns gather each channel of the source pixels."""
    h, wd, c = x.shape
    m = x.reshape(h, wd * c)
    if dim == 0:
        return gather_sum(m, 0, idx.T, w.T).view(-1, wd, c)
    cols = (idx.T[:, :, None] * c + np.arange(c)).reshape(idx.shape[1], -1)
    ws = np.repeat(w.T, c, axis=1)
    return gather_sum(m, 1, cols, ws).view(h, -1, c)


def exact_copy(kind: str, n_in: int, n_out: int, origin: float, span: float) -> bool:
    """Axes whose filter is the identity: DALI's linear and cubic weights at integer offsets are
    exactly (.., 0, 1, 0, ..); gaussian and lanczos3 at scale 1 still filter, as in DALI."""
    return (n_in == n_out and origin == 0 and span == n_in
            and kind in ("nn", "linear", "triangular", "cubic"))


#: values DALI's CPU resize rounds per vector store, by output type (its other outputs: float)
STORE_LANES = {torch.uint8: 16, torch.int16: 8, torch.uint16: 8}


def to_output(y: torch.Tensor, dtype: torch.dtype, half_even: bool, row_channels: int = 0,
               cols: np.ndarray | None = None) -> torch.Tensor:
    """The result in the output type: integers saturate and round as DALI's last pass does, half
    to even after a filter, half away from zero after a nearest-neighbour pass. DALI's CPU kernel
    rounds half to even only in its vector stores (`STORE_LANES` values each) and half away from zero
    in the values it stores one by one: `row_channels` ((..., W, K) results): the values
    interleaved in one of DALI's memory rows (C for channel-last data, 1 for planar; 0: no rows
    rule), each row stored `lanes` values at a time, its last row % lanes one by one; `cols`
    (DALI's last pass horizontal): per output column, whether a vector store rounds it
    (`vector_cols`); no row rule then. int16's vector store turns [-0.5, 0) into -1, not 0
    (measured on DALI 2.4: every such value in vector stores, none in the others)."""
    if y.dtype == dtype:
        return y
    if dtype.is_floating_point or not y.dtype.is_floating_point:
        return convert(y, dtype)
    if not half_even:
        return convert(y, dtype)
    info = torch.iinfo(dtype)
    r = torch.round(y)
    lanes = STORE_LANES.get(dtype, 0)
    w, k = int(y.shape[-2]), int(y.shape[-1])
    row = w * row_channels
    vec: torch.Tensor | bool = True
    if lanes and cols is not None:
        vec = torch.from_numpy(cols).to(y.device).reshape(w, 1)
    elif lanes and row_channels and k % row_channels == 0 and row % lanes:
        ks = torch.arange(k, device=y.device)
        pos = torch.arange(w, device=y.device).reshape(w, 1) * row_channels + ks % row_channels
        vec = pos < row - row % lanes
    if dtype == torch.int16:
        r = torch.where((r == 0) & (y < 0) & vec, torch.full_like(r, -1), r)
    if vec is not True:
        t = torch.trunc(y)  # half away from zero (floor(|y| + 0.5) would take 0.49999997 to 1)
        r = torch.where(vec, r, torch.where((y - t).abs() == 0.5, t + torch.sign(y), torch.round(y)))
    return r.clamp_(info.min, info.max).to(dtype)


def resize(image: torch.Tensor, size: Size2, interp: str = "linear", antialias: bool = True,
           min_filter: str | None = None, mag_filter: str | None = None,
           dtype: torch.dtype | None = None, roi: Roi | None = None,
           window: Window | None = None, row_channels: int | None = None) -> torch.Tensor:
    """Resizes one HWC (or HW) image to `size` = (height, width), as DALI's resize does.

    `interp` names a DALI filter ("nn", "linear", "cubic", "lanczos3", "triangular", "gaussian");
    `min_filter` / `mag_filter` override it for dimensions that shrink / grow. The source window
    is the whole image, or `roi` = (y, x, h, w), or `window` = ((y0, y1), (x0, x1)) (float pixel
    coordinates; y0 > y1 or x0 > x1 reads that axis backwards, a flip); the filter's taps beyond the
    window read the image, clamped at its border. The result has `dtype` (default: the input's);
    integer outputs round half to even and saturate (uint8, int16, uint16: half away from zero
    where DALI stores values one by one, see `to_output`; `row_channels`: the channels
    interleaved in DALI's memory rows, default all of the image's, 1 for planes merged into the
    last axis).
    """
    out_dtype = dtype or image.dtype
    squeeze = image.dim() == 2
    x = image.unsqueeze(-1) if squeeze else image
    in_h, in_w = int(x.shape[0]), int(x.shape[1])
    out_h, out_w = int(size[0]), int(size[1])
    if out_h <= 0 or out_w <= 0:
        raise ValueError(f"resize: output size must be positive, got {(out_h, out_w)}")
    if in_h <= 0 or in_w <= 0:
        raise ValueError(f"resize: the input is empty, shape {tuple(image.shape)}")
    ay, ax = source_axes(in_h, in_w, roi, window)
    if ay.span == 0 or ax.span == 0 or not all(map(math.isfinite, (*ay, *ax))):
        raise ValueError(f"resize: the source window must have a finite, non-zero size, got {(ay, ax)}")
    kinds = []
    for n_out, a in ((out_h, ay), (out_w, ax)):
        name = (min_filter if n_out < abs(a.span) else mag_filter) or interp
        if name not in FILTERS:
            raise ValueError(f"resize: unknown filter {name!r}; expected one of {FILTERS}")
        kinds.append(name)
    axes = [(0, kinds[0], in_h, out_h, ay), (1, kinds[1], in_w, out_w, ax)]
    (lo_y, ext_y, taps_y), (lo_x, ext_x, taps_x) = (pass_reach(k, n, m, antialias, a) for _, k, n, m, a in axes)
    # DALI's pass order, by a cost per value each pass writes: 3 + taps down the columns, 3 + 1.4
    # taps along the rows (x5 here, in integers); the second pass reads from its axis's region start
    vert, horz, area = ext_x * out_h, out_w * ext_y, out_h * out_w
    col, row = 15 + 5 * taps_y, 15 + 7 * taps_x
    cost_v, cost_h = vert * col + area * row, horz * row + area * col
    # equal costs: DALI 2.4 runs rows first when the height shrinks, else columns first (measured)
    vert_first = cost_v < cost_h or (cost_v == cost_h and out_h < abs(ay.span))
    if not vert_first:
        axes.reverse()
    shifts = [0, lo_x if vert_first else lo_y]
    plans = [(dim, pass_weights(kind, n_in, n_out, antialias, a.start, a.span, dim == 0, shift))
             for (dim, kind, n_in, n_out, a), shift in zip(axes, shifts)
             if not exact_copy(kind, n_in, n_out, a.start, a.span)]
    if (roi is not None or window is not None) and plans:
        # Only the pixels the taps reach: the window grown by the filter (else the first pass
        # would filter the whole image across the other axis, several times the work)
        reach = {dim: (int(idx.min()), int(idx.max()) + 1) for dim, (idx, _) in plans}
        for dim, (a, b) in reach.items():
            x = x.narrow(dim, a, b - a)
        plans = [(dim, (idx - reach[dim][0], w)) for dim, (idx, w) in plans]
    if all(k == "nn" for k in kinds) or not plans:  # a gather (or nothing): no arithmetic
        y = x
        for dim, (idx, _) in plans:
            y = y.index_select(dim, torch.from_numpy(idx[:, 0]).to(x.device))
    else:
        y = x if x.dtype in (torch.float32, torch.float64) else x.to(torch.float32)
        for dim, (idx, w) in plans:
            y = _axis_pass(y, dim, idx, w)
    rc = int(y.shape[-1]) if row_channels is None else row_channels
    lanes = STORE_LANES.get(out_dtype, 0)
    cols = (vector_cols(kinds[1], out_w, antialias, ax, lo_x, ext_x, lanes)
            if lanes and vert_first and kinds[1] != "nn" else None)
    out = to_output(y, out_dtype, axes[-1][1] != "nn", rc, cols).contiguous()
    return out.squeeze(-1) if squeeze else out
