"""DALI's resize output sizes and crop windows for a whole batch at once (NumPy, no Python object
per sample): the batched GPU paths take these. Each function gives exactly what its per-sample
spec gives (`resize.output_size`, `crop.crop_window`) for every sample; tests hold them to it.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

Scalars = float | Sequence[float] | np.ndarray


def _f32(v: Any, n: int) -> np.ndarray:
    """|v| rounded to float32 (as DALI stores float arguments), as float64, broadcast to n."""
    a = np.abs(np.asarray(v, dtype=np.float64).astype(np.float32).astype(np.float64))
    return np.broadcast_to(a, (n,)) if a.ndim == 0 else a.reshape(n)


def round_half_away(v: np.ndarray) -> np.ndarray:
    """C's round() elementwise, as int64."""
    return (np.floor(np.abs(v) + 0.5) * np.where(v >= 0, 1.0, -1.0)).astype(np.int64)


def _caps(max_size: float | Sequence[float] | None) -> tuple[float, float] | None:
    if max_size is None:
        return None
    if isinstance(max_size, (int, float)):
        return (float(max_size), float(max_size))
    ms = [float(m) for m in max_size]
    return (ms[0], ms[0]) if len(ms) == 1 else (ms[0], ms[1])


def output_sizes(in_hw: np.ndarray, *, resize_x: Scalars = 0.0, resize_y: Scalars = 0.0,
                 resize_shorter: Scalars = 0.0, resize_longer: Scalars = 0.0,
                 size: Any = None, max_size: float | Sequence[float] | None = None,
                 mode: str = "default") -> np.ndarray:
    """`resize.output_size` for n images: in_hw (n, 2); each size argument one value or one per
    sample (`size`: (2,) / (1,) or (n, 2) / (n, 1)). Returns (n, 2) int64 (height, width)."""
    ins = np.asarray(in_hw, dtype=np.float64).reshape(-1, 2)
    n = len(ins)
    if size is not None:
        s = np.abs(np.asarray(size, dtype=np.float64).astype(np.float32).astype(np.float64))
        s = np.broadcast_to(s.reshape(1, -1) if s.ndim <= 1 else s, (n, s.shape[-1] if s.ndim else 1))
        req = np.stack([s[:, 0], s[:, -1]], 1)
        modes = np.full(n, mode, dtype=object)
    else:
        rs, rl = _f32(resize_shorter, n), _f32(resize_longer, n)
        plain = np.stack([_f32(resize_y, n), _f32(resize_x, n)], 1)
        req = np.where((rs > 0)[:, None], rs[:, None], np.where((rl > 0)[:, None], rl[:, None], plain))
        modes = np.where(rs > 0, "not_smaller", np.where(rl > 0, "not_larger", mode)).astype(object)
    given = req > 0
    caps = _caps(max_size)
    out = np.empty((n, 2), dtype=np.float64)
    # the pick's (numerator, denominator): in * num / den rounds exactly as the per-sample rule
    ratio = np.where(given, req / ins, np.nan)
    for kind, better in (("not_smaller", np.greater), ("not_larger", np.less)):
        m = modes == kind
        if not m.any():
            continue
        # among given dimensions the first best wins (a tie keeps dimension 0, as max()/min() do)
        k1 = given[:, 1] & (~given[:, 0] | better(ratio[:, 1], ratio[:, 0]))
        num = np.where(k1, req[:, 1], req[:, 0])
        den = np.where(k1, ins[:, 1], ins[:, 0])
        if caps is not None:
            for k in range(2):
                if caps[k] > 0:
                    smaller = caps[k] / ins[:, k] < num / den
                    num = np.where(smaller, caps[k], num)
                    den = np.where(smaller, ins[:, k], den)
        out[m] = (ins * num[:, None] / den[:, None])[m]
    rest = (modes != "not_smaller") & (modes != "not_larger")
    if rest.any():
        first = np.where(given[:, 0], 0, 1)
        rows = np.arange(n)
        o = req.copy()
        for k in range(2):
            fill = ins[:, k] if mode == "stretch" else ins[:, k] * req[rows, first] / ins[rows, first]
            o[:, k] = np.where(o[:, k] <= 0, fill, o[:, k])
        if caps is not None:
            for k in range(2):
                if caps[k] > 0:
                    o[:, k] = np.minimum(o[:, k], caps[k])
        out[rest] = o[rest]
    res = np.maximum(1, round_half_away(out))
    none = ~given.any(1)  # nothing requested: the input size, unrounded
    res[none] = ins[none].astype(np.int64)
    return res


def crop_windows(in_hw: np.ndarray, crop_h: Scalars, crop_w: Scalars, pos_y: Scalars = 0.5,
                 pos_x: Scalars = 0.5, rounding: str = "round") -> np.ndarray:
    """`crop.crop_window` for n images: (n, 4) int64 (y, x, h, w); a 0 size keeps the dimension.
    Positions must already be checked to lie in [0, 1]."""
    ins = np.asarray(in_hw, dtype=np.int64).reshape(-1, 2)
    n = len(ins)
    out = np.empty((n, 4), dtype=np.int64)
    for k, (c, p) in enumerate(((crop_h, pos_y), (crop_w, pos_x))):
        c = np.broadcast_to(np.trunc(np.asarray(c, dtype=np.float64)), (n,)).astype(np.int64)
        size = np.where(c != 0, c, ins[:, k])
        pos = np.broadcast_to(np.asarray(p, dtype=np.float64).astype(np.float32).astype(np.float64), (n,))
        a = pos * (ins[:, k] - size).astype(np.float64)
        out[:, k] = round_half_away(a) if rounding == "round" else np.trunc(a).astype(np.int64)
        out[:, 2 + k] = size
    return out
