"""The window search of random_bbox_crop and ssd_random_crop, as DALI 2.4 describes and does it.

Host-side NumPy on a sample's few boxes; every draw comes from the caller's keyed per-sample RNG
(`rng.uniform(lo, hi)`, `rng.randint(lo, hi)`), so DALI's mt19937 streams are not reproduced: the
same arguments give the same distribution of windows, not the same windows.

random_bbox_crop, per sample: pick one of `thresholds` (or "no crop" with `allow_no_crop`); make up
to `num_attempts` candidate windows (extents uniform in `scaling` per dimension; where an aspect
ratio range is one value the extents are fixed to it, in a random order, and rescaled so the longest
keeps its length, in `input_shape` units when given, as DALI does even when that makes a window
larger than the image; anchors uniform in [0, 1 - extent]; or a fixed `crop_shape` at a uniform
integer anchor); a window is valid when the boxes' IoU (or overlap: intersection / box volume) with
it reaches the threshold for all boxes (`all_boxes_above_threshold`) or for one, and some box is
kept by the pruning rule (centroid inside, or `bbox_prune_threshold` of its volume inside); then
another threshold is picked. With `total_num_attempts` the search stops there and takes the window
with the best metric (min, or max, of the boxes' metrics), as DALI (warning unless `quiet`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..rng import SampleRNG

#: a search that cannot succeed (no_crop disabled, unreachable thresholds, no total_num_attempts)
#: loops forever in DALI; here it stops with an error after this many candidate windows
MAX_ATTEMPTS = 100_000


class Rng(Protocol):
    def uniform(self, lo: float = 0.0, hi: float = 1.0) -> float: ...

    def randint(self, lo: int, hi: int) -> int: ...


@dataclass(frozen=True)
class CropParams:
    """random_bbox_crop's constant arguments, checked and in internal (x, y, z) order."""

    ndim: int
    thresholds: tuple[float, ...]
    overlap: bool  # threshold_type "overlap" (else "iou")
    aspect: tuple[tuple[float, float], ...]  # one range, or one per dimension pair (xy, xz, yz)
    scaling: tuple[float, float]
    allow_no_crop: bool
    num_attempts: int
    total_num_attempts: int  # <= 0: unlimited
    all_boxes: bool
    prune: float | None


@dataclass
class CropResult:
    anchor: np.ndarray  # (ndim,) float32: relative, or absolute with crop_shape
    shape: np.ndarray
    keep: np.ndarray  # indices of the boxes kept
    rel_lo: np.ndarray  # the window in relative coordinates (remaps the kept boxes)
    rel_hi: np.ndarray
    exhausted: bool = False  # the best candidate after total_num_attempts
    best_metric: float = 0.0


