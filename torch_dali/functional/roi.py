"""Regions of interest given as DALI's slice-style arguments (`roi_start` / `rel_roi_start`,
`roi_end` / `rel_roi_end` / `roi_shape` / `rel_roi_shape`, `roi_axes`, `out_of_bounds_policy`), and
cutting them out of an array with padding.

Rules checked against DALI 2.4's numpy reader: a relative value is scaled by the extent in float32
(a relative start with a relative shape ends at (start + shape) * extent, one product in double);
the start and the end are rounded separately, half away from zero; an empty list is "not given";
axes default to all; one value applies to every ROI axis; an end before the start is an error
under every policy; "error" refuses a region leaving the array, "trim_to_shape" clips
it to the array, "pad" fills the outside with `fill_value` (converted as DALI converts: rounded
half away from zero and saturated for integers).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import torch

from ..errors import DataError

POLICIES = ("error", "pad", "trim_to_shape")
_ROI_KEYS = ("roi_start", "rel_roi_start", "roi_end", "rel_roi_end", "roi_shape", "rel_roi_shape")


def _values(v: Any) -> list[float] | None:
    if v is None:
        return None
    if isinstance(v, torch.Tensor):
        v = v.flatten().tolist()
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    return vals or None  # an empty list counts as not given


def _f32(x: float) -> float:
    return float(torch.tensor(x, dtype=torch.float32))


def round_half_away(x: float) -> int:
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def given(args: dict[str, Any]) -> bool:
    """Whether any ROI argument is set (an empty list is not)."""
    return any(_values(args.get(k)) is not None for k in _ROI_KEYS)


def window(shape: Sequence[int], args: dict[str, Any], where: str) -> list[tuple[int, int]]:
    """(start, end) per dimension of the region the ROI arguments select (maybe beyond the array
    under the "pad" policy); the whole extent for dimensions not in `roi_axes`."""
    nd = len(shape)
    v = {k: _values(args.get(k)) for k in _ROI_KEYS}
    if v["roi_start"] is not None and v["rel_roi_start"] is not None:
        raise DataError(f"{where}: `roi_start` and `rel_roi_start` are mutually exclusive")
    ends = [k for k in ("roi_end", "rel_roi_end", "roi_shape", "rel_roi_shape") if v[k] is not None]
    if len(ends) > 1:
        raise DataError(f"{where}: `{ends[0]}` and `{ends[1]}` are mutually exclusive")
    axes = list(args.get("roi_axes") or range(nd))
    norm = []
    for a in axes:
        if not -nd <= a < nd:
            raise DataError(f"{where}: `roi_axes` names axis {a}, out of range [{-nd}, {nd - 1}] for "
                            f"a {nd}D array")
        norm.append(a % nd if nd else a)
    if len(set(norm)) != len(norm):
        raise DataError(f"{where}: `roi_axes` names an axis more than once ({axes})")
    for k, vals in v.items():
        if vals is not None and len(vals) == 1:
            v[k] = vals * len(norm)  # one value stands for every ROI axis (DALI 2.4 measured)
        elif vals is not None and len(vals) != len(norm):
            raise DataError(f"{where}: `{k}` has {len(vals)} values, expected one per ROI axis "
                            f"({len(norm)})")
    out = [(0, int(e)) for e in shape]
    policy = args.get("out_of_bounds_policy") or "error"
    for j, ax in enumerate(norm):
        ext = int(shape[ax])
        if v["roi_start"] is not None:
            a_f = float(v["roi_start"][j])
        elif v["rel_roi_start"] is not None:
            a_f = _f32(_f32(v["rel_roi_start"][j]) * ext)
        else:
            a_f = 0.0
        if v["roi_end"] is not None:
            e_f = float(v["roi_end"][j])
        elif v["rel_roi_end"] is not None:
            e_f = _f32(_f32(v["rel_roi_end"][j]) * ext)
        elif v["roi_shape"] is not None:
            if float(v["roi_shape"][j]) < 0:
                raise DataError(f"{where}: the ROI shape must be >= 0, got {v['roi_shape'][j]} on axis {ax}")
            e_f = a_f + float(v["roi_shape"][j])
        elif v["rel_roi_shape"] is not None:
            rs = _f32(v["rel_roi_shape"][j])
            if rs < 0:
                raise DataError(f"{where}: the ROI shape must be >= 0, got {rs:g} on axis {ax}")
            if v["rel_roi_start"] is not None:  # one product of the sum (DALI's rounding)
                e_f = (_f32(v["rel_roi_start"][j]) + rs) * ext
            else:
                e_f = a_f + _f32(rs * ext)
        else:
            e_f = float(ext)
        a, e = round_half_away(a_f), round_half_away(e_f)
        if e < a:
            raise DataError(f"{where}: the ROI ends before it starts on axis {ax} (start {a}, end {e})")
        if policy == "trim_to_shape":
            a, e = min(max(a, 0), ext), min(max(e, 0), ext)
        elif policy == "error" and (a < 0 or e > ext):
            raise DataError(f"{where}: the ROI [{a}, {e}) on axis {ax} leaves the array (extent {ext}); "
                            "out_of_bounds_policy='pad' or 'trim_to_shape' allows it")
        out[ax] = (a, e)
    return out


def fill_scalar(value: float, dtype: torch.dtype) -> Any:
    """`value` converted to `dtype` as DALI converts: integers rounded half away from zero and
    saturated at the type's range; bool is value != 0."""
    if dtype == torch.bool:
        return bool(value)
    if dtype.is_floating_point:
        return float(value)
    info = torch.iinfo(dtype)
    if math.isnan(value):
        return 0
    return int(min(max(round_half_away(value) if math.isfinite(value) else value, info.min), info.max))


def cut(array: torch.Tensor, win: list[tuple[int, int]], fill: float) -> torch.Tensor:
    """A contiguous copy of `array`'s region `win`, the part outside the array set to `fill`."""
    inside = all(0 <= a and e <= n for (a, e), n in zip(win, array.shape))
    if inside:
        return array[tuple(slice(a, e) for a, e in win)].contiguous()
    out = torch.full([e - a for a, e in win], fill_scalar(fill, array.dtype), dtype=array.dtype)
    src, dst = [], []
    for (a, e), n in zip(win, array.shape):
        lo, hi = max(a, 0), min(e, n)
        if hi <= lo:
            return out
        src.append(slice(lo, hi))
        dst.append(slice(lo - a, hi - a))
    out[tuple(dst)] = array[tuple(src)]
    return out
