"""bb_flip and bbox_paste of a CPU batch in C (`_native/csrc/cpu/box_moves.c`), or NumPy without it:
stand-ins for `functional.detection`'s `bb_flip_batch` and `bbox_paste_batch` (registered with the
dispatch). The specs spread per-sample
flags and parameters over the boxes with torch.repeat_interleave, whose parallel region cost
0.3-11 ms a call on the shared 2-core machine (DALI's whole batch: ~0.11 ms); here the same float32
operations in the same order run in one C call for the batch, or a few NumPy calls on one
concatenated array, so the bits are the spec's (tests/test_box_moves_fast.py holds both to it)."""
from __future__ import annotations

import numpy as np
import torch

from ..._native import helpers
from ...functional import detection as K
from .._dispatch import register_fast_function

#: each coordinate's mirror source: lo from 1 - hi, hi from 1 - lo
_MIRROR = [2, 3, 0, 1]


def _flat(samples: list[torch.Tensor]) -> tuple[np.ndarray, list[int]] | None:
    """The samples' boxes as one (boxes, 4) float32 array and the boxes per sample; None off the CPU
    or for other types (the spec's casts set NaN payloads as a joint cast would not)."""
    if not samples or not all(t.is_cpu and t.dtype == torch.float32 for t in samples):
        return None
    counts = [t.numel() // 4 for t in samples]
    if all(t.dim() == 2 and t.shape[1] == 4 for t in samples):  # (boxes, 4) already: each reshape costs ~1 us
        flat = torch.cat(samples) if len(samples) > 1 else samples[0]
    else:
        flat = torch.cat([t.reshape(-1, 4) for t in samples])
    return flat.detach().numpy(), counts


def _native(samples: list[torch.Tensor], flags: list[int] | None, ltrb: bool,
            rows: list[float] | None) -> list[torch.Tensor] | torch.Tensor | None:
    """The C helper's result (one call for the batch, ~3 us of work where NumPy's dozen calls
    cost ~30 us) for CPU float32 samples in place, else None."""
    f32 = torch.float32
    ptrs, counts = [], []
    for t in samples:
        if not (t.is_cpu and t.dtype == f32 and t.is_contiguous()):
            return None
        ptrs.append(t.data_ptr())
        counts.append(t.numel() // 4)
    out = helpers.box_moves(ptrs, counts, flags, ltrb, rows) if samples else None
    return None if out is None else _split(out, counts, samples)


def _split(out: np.ndarray | torch.Tensor, counts: list[int],
           samples: list[torch.Tensor]) -> list[torch.Tensor] | torch.Tensor:
    """Each sample's part of `out` in its shape: samples of one shape as one dense (batch, ...)
    tensor (a TensorList's dense form; splitting costs ~10 us a batch)."""
    t = torch.from_numpy(out) if isinstance(out, np.ndarray) else out
    shape = samples[0].shape
    if all(s.shape == shape for s in samples):
        return t.view(len(samples), *shape)
    parts = t.split_with_sizes(counts)
    return [p if p.shape == s.shape else p.reshape(s.shape) for p, s in zip(parts, samples)]


def bb_flip_batch(samples: list[torch.Tensor], ltrb: bool, horizontal: list,
                  vertical: list) -> list[torch.Tensor] | torch.Tensor | None:
    flags = [bool(x) for hv in zip(horizontal, vertical) for x in hv]
    done = _native(samples, flags, ltrb, None)
    if done is not None:
        return done
    got = _flat(samples)
    if got is None:
        return None
    flat, counts = got
    # per box: flip x, flip y, x, y (each mirrored corner is 1 - the other corner, as in the spec)
    pairs = [(h, v, h, v) for h, v in zip(map(bool, horizontal), map(bool, vertical))]
    # one pair for the whole batch (constant arguments) broadcasts; else one per box
    uniform = len(set(pairs)) == 1
    mask = np.array(pairs[:1] if uniform else np.repeat(np.array(pairs, bool).reshape(-1, 4), counts, 0), bool)
    corners = flat if ltrb else np.concatenate([flat[:, :2], flat[:, :2] + flat[:, 2:]], 1)
    out = np.where(mask, np.float32(1) - corners[:, _MIRROR], corners)
    if not ltrb:
        out[:, 2:] -= out[:, :2]
    return _split(out, counts, samples)


def bbox_paste_batch(samples: list[torch.Tensor], ltrb: bool, ratios: list[float], paste_x: list[float],
                     paste_y: list[float]) -> list[torch.Tensor] | torch.Tensor | None:
    rows = K.paste_rows(ltrb, ratios, paste_x, paste_y)
    done = _native(samples, None, ltrb, [v for r in rows for v in r])
    if done is not None:
        return done
    got = _flat(samples)
    if got is None:
        return None
    flat, counts = got
    per = np.repeat(np.array(rows, np.float32).reshape(-1, 5), counts, axis=0)
    return _split(flat * per[:, :1] + per[:, 1:], counts, samples)


register_fast_function(K.bb_flip_batch, bb_flip_batch)
register_fast_function(K.bbox_paste_batch, bbox_paste_batch)
