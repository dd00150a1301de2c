"""Bounding-box kernels: bb_flip, bbox_paste, box_encoder (pure torch, CPU or CUDA tensors).

Arithmetic is float32 in DALI 2.4's order of operations, so results match its CPU backend bit for
bit: an `xywh` box is read as (lo, hi = lo + wh), transformed, and written back as (lo, hi - lo).
"""
from __future__ import annotations

import torch

#: DALI's bounding-box layout letters: start anchors, end anchors, extents (per dimension x, y, z)
_START, _END, _EXTENT = "xyz", "XYZ", "WHD"


def layout_error(layout: str, ndim: int) -> str | None:
    """Why `layout` is not a box layout for `ndim` dimensions (None when it is)."""
    if len(layout) != 2 * ndim or len(set(layout)) != len(layout):
        return f"a permutation of {ndim} start and {ndim} end/extent letters, e.g. 'xyXY'"
    for d in range(ndim):
        if _START[d] not in layout or (_END[d] in layout) == (_EXTENT[d] in layout):
            return f"start '{_START[d]}' and one of '{_END[d]}'/'{_EXTENT[d]}' for dimension {d}"
    if any(c not in _START[:ndim] + _END[:ndim] + _EXTENT[:ndim] for c in layout):
        return f"letters from {_START[:ndim] + _END[:ndim] + _EXTENT[:ndim]!r}"
    return None


