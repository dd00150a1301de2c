"""Pure-torch volume resizing (DHWC samples, any device) with the filters and rules of
`resize.resize`: its height and width passes on every depth slice, then one along depth, the
integer results rounded where DALI 2.4's last 3-D pass stores them."""
from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np
import torch

from .resize import FILTERS, STORE_LANES, Axis, source_axes, exact_copy, gather_sum, pass_reach, to_output, vector_cols, \
    pass_weights, resize

Size3 = tuple[int, int, int]


def volume_axes(layout: str) -> tuple[list[int], list[int], list[int]]:
    """A volume layout's (D, H, W positions, the other positions (frames first, channels last), and
    the order putting DHW first): how `resize_volume` sees a DHWC, CDHW, FDHWC... sample."""
    spatial = [layout.index(a) for a in "DHW"]
    rest = [i for i, a in enumerate(layout) if a not in "DHWC"] + ([layout.index("C")] if "C" in layout else [])
    return spatial, rest, spatial + rest


def resize_volume(volume: torch.Tensor, size: Size3, interp: str = "linear", antialias: bool = True,
                  min_filter: str | None = None, mag_filter: str | None = None,
                  dtype: torch.dtype | None = None,
                  window: Sequence[tuple[float, float]] | None = None) -> torch.Tensor:
    """Resizes one (D, H, W, K) volume to `size` = (depth, height, width), with the filters and
    rules of `resize` (separable: the height and width passes of `resize` on each depth slice,
    then one pass along depth). `window` = ((z0, z1), (y0, y1), (x0, x1)) is the source region per
    axis (float coordinates; z0 > z1 reads depth backwards). Integer outputs saturate and round
    where DALI's last pass stores them (`_volume_output`)."""
    out_dtype = dtype or volume.dtype
    d, h, w = (int(v) for v in volume.shape[:3])
    od, oh, ow = (int(v) for v in size)
    if min(od, oh, ow) <= 0:
        raise ValueError(f"resize: output size must be positive, got {(od, oh, ow)}")
    if min(d, h, w) <= 0:
        raise ValueError(f"resize: the input is empty, shape {tuple(volume.shape)}")
    F = np.float32
    z0, z1 = (0.0, float(d)) if window is None else window[0]
    zs, zspan = float(F(z0)), float(F(F(z1) - F(z0)))
    if zspan == 0 or not math.isfinite(zs + zspan):
        raise ValueError(f"resize: the source window must have a finite, non-zero size, got {(z0, z1)}")
    kind = (min_filter if od < abs(zspan) else mag_filter) or interp
    if kind not in FILTERS:
        raise ValueError(f"resize: unknown filter {kind!r}; expected one of {FILTERS}")
    hw_window = None if window is None else window[1:]
    k = int(volume.shape[3])
    # height and width: every depth slice at once, the slices merged into the channel axis
    slices = volume.permute(1, 2, 0, 3).reshape(h, w, d * k)
    hw_names = [(min_filter if n < abs(sp) else mag_filter) or interp
                for n, sp in ((oh, h if hw_window is None else hw_window[0][1] - hw_window[0][0]),
                              (ow, w if hw_window is None else hw_window[1][1] - hw_window[1][0]))]
    all_nn = kind == "nn" and all(n == "nn" for n in hw_names)
    mid = resize(slices, (oh, ow), interp, antialias, min_filter, mag_filter,
                 None if all_nn else torch.float32, window=hw_window)
    m = mid.reshape(oh, ow, d, k).permute(2, 0, 1, 3).reshape(d, oh * ow * k)
    if not exact_copy(kind, d, od, zs, zspan):
        # DALI steps depth positions by adding the scale, as it steps rows (a tie can drop a slice)
        idx, wts = pass_weights(kind, d, od, antialias, zs, zspan, all_nn, 0)
        if all_nn:
            m = m.index_select(0, torch.from_numpy(idx[:, 0]).to(m.device))
        else:
            m = gather_sum(m, 0, idx.T, wts.T)
    ay, ax = source_axes(h, w, None, hw_window)
    axes = ((kind, d, od, Axis(zs, zspan, float(F(z1)))), (hw_names[0], h, oh, ay), (hw_names[1], w, ow, ax))
    return _volume_output(m.reshape(od, oh, ow, k), out_dtype, antialias, axes).contiguous()


def _volume_output(y: torch.Tensor, dtype: torch.dtype, antialias: bool, axes: Sequence[tuple]) -> torch.Tensor:
    """A (D, H, W, K) float result in `dtype`, rounded as by DALI's last pass (`to_output`):
    its 3-D resize orders the passes for the least cost (per pass, the values it writes times
    3 + taps * 1.2 along depth, 1 down the columns, 1.4 along the rows, from the filters' reach; the
    first such order, x before y before z, on ties), and its last pass stores rows of W * K
    values (height), D slices of H * W * K (depth) or columns (width). `axes`: (filter, n_in,
    n_out, Axis) of depth, height, width."""
    F = np.float32
    reach = [pass_reach(kd, n, m, antialias, a) for kd, n, m, a in axes]
    best: tuple[np.float32, tuple[int, ...]] | None = None
    for order in itertools.permutations((2, 1, 0)):  # x (index 2 here) first, as DALI searches
        size, cost = [r[1] for r in reach], F(0)
        for a in order:
            size[a] = axes[a][2]
            vol = math.prod(size)
            cost = F(cost + F(F(F((1.2, 1.0, 1.4)[a]) * F(reach[a][2] * vol)) + F(vol) * F(3)))
        if best is None or cost < best[0]:
            best = (cost, order)
    last = best[1][-1] if best else 0
    (od, oh, ow, k), half_even = y.shape, axes[last][0] != "nn"
    if last == 0:
        return to_output(y.reshape(od, oh * ow, k), dtype, half_even, k).reshape(od, oh, ow, k)
    cols, lanes = None, STORE_LANES.get(dtype, 0)
    if last == 2 and lanes and half_even:
        kind, _, n_out, a = axes[2]
        cols = vector_cols(kind, n_out, antialias, a, reach[2][0], reach[2][1], lanes)
    return to_output(y.reshape(od * oh, ow, k), dtype, half_even, k, cols).reshape(od, oh, ow, k)