def _volumes(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.prod(hi - lo, axis=-1)


def _intersections(lo: np.ndarray, hi: np.ndarray, c_lo: np.ndarray, c_hi: np.ndarray) -> np.ndarray:
    ext = np.minimum(hi, c_hi) - np.maximum(lo, c_lo)
    return np.where((ext > 0).all(-1), np.prod(np.maximum(ext, 0), axis=-1), 0.0)


def metrics(lo: np.ndarray, hi: np.ndarray, c_lo: np.ndarray, c_hi: np.ndarray, overlap: bool) -> np.ndarray:
    """Each box's IoU with the window, or the fraction of its volume inside it (`overlap`)."""
    inter = _intersections(lo, hi, c_lo, c_hi)
    vb = _volumes(lo, hi)
    if overlap:
        return np.divide(inter, vb, out=np.zeros_like(inter), where=vb > 0)
    union = vb + _volumes(c_lo, c_hi) - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def kept(lo: np.ndarray, hi: np.ndarray, c_lo: np.ndarray, c_hi: np.ndarray, prune: float | None) -> np.ndarray:
    """Indices of the boxes a window keeps: centroid inside (bounds included), or with `prune`
    a non-empty intersection of at least that fraction of the box's volume."""
    if prune is None:
        c = (lo + hi) * 0.5
        return np.nonzero(((c >= c_lo) & (c <= c_hi)).all(-1))[0]
    inter = _intersections(lo, hi, c_lo, c_hi)
    vb = _volumes(lo, hi)
    frac = np.divide(inter, vb, out=np.zeros_like(inter), where=vb > 0)
    return np.nonzero((inter > 0) & (frac >= prune))[0]


def remap(lo: np.ndarray, hi: np.ndarray, c_lo: np.ndarray, c_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boxes clipped to the window, in its coordinates (0..1)."""
    ext = c_hi - c_lo
    n_lo = np.clip((np.maximum(lo, c_lo) - c_lo) / ext, 0.0, 1.0)
    n_hi = np.clip((np.minimum(hi, c_hi) - c_lo) / ext, 0.0, 1.0)
    return n_lo, n_hi


def _fix_aspect(rng: Rng, shape: np.ndarray, unit: np.ndarray, p: CropParams) -> np.ndarray:
    """Extents whose fixed aspect ratios (min == max) hold, set in a random dimension order and
    rescaled so the longest extent (in `unit`s) keeps its length."""
    n = p.ndim
    fixed = np.zeros((n, n))
    k = 0
    for d0 in range(n):
        for d1 in range(d0 + 1, n):
            lo, hi = p.aspect[k]
            if lo == hi:
                fixed[d0, d1], fixed[d1, d0] = lo, 1.0 / lo
            k = (k + 1) % len(p.aspect)
    if not fixed.any():
        return shape
    order = list(range(n))
    for i in range(n - 1, 0, -1):  # Fisher-Yates from the sample's RNG
        j = rng.randint(0, i)
        order[i], order[j] = order[j], order[i]
    ab = shape * unit
    longest = ab.max()
    for i0 in range(n):
        for i1 in range(i0 + 1, n):
            d0, d1 = order[i0], order[i1]
            if ab[d0] != ab[d1] and fixed[d0, d1] > 0:
                ab[d0] = ab[d1] * fixed[d0, d1]
    ab = ab * (longest / ab.max())
    return ab / unit


def _aspect_ok(shape: np.ndarray, unit: np.ndarray, p: CropParams) -> bool:
    ab = shape * unit
    k = 0
    for i in range(p.ndim):
        for j in range(i + 1, p.ndim):
            lo, hi = p.aspect[k]
            r = ab[i] / ab[j] if ab[j] > 0 else math.inf
            tol = 1e-5 * lo if lo == hi else 0.0  # a fixed ratio holds up to rounding
            if not lo - tol <= r <= hi + tol:
                return False
            k = (k + 1) % len(p.aspect)
    return True


def _candidate(rng: Rng, p: CropParams, crop_shape: np.ndarray | None,
               input_shape: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """(rel lo, rel hi, output anchor, output shape) of one random window, or None (bad aspect)."""
    if crop_shape is not None:
        if input_shape is None:
            raise ValueError("random_bbox_crop: `crop_shape` needs `input_shape`")
        # a window larger than the image gets an anchor in [input - crop, 0], as in DALI
        room = [int(input_shape[d] - crop_shape[d]) for d in range(p.ndim)]
        anchor = np.array([float(rng.randint(min(0, r), max(0, r))) for r in room])
        rel_lo = anchor / input_shape
        return rel_lo, rel_lo + crop_shape / input_shape, anchor, crop_shape.astype(np.float64)
    unit = input_shape if input_shape is not None else np.ones(p.ndim)
    shape = np.array([rng.uniform(*p.scaling) for _ in range(p.ndim)])
    shape = _fix_aspect(rng, shape, unit, p)
    if not _aspect_ok(shape, unit, p):
        return None
    anchor = np.array([rng.uniform(0.0, 1.0 - shape[d]) for d in range(p.ndim)])
    return anchor, anchor + shape, anchor, shape


def _full(p: CropParams, n: int) -> CropResult:
    z, o = np.zeros(p.ndim), np.ones(p.ndim)
    return CropResult(z.astype(np.float32), o.astype(np.float32), np.arange(n), z, o)


def find_crop(rng: Rng, lo: np.ndarray, hi: np.ndarray, p: CropParams, crop_shape: np.ndarray | None = None,
              input_shape: np.ndarray | None = None) -> CropResult:
    """One sample's window for boxes (lo, hi) (N, ndim) in relative coordinates (see module doc)."""
    n = lo.shape[0]
    options: list[float | None] = list(p.thresholds)
    if p.allow_no_crop and crop_shape is None:
        options.append(None)
    count = 0
    best: CropResult | None = None
    best_metric = -1.0
    while True:
        threshold = options[rng.randint(0, len(options) - 1)]
        if threshold is None:
            return _full(p, n)
        for _ in range(p.num_attempts):
            if 0 < p.total_num_attempts <= count:
                if best is None:  # every candidate failed the aspect ratio: the whole image
                    best = _full(p, n)
                best.exhausted = True
                best.best_metric = max(best_metric, 0.0)
                return best
            count += 1
            if count > MAX_ATTEMPTS:
                raise RuntimeError(f"no window meeting the thresholds was found in {MAX_ATTEMPTS} attempts; "
                                   "set `total_num_attempts` to take the best window instead")
            cand = _candidate(rng, p, crop_shape, input_shape)
            if cand is None:
                continue
            c_lo, c_hi, anchor, shape = cand
            keep = kept(lo, hi, c_lo, c_hi, p.prune)
            res = CropResult(anchor.astype(np.float32), (shape if crop_shape is not None
                             else (c_hi - c_lo)).astype(np.float32), keep, c_lo, c_hi)
            if n == 0:
                return res
            m = metrics(lo, hi, c_lo, c_hi, p.overlap)
            metric = float(m.min() if p.all_boxes else m.max())
            if metric >= threshold and len(keep):
                return res
            if metric > best_metric:
                best, best_metric = res, metric


@dataclass
class BatchCrops:
    """find_crop's results for a batch whose boxes are concatenated (sample s owns rows
    offsets[s]..offsets[s+1])."""

    anchor: np.ndarray  # (n, ndim) float32
    shape: np.ndarray  # (n, ndim) float32
    rel_lo: np.ndarray  # (n, ndim) float64: the windows, relative
    rel_hi: np.ndarray
    keep: np.ndarray  # (boxes,) bool
    exhausted: np.ndarray  # (n,) bool
    best_metric: np.ndarray  # (n,) float64
    failed: int = -1  # the first sample whose search gave up (MAX_ATTEMPTS), or -1


def find_crops(seed: int, iteration: int, ids: np.ndarray, lo: np.ndarray, hi: np.ndarray, offsets: np.ndarray,
               p: CropParams, crop_shape: np.ndarray | None = None,
               input_shape: np.ndarray | None = None) -> BatchCrops:
    """find_crop for each sample s, drawing from SampleRNG(seed, iteration, ids[s]); lo, hi are
    (boxes, ndim) float64, crop_shape / input_shape (n, ndim) or None. Stops at a failed search."""
    n, nd = len(ids), p.ndim
    out = BatchCrops(np.zeros((n, nd), np.float32), np.zeros((n, nd), np.float32), np.zeros((n, nd)),
                     np.zeros((n, nd)), np.zeros(lo.shape[0], bool), np.zeros(n, bool), np.zeros(n))
    for s in range(n):
        a, b = int(offsets[s]), int(offsets[s + 1])
        try:
            r = find_crop(SampleRNG(seed, iteration, int(ids[s])), lo[a:b], hi[a:b], p,
                          None if crop_shape is None else crop_shape[s], None if input_shape is None else input_shape[s])
        except RuntimeError:
            out.failed = s
            return out
        out.anchor[s], out.shape[s], out.rel_lo[s], out.rel_hi[s] = r.anchor, r.shape, r.rel_lo, r.rel_hi
        out.keep[a + r.keep] = True
        out.exhausted[s], out.best_metric[s] = r.exhausted, r.best_metric
    return out


def remap32(lo: np.ndarray, hi: np.ndarray, w_lo: np.ndarray, w_hi: np.ndarray,
             owner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boxes (lo, hi) clipped to their samples' windows (w_lo, w_hi: one per sample, picked by
    `owner`) in the windows' coordinates, float32."""
    f = np.float32
    w_lo, w_hi = w_lo.astype(f), w_hi.astype(f)
    c_lo, c_hi, ext = w_lo[owner], w_hi[owner], (w_hi - w_lo)[owner]
    n_lo = np.clip((np.maximum(lo, c_lo) - c_lo) / ext, f(0), f(1))
    n_hi = np.clip((np.minimum(hi, c_hi) - c_lo) / ext, f(0), f(1))
    return n_lo.astype(f), n_hi.astype(f)


def kept_boxes(b: np.ndarray, ndim: int, extents: bool, offsets: np.ndarray, rel_lo: np.ndarray, rel_hi: np.ndarray,
               keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The kept boxes of a batch in their windows' coordinates: `b` (boxes, 2 * ndim) float32, ndim
    starts then ndim ends (or extents: end = start + extent, in float32); sample s owns rows
    offsets[s]..offsets[s + 1], its window is rel_lo[s]..rel_hi[s], `keep` marks the boxes kept.
    Returns float32 (kept, 2 * ndim) boxes in b's layout, their rows, their int32 indices in
    their samples and each sample's count."""
    lo = b[:, :ndim]
    hi = lo + b[:, ndim:] if extents else b[:, ndim:]
    kept = np.nonzero(keep)[0]
    owner = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))[kept]
    n_lo, n_hi = remap32(lo[kept], hi[kept], rel_lo, rel_hi, owner)
    out = np.concatenate([n_lo, n_hi - n_lo if extents else n_hi], 1).astype(np.float32, copy=False)
    return out, kept, (kept - offsets[owner]).astype(np.int32), np.bincount(owner, minlength=len(offsets) - 1)


# -- ssd_random_crop (DALI's deprecated SSDRandomCrop) ---------------------------------------------------

#: the minimum IoUs it picks from (-1: any), and None for "no crop", each equally likely
SSD_OPTIONS: tuple[float | None, ...] = (-1.0, 0.1, 0.3, 0.5, 0.7, 0.9, None)


def ssd_crop(rng: Rng, boxes: np.ndarray, num_attempts: int) -> tuple[float, float, float, float, np.ndarray] | None:
    """(left, top, w, h, kept indices) of an SSD random crop of ltrb boxes (N, 4), or None for
    "no crop". Windows are 0.3..1 of each side, w/h in [0.5, 2], every box's IoU with the window
    at least the picked minimum, at least one box centre inside."""
    count = 0
    f32 = np.float32
    while True:
        opt = SSD_OPTIONS[rng.randint(0, len(SSD_OPTIONS) - 1)]
        if opt is None:
            return None
        for _ in range(num_attempts):
            count += 1
            if count > MAX_ATTEMPTS:
                raise RuntimeError(f"no window with a box centre inside was found in {MAX_ATTEMPTS} attempts")
            w, h = f32(rng.uniform(0.3, 1.0)), f32(rng.uniform(0.3, 1.0))
            if w / h < 0.5 or w / h > 2.0:
                continue
            left, top = float(f32(rng.uniform(0.0, 1.0 - w))), float(f32(rng.uniform(0.0, 1.0 - h)))
            crop = np.array([left, top, left + float(w), top + float(h)], dtype=f32)
            b = boxes.astype(f32)
            ext = np.maximum(np.minimum(b[:, 2:], crop[2:]) - np.maximum(b[:, :2], crop[:2]), f32(0))
            inter = ext[:, 0] * ext[:, 1]
            a1 = (b[:, 3] - b[:, 1]) * (b[:, 2] - b[:, 0])
            a2 = (crop[3] - crop[1]) * (crop[2] - crop[0])
            with np.errstate(divide="ignore", invalid="ignore"):
                ious = inter / (a1 + a2 - inter)
            if (ious < opt).any():
                continue
            xc = 0.5 * (b[:, 0].astype(np.float64) + b[:, 2])
            yc = 0.5 * (b[:, 1].astype(np.float64) + b[:, 3])
            right, bottom = left + float(w), top + float(h)
            keep = np.nonzero((xc >= left) & (xc <= right) & (yc >= top) & (yc <= bottom))[0]
            if len(keep):
                return left, top, float(w), float(h), keep