def read_boxes(boxes: torch.Tensor, layout: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(lo, hi), each (N, ndim), from boxes (N, 2*ndim) in `layout` (e.g. 'xyXY', 'xyWH')."""
    ndim = len(layout) // 2
    cols = {c: boxes[:, k] for k, c in enumerate(layout)}
    lo = torch.stack([cols[_START[d]] for d in range(ndim)], 1)
    hi = torch.stack([cols[_END[d]] if _END[d] in cols else cols[_START[d]] + cols[_EXTENT[d]]
                      for d in range(ndim)], 1)
    return lo, hi


def write_boxes(lo: torch.Tensor, hi: torch.Tensor, layout: str) -> torch.Tensor:
    """Boxes (N, 2*ndim) in `layout` from (lo, hi)."""
    cols = []
    for c in layout:
        if c in _START:
            cols.append(lo[:, _START.index(c)])
        elif c in _END:
            cols.append(hi[:, _END.index(c)])
        else:
            d = _EXTENT.index(c)
            cols.append(hi[:, d] - lo[:, d])
    return torch.stack(cols, 1) if cols else lo.new_zeros((lo.shape[0], 0))


def bb_flip(boxes: torch.Tensor, ltrb: bool, horizontal: torch.Tensor | bool,
            vertical: torch.Tensor | bool) -> torch.Tensor:
    """Mirrors (N, 4) boxes in [0, 1] coordinates; `horizontal`/`vertical` may be per-box bool
    tensors (N,) (a batch flattened into one call) or one flag for all."""
    layout = "xyXY" if ltrb else "xyWH"
    lo, hi = read_boxes(boxes, layout)
    h = torch.as_tensor(horizontal, dtype=torch.bool, device=boxes.device)
    v = torch.as_tensor(vertical, dtype=torch.bool, device=boxes.device)
    flip = torch.stack(torch.broadcast_tensors(h, v), -1).expand(lo.shape)  # (N, 2): x, y
    one = torch.ones((), dtype=boxes.dtype, device=boxes.device)
    new_lo = torch.where(flip, one - hi, lo)
    new_hi = torch.where(flip, one - lo, hi)
    return write_boxes(new_lo, new_hi, layout)


def bb_flip_batch(samples: list[torch.Tensor], ltrb: bool, horizontal: list, vertical: list) -> list[torch.Tensor]:
    """`bb_flip` of each sample (any shape holding 4 values per box) with its own flags, in one
    call over the concatenated boxes; float32 results in the samples' shapes."""
    counts = [t.numel() // 4 for t in samples]
    dev = samples[0].device
    flat = torch.cat([t.reshape(-1, 4).to(torch.float32) for t in samples])
    reps = torch.tensor(counts, device=dev)
    hf = torch.repeat_interleave(torch.tensor([bool(x) for x in horizontal], device=dev), reps)
    vf = torch.repeat_interleave(torch.tensor([bool(x) for x in vertical], device=dev), reps)
    out = bb_flip(flat, ltrb, hf, vf)
    return [p.reshape(t.shape) for p, t in zip(torch.split(out, counts), samples)]


def paste_offsets(ratio: float, paste_x: float, paste_y: float) -> tuple[float, float, float]:
    """(scale, x offset, y offset) of bbox_paste in float32, as DALI: the offset is pulled back
    ulp by ulp until scale + offset <= 1, so boxes in [0, 1] stay there."""
    import numpy as np  # host-side scalars; float32 rounding as DALI's
    f = np.float32
    r = f(ratio)
    scale = f(1) / r
    mul = (r - f(1)) / r
    offs = []
    for p in (paste_x, paste_y):
        o = f(p) * mul
        if scale + o > f(1):
            o = f(1) - scale
            while scale + o > f(1):
                o = np.nextafter(o, f(-1))
        offs.append(o)
    return float(scale), float(offs[0]), float(offs[1])


def bbox_paste(boxes: torch.Tensor, ltrb: bool, ratio: float, paste_x: float, paste_y: float) -> torch.Tensor:
    """Boxes (..., 4 per box) after their image is pasted onto a canvas `ratio` times larger."""
    scale, ox, oy = paste_offsets(ratio, paste_x, paste_y)
    b = boxes.reshape(-1, 4).to(torch.float32)
    s = torch.tensor(scale, dtype=torch.float32, device=b.device)
    off = torch.tensor([ox, oy, ox, oy] if ltrb else [ox, oy, 0.0, 0.0], dtype=torch.float32, device=b.device)
    return (b * s + off).reshape(boxes.shape)


def paste_rows(ltrb: bool, ratios: list[float], paste_x: list[float], paste_y: list[float]) -> list[list[float]]:
    """Each sample's [scale, offsets of its 4 coordinates] (float32 values) for bbox_paste."""
    cache: dict[tuple[float, float, float], tuple[float, float, float]] = {}
    rows = []
    for key in zip(ratios, paste_x, paste_y):
        if key not in cache:
            cache[key] = paste_offsets(*key)
        scale, ox, oy = cache[key]
        rows.append([scale, ox, oy, ox, oy] if ltrb else [scale, ox, oy, 0.0, 0.0])
    return rows


def bbox_paste_batch(samples: list[torch.Tensor], ltrb: bool, ratios: list[float], paste_x: list[float],
                     paste_y: list[float]) -> list[torch.Tensor]:
    """`bbox_paste` of each sample in one pass over the concatenated boxes: per-row scale and
    offset, the same float32 multiply then add, so each value equals the per-sample result."""
    if not samples:
        return []
    rows = paste_rows(ltrb, ratios, paste_x, paste_y)
    counts = [t.numel() // 4 for t in samples]
    dev = samples[0].device
    reps = torch.tensor(counts, device=dev)
    per = torch.repeat_interleave(torch.tensor(rows, dtype=torch.float32, device=dev), reps, dim=0)
    flat = torch.cat([t.reshape(-1, 4).to(torch.float32) for t in samples])
    out = flat * per[:, :1] + per[:, 1:]
    return [p.reshape(t.shape) for p, t in zip(torch.split(out, counts), samples)]


# -- box_encoder --------------------------------------------------------------------------------------

def iou(a_lo: torch.Tensor, a_hi: torch.Tensor, b_lo: torch.Tensor, b_hi: torch.Tensor) -> torch.Tensor:
    """Intersection over union of every a (..., N, 2) box with every b (M, 2) box: (..., N, M).
    float32 in DALI's order: volumes as width * height, union = va + vb - intersection."""
    lo = torch.maximum(a_lo.unsqueeze(-2), b_lo)
    hi = torch.minimum(a_hi.unsqueeze(-2), b_hi)
    ext = hi - lo
    inter = ext[..., 0] * ext[..., 1]
    empty = (ext <= 0).any(-1)
    va = (a_hi[..., 0] - a_lo[..., 0]) * (a_hi[..., 1] - a_lo[..., 1])
    vb = (b_hi[..., 0] - b_lo[..., 0]) * (b_hi[..., 1] - b_lo[..., 1])
    out = inter / (va.unsqueeze(-1) + vb - inter)
    return torch.where(empty, torch.zeros((), dtype=out.dtype, device=out.device), out)


def _last_argmax(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Index of the last maximum along `dim` (DALI's `>=` scans keep the last of equal values)."""
    n = x.shape[dim]
    return (n - 1) - torch.argmax(torch.flip(x, (dim,)), dim=dim)


def iou_planar(a_lo: torch.Tensor, a_hi: torch.Tensor, b_lo: torch.Tensor, b_hi: torch.Tensor) -> torch.Tensor:
    """`iou` with x and y as separate (..., N, M) planes: the same float32 operations in the same
    order, but contiguous and vectorisable (a trailing axis of 2 is not)."""
    ax0, ay0, ax1, ay1 = (t.unsqueeze(-1) for t in (a_lo[..., 0], a_lo[..., 1], a_hi[..., 0], a_hi[..., 1]))
    bx0, by0, bx1, by1 = b_lo[:, 0], b_lo[:, 1], b_hi[:, 0], b_hi[:, 1]
    ex = torch.minimum(ax1, bx1) - torch.maximum(ax0, bx0)
    ey = torch.minimum(ay1, by1) - torch.maximum(ay0, by0)
    inter = ex * ey
    empty = (ex <= 0) | (ey <= 0)
    va = (ax1 - ax0) * (ay1 - ay0)
    vb = (bx1 - bx0) * (by1 - by0)
    out = inter / (va + vb - inter)
    return out.masked_fill_(empty, 0.0)


def _last_argmax_eq(x: torch.Tensor, dim: int) -> torch.Tensor:
    """`_last_argmax` for NaN-free x: the largest index holding the maximum, without the flipped copy."""
    n = x.shape[dim]
    shape = [1] * x.dim()
    shape[dim] = n
    idx = torch.arange(n, device=x.device).view(shape)
    return torch.where(x == x.amax(dim, keepdim=True), idx, -1).amax(dim)


def match_anchors(boxes: torch.Tensor, counts: torch.Tensor, anchors: torch.Tensor,
                  plain: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Each anchor's ground-truth box in a padded batch (boxes (B, N, 4) ltrb, N >= 1, counts (B,)
    real boxes per sample, anchors (M, 4) ltrb): (B, M) int64 box indices and their (B, M) IoUs.
    Each real box first claims its best anchor (the last of equal IoUs) with IoU 2; padding rows
    count -1; an anchor takes the last box of the highest IoU. `plain`: the first formulation
    (`iou`, `_last_argmax`), the reference the faster one is tested against."""
    B, N = boxes.shape[0], boxes.shape[1]
    dev = boxes.device
    real = torch.arange(N, device=dev).unsqueeze(0) < counts.to(dev).unsqueeze(1)  # (B, N)
    ious = (iou if plain else iou_planar)(boxes[..., :2], boxes[..., 2:], anchors[:, :2], anchors[:, 2:])  # (B, N, M)
    argmax = _last_argmax if plain or bool(torch.isnan(ious).any()) else _last_argmax_eq
    # each real box claims its best anchor (last of equal IoUs): IoU 2 guarantees the match
    best_anchor = argmax(ious, 2)  # (B, N)
    two = torch.full((B, N, 1), 2.0, dtype=ious.dtype, device=dev)
    claimed = ious.scatter(2, best_anchor.unsqueeze(-1), two)
    ious = torch.where(real.unsqueeze(-1), claimed, ious)
    # padding rows never win an anchor: below any real IoU (real ones are >= 0)
    ious = torch.where(real.unsqueeze(-1), ious, torch.full((), -1.0, dtype=ious.dtype, device=dev))
    best_box = argmax(ious, 1)  # (B, M)
    return best_box, torch.gather(ious, 1, best_box.unsqueeze(1)).squeeze(1)


def box_encoder_batch(boxes: torch.Tensor, labels: torch.Tensor, counts: torch.Tensor, anchors: torch.Tensor,
                      criteria: float, offset: bool, scale: float, means: list[float],
                      stds: list[float], plain: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """SSD box encoding of a padded batch in one pass: boxes (B, N, 4) ltrb, labels (B, N), counts
    (B,) real boxes per sample, anchors (M, 4) ltrb. Returns (B, M, 4) encoded boxes (center and
    extent, or normalized offsets with `offset`) and (B, M) labels (0: background). `plain`: the
    first formulation of the matching (see `match_anchors`)."""
    B, N = boxes.shape[0], boxes.shape[1]
    M = anchors.shape[0]
    dev = boxes.device
    a_lo, a_hi = anchors[:, :2], anchors[:, 2:]
    a_ctr, a_ext = (a_lo + a_hi) * 0.5, a_hi - a_lo
    if offset:
        enc = torch.zeros((B, M, 4), dtype=torch.float32, device=dev)
    else:
        enc = torch.cat([a_ctr, a_ext], 1).unsqueeze(0).expand(B, M, 4).clone()
    out_labels = torch.zeros((B, M), dtype=labels.dtype, device=dev)
    if N == 0:
        return enc, out_labels
    best_box, best_iou = match_anchors(boxes, counts, anchors, plain)
    matched = best_iou > criteria  # (B, M)
    box = torch.gather(boxes, 1, best_box.unsqueeze(-1).expand(B, M, 4))
    b_ctr, b_ext = (box[..., :2] + box[..., 2:]) * 0.5, box[..., 2:] - box[..., :2]
    if offset:
        s = torch.tensor(scale, dtype=torch.float32, device=dev)
        m = torch.tensor(means, dtype=torch.float32, device=dev)
        sd = torch.tensor(stds, dtype=torch.float32, device=dev)
        bc, be, ac, ae = b_ctr * s, b_ext * s, a_ctr * s, a_ext * s
        ctr = ((bc - ac) / ae - m[:2]) / sd[:2]
        # log correctly rounded to float32 (as glibc's logf; torch's float32 log can be 1 ulp off)
        ext = (torch.log((be / ae).double()).float() - m[2:]) / sd[2:]
        value = torch.cat([ctr, ext], -1)
    else:
        value = torch.cat([b_ctr, b_ext], -1)
    enc = torch.where(matched.unsqueeze(-1), value, enc)
    lab = torch.gather(labels, 1, best_box)
    out_labels = torch.where(matched, lab, out_labels)
    return enc, out_labels


def pad_boxes(samples: list[torch.Tensor], labels: list[torch.Tensor],
              device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A batch of (Ni, 4) boxes and (Ni,) labels as padded (B, N, 4), (B, N) and counts (B,)."""
    B = len(samples)
    n = max((int(s.shape[0]) for s in samples), default=0)
    ldtype = labels[0].dtype if labels else torch.int32
    if B and len(labels) == B and all(s.shape == (n, 4) and s.dtype == torch.float32 for s in samples) and all(
            t.shape == (n,) and t.dtype == ldtype for t in labels):  # nothing to pad: two stacks, not 2B copies
        return (torch.stack(samples).to(device), torch.stack(labels).to(device),
                torch.full((B,), n, dtype=torch.int64))
    boxes = torch.zeros((B, n, 4), dtype=torch.float32, device=device)
    labs = torch.zeros((B, n), dtype=ldtype, device=device)
    counts = torch.tensor([int(s.shape[0]) for s in samples], dtype=torch.int64)
    for i, (b, lab) in enumerate(zip(samples, labels)):
        k = int(b.shape[0])
        if k:
            boxes[i, :k] = b.reshape(k, 4)
            labs[i, :k] = lab.reshape(k)
    return boxes, labs, counts
