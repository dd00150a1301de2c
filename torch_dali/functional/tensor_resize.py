"""tensor_resize: DALI 2.4's output-size rules for any axes of a tensor, and the resampling, done
as DALI does it: one block of 2 or 3 consecutive axes (`spatial_block`) by `functional.resize` /
`resize_volume`, the axes before the block as frames, those after it as channels, so the filters,
which axis is rows and which columns, and which axes a Gaussian touches are DALI's.

Sizes, as DALI 2.4 computes them (measured against it):
- `sizes` gives an axis its (float) size, `scales` scale * input extent rounded by
  `size_rounding`; an axis not in `axes` keeps its extent and counts as given, with scale 1.
- mode "default": an axis given 0 is scaled by the geometric mean of the given axes' scales;
  "stretch": it keeps its extent; "not_larger" / "not_smaller": every axis is scaled by the
  smallest / largest of the given axes' scales. `max_size` caps each axis in "default"/"stretch"
  and the common scale in the other modes.
- sizes round half away from zero (at least 1 for a non-empty axis). With `subpixel_scale`, the
  region read is the region of interest scaled by rounded / unrounded size around the point at
  `alignment` (0: its start, 1: its end); a region whose start is past its end is read flipped.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
import torch

from ..errors import ArgumentError
from .resize import resize
from .resize3d import resize_volume

Plan = list[tuple[int, float, float]]  # per axis: (output size, region start, region extent; < 0 flips)


def _f32(v: float) -> float:
    return float(np.float32(v))


def _round_half_away(v: float) -> int:
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


ROUNDING = {"round": _round_half_away, "truncate": lambda v: int(math.trunc(v)), "ceil": lambda v: int(math.ceil(v))}


def plan(op: str, shape: Sequence[int], axes: Sequence[int], sizes: Sequence[float] | None,
         scales: Sequence[float] | None, roi: tuple[Sequence[float], Sequence[float]] | None, roi_relative: bool,
         mode: str, max_size: Sequence[float] | None, rounding: str, subpixel: bool,
         alignment: Sequence[float]) -> Plan:
    """(output size, region start, signed region extent) for every axis of a sample of `shape`;
    the per-axis arguments (`sizes`, `scales`, `roi`, `max_size`, `alignment`) list `axes` only."""
    ndim = len(shape)
    k = len(axes)
    for name, v in (("sizes", sizes), ("scales", scales), ("max_size", max_size), ("alignment", alignment)):
        if v is not None and len(v) not in (1, k):
            raise ArgumentError(f"{op}: `{name}` must have 1 or {k} values (one per resized axis), got {len(v)}")
    # DALI's float arguments are float32, and so are the sizes it derives from them
    per = lambda v, j: _f32(v[0] if len(v) == 1 else v[j])  # noqa: E731
    lo = [0.0] * ndim
    ext = [float(s) for s in shape]
    if roi is not None:
        for j, d in enumerate(axes):
            a, b = per(roi[0], j), per(roi[1], j)
            if roi_relative:
                a, b = a * shape[d], b * shape[d]
            lo[d], ext[d] = a, b - a
    want = [float(s) for s in shape]  # unrounded output sizes; axes not listed keep theirs
    given = [True] * ndim
    rounded: dict[int, int] = {}  # sizes from `scales`, rounded by `size_rounding`
    for j, d in enumerate(axes):
        if scales is not None:
            want[d] = _f32(per(scales, j) * shape[d])
            given[d] = want[d] > 0  # DALI 2.4: a scale of 0 is no scale given for that axis
            if given[d]:
                rounded[d] = ROUNDING[rounding](want[d])
        else:
            want[d] = abs(per(sizes, j))  # type: ignore[arg-type]
            given[d] = want[d] > 0
    caps = [math.inf] * ndim
    if max_size is not None:
        for j, d in enumerate(axes):
            caps[d] = per(max_size, j)
    scale = [want[d] / abs(ext[d]) if ext[d] else 1.0 for d in range(ndim)]
    spec = [d for d in range(ndim) if given[d]]
    if mode in ("not_larger", "not_smaller") and spec:
        s = (min if mode == "not_larger" else max)(scale[d] for d in spec)
        s = min([s] + [caps[d] / abs(ext[d]) for d in range(ndim) if ext[d] and caps[d] < math.inf])
        want = [abs(ext[d]) * s for d in range(ndim)]
    else:
        if mode == "default" and len(spec) < ndim and spec:
            g = math.exp(sum(math.log(scale[d]) for d in spec if scale[d] > 0) / len(spec))
            for d in range(ndim):
                if not given[d]:
                    want[d] = abs(ext[d]) * g
        for d in range(ndim):
            if not given[d] and (mode != "default" or not spec):
                want[d] = abs(ext[d])
                if not spec:  # DALI 2.4: nothing to resize to (sizes or scales all 0): no max_size either
                    continue
            if want[d] > caps[d]:
                want[d] = caps[d]
                rounded.pop(d, None)
    out: Plan = []
    empty = 0 in shape  # DALI 2.4 keeps sizes of an empty sample's other axes from 1 only when not empty
    for d in range(ndim):
        n = rounded.get(d, _round_half_away(want[d])) if shape[d] else 0
        n = max(n, 1) if shape[d] and not empty else n
        span = ext[d]
        if subpixel and want[d] > 0 and n:
            a = per(alignment, axes.index(d)) if d in axes else 0.5
            centre = lo[d] + a * span
            span = span * n / want[d]
            out.append((n, centre - a * span, span))
        else:
            out.append((n, lo[d], span))
    return out


def _unchanged(extent: int, p: tuple[int, float, float]) -> bool:
    n, o, s = p  # DALI compares the region's ends truncated to integers
    return n == extent and int(o) == 0 and int(o + s) == extent


def spatial_block(shapes: Sequence[Sequence[int]], plans: Sequence[Plan]) -> tuple[int, int]:
    """DALI 2.4's resampled block [a, b) of consecutive sample axes, over the whole batch: a 1-D
    sample gets a leading axis of extent 1 first; then axes at the front, and then at the back,
    that no sample changes are dropped while more than two remain (the front ones become frames,
    the back ones channels: a Gaussian filters every axis inside the block, changed or not)."""
    ndim = len(plans[0])
    add = max(0, 2 - ndim)
    same = lambda d: d < add or all(_unchanged(int(sh[d - add]), pl[d - add])  # noqa: E731
                                    for sh, pl in zip(shapes, plans))
    a, b = 0, ndim + add
    trim = b - 2
    while trim and same(a):
        a, trim = a + 1, trim - 1
    while trim and b - 1 > a and same(b - 1):
        b, trim = b - 1, trim - 1
    return a, b


def resample(x: torch.Tensor, plans: Plan, interp: str, min_filter: str | None, mag_filter: str | None,
             antialias: bool, dtype: torch.dtype, block: tuple[int, int] | None = None,
             batch: int = 0, resize_fn: Callable[..., torch.Tensor] = resize) -> torch.Tensor:
    """`x` (with `batch` leading axes that are not the sample's) resampled as DALI 2.4 does: the
    block of axes from `spatial_block` in one 2-D or 3-D resize, the axes before it as frames,
    those after it as channels; float in between, `dtype` at the end. `resize_fn` computes
    `resize` (a caller's stand-in with its results)."""
    lead_shape = list(x.shape[:batch])
    if any(x.shape[batch + d] == 0 or plans[d][0] == 0 for d in range(len(plans))):
        return torch.zeros(lead_shape + [p[0] for p in plans], dtype=dtype, device=x.device)
    if block is None:
        block = spatial_block([list(x.shape[batch:])], [plans])
    add = max(0, 2 - len(plans))
    full = [(1, 0.0, 1.0)] * add + list(plans)
    y = x.reshape(lead_shape + [1] * add + list(x.shape[batch:]))
    a, b = block
    if b - a > 3:  # DALI refuses more than 3; kept (conformance/on_purpose.md): two axes a pass
        return _pairs(y, lead_shape, full, interp, min_filter, mag_filter, antialias, dtype, resize_fn)
    if y.dtype not in (torch.uint8, torch.int16, torch.uint16, torch.float32, torch.float64):
        y = y.to(torch.float32)
    nb = batch + a
    k = b - a
    frames, chans = list(y.shape[:nb]), list(y.shape[nb + k:])
    order = list(range(nb, nb + k)) + list(range(nb)) + list(range(nb + k, y.dim()))
    img = y.permute(order).reshape(*y.shape[nb:nb + k], -1)
    sizes = tuple(p[0] for p in full[a:b])
    window = [(p[1], p[1] + p[2]) for p in full[a:b]]
    if k == 2:
        out = resize_fn(img, sizes, interp, antialias, min_filter, mag_filter, dtype, window=window,
                        row_channels=math.prod(chans))
    else:
        out = resize_volume(img, sizes, interp, antialias, min_filter, mag_filter, dtype, window=window)
    out = out.reshape(*sizes, *frames, *chans)
    back = [order.index(d) for d in range(y.dim())]
    out = out.permute(back)
    return out.reshape(lead_shape + [p[0] for p in plans]).contiguous()


def _pairs(x: torch.Tensor, lead_shape: list[int], plans: Plan, interp: str, min_filter: str | None,
           mag_filter: str | None, antialias: bool, dtype: torch.dtype,
           resize_fn: Callable[..., torch.Tensor]) -> torch.Tensor:
    """More than three axes to resample: every changed axis, two per call of `resize`."""
    nb = len(lead_shape)
    full = [(n, 0.0, float(n)) for n in lead_shape] + list(plans)
    todo = [d for d, (n, o, s) in enumerate(full) if not (n == x.shape[d] and o == 0 and s == x.shape[d])]
    y = x
    for start in range(0, len(todo), 2):
        last = start + 2 >= len(todo)
        y = _pass(y, todo[start:start + 2], full, interp, min_filter, mag_filter, antialias,
                  dtype if last else torch.float32, resize_fn)
    return y if todo else y.to(dtype)


def _pass(x: torch.Tensor, pair: list[int], plans: Plan, interp: str, min_filter: str | None,
          mag_filter: str | None, antialias: bool, dtype: torch.dtype,
          resize_fn: Callable[..., torch.Tensor]) -> torch.Tensor:
    """One call of `resize` on axes `pair` (one axis: with a dummy axis of extent 1)."""
    rest = [d for d in range(x.dim()) if d not in pair]
    order = pair + rest
    moved = x.permute(order)
    lead = [int(moved.shape[k]) for k in range(len(pair))]
    img = moved.reshape(*lead, -1)
    if len(pair) == 1:
        img = img.unsqueeze(1)
    sizes, roi, flips = [], [], []
    for d in pair:
        n, o, s = plans[d]
        flips.append(s < 0)
        if s < 0:
            o, s = o + s, -s
        sizes.append(n)
        roi.append((o, s))
    if len(pair) == 1:
        sizes.append(1)
        roi.append((0.0, 1.0))
        flips.append(False)
    if img.dtype not in (torch.uint8, torch.int16, torch.uint16, torch.float32, torch.float64):
        img = img.to(torch.float32)
    y = resize_fn(img, (sizes[0], sizes[1]), interp, antialias, min_filter, mag_filter, dtype,
                  roi=(roi[0][0], roi[1][0], roi[0][1], roi[1][1]))
    dims = [k for k in range(2) if flips[k]]
    if dims:
        y = y.flip(dims)
    if len(pair) == 1:
        y = y.squeeze(1)
    y = y.reshape(*[plans[d][0] for d in pair], *[int(x.shape[d]) for d in rest])
    back = [order.index(d) for d in range(x.dim())]
    return y.permute(back).contiguous()
