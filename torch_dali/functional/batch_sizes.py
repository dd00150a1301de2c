"""DALI's resize output sizes and crop windows for a whole batch at once (NumPy, no Python object
per sample): the batched GPU paths take these. Each function gives exactly what its per-sample
spec gives (`resize.output_size`, `crop.crop_window`) for every sample; tests hold them to it.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import resize_plan

Scalars = float | Sequence[float] | np.ndarray


def _f32(v: Any, n: int) -> np.ndarray:
    """|v| rounded to float32 (as DALI stores float arguments), as float64, broadcast to n."""
    a = np.abs(np.asarray(v, dtype=np.float64).astype(np.float32).astype(np.float64))
    return np.broadcast_to(a, (n,)) if a.ndim == 0 else a.reshape(n)


def round_half_away(v: np.ndarray) -> np.ndarray:
    """C's round() elementwise, as int64."""
    return (np.floor(np.abs(v) + 0.5) * np.where(v >= 0, 1.0, -1.0)).astype(np.int64)


def output_sizes(in_hw: np.ndarray, *, resize_x: Scalars = 0.0, resize_y: Scalars = 0.0,
                 resize_shorter: Scalars = 0.0, resize_longer: Scalars = 0.0,
                 size: Any = None, max_size: float | Sequence[float] | None = None,
                 mode: str = "default") -> np.ndarray:
    """`resize.output_size` for n images: in_hw (n, 2); each size argument one value or one per
    sample (`size`: (2,) / (1,) or (n, 2) / (n, 1)). Returns (n, 2) int64 (height, width). As in
    `output_size`, each sample is sized by the first of `size`, `resize_shorter`, `resize_longer`,
    `resize_x`/`resize_y` it gives (`resize_plan` computes each group in one pass)."""
    ins = np.asarray(in_hw, dtype=np.float64).reshape(-1, 2)
    n = len(ins)
    if size is not None:
        req, m = resize_plan.requested(n, 2, size=np.abs(np.asarray(size, dtype=np.float64)), mode=mode)
        return resize_plan.plan(ins, req, m, max_size)[0]
    rs, rl = _f32(resize_shorter, n), _f32(resize_longer, n)
    rx = np.broadcast_to(np.abs(np.asarray(resize_x, dtype=np.float64)).reshape(-1), (n,))
    ry = np.broadcast_to(np.abs(np.asarray(resize_y, dtype=np.float64)).reshape(-1), (n,))
    out = np.empty((n, 2), dtype=np.int64)
    groups = ((rs > 0, dict(resize_shorter=rs)), (~(rs > 0) & (rl > 0), dict(resize_longer=rl)),
              (~(rs > 0) & ~(rl > 0), dict(resize_x=rx, resize_y=ry)))
    for sel, sizing in groups:
        if sel.any():
            req, m = resize_plan.requested(int(sel.sum()), 2, mode=mode, **{k: v[sel] for k, v in sizing.items()})
            out[sel] = resize_plan.plan(ins[sel], req, m, max_size)[0]
    return out


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
