"""tensor_resize: DALI 2.4's output-size rules for any axes of a tensor, and the resampling, done
two axes at a time by `functional.resize` (the resampled pair moved in front, every other axis
merged into its channel axis), so the filters are DALI's.

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
from typing import Sequence

import torch

from ..errors import ArgumentError
from .resize import resize

Plan = list[tuple[int, float, float]]  # per axis: (output size, region start, region extent; < 0 flips)


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
    per = lambda v, j: float(v[0] if len(v) == 1 else v[j])  # noqa: E731
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
            want[d] = per(scales, j) * shape[d]
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
    for d in range(ndim):
        n = rounded.get(d, _round_half_away(want[d])) if shape[d] else 0
        n = max(n, 1) if shape[d] else 0
        span = ext[d]
        if subpixel and want[d] > 0 and n:
            a = per(alignment, axes.index(d)) if d in axes else 0.5
            centre = lo[d] + a * span
            span = span * n / want[d]
            out.append((n, centre - a * span, span))
        else:
            out.append((n, lo[d], span))
    return out


def resample(x: torch.Tensor, plans: Plan, interp: str, min_filter: str | None, mag_filter: str | None,
             antialias: bool, dtype: torch.dtype) -> torch.Tensor:
    """`x` resampled along every axis whose plan is not the identity, two axes per call of
    `functional.resize`; float in between, `dtype` at the end."""
    todo = [d for d, (n, o, s) in enumerate(plans) if not (n == x.shape[d] and o == 0 and s == x.shape[d])]
    if (mag_filter or interp) == "gaussian":
        # DALI 2.4 (measured): with a Gaussian magnification filter an axis kept at scale 1, listed
        # or not, is still filtered (the Gaussian is no point sample)
        todo = list(range(x.dim()))
    if any(x.shape[d] == 0 or plans[d][0] == 0 for d in range(x.dim())):
        return torch.zeros([p[0] for p in plans], dtype=dtype, device=x.device)
    if not todo:
        return x.to(dtype)
    y = x
    for start in range(0, len(todo), 2):
        pair = todo[start:start + 2]
        last = start + 2 >= len(todo)
        y = _pass(y, pair, plans, interp, min_filter, mag_filter, antialias, dtype if last else torch.float32)
    return y


def _pass(x: torch.Tensor, pair: list[int], plans: Plan, interp: str, min_filter: str | None,
          mag_filter: str | None, antialias: bool, dtype: torch.dtype) -> torch.Tensor:
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
    y = resize(img, (sizes[0], sizes[1]), interp, antialias, min_filter, mag_filter, dtype,
               roi=(roi[0][0], roi[1][0], roi[0][1], roi[1][1]))
    dims = [k for k in range(2) if flips[k]]
    if dims:
        y = y.flip(dims)
    if len(pair) == 1:
        y = y.squeeze(1)
    y = y.reshape(*[plans[d][0] for d in pair], *[int(x.shape[d]) for d in rest])
    back = [order.index(d) for d in range(x.dim())]
    return y.permute(back).contiguous()
