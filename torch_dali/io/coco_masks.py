"""readers.coco's pixel-wise masks: COCO polygons and RLEs rasterized and merged as DALI 2.4 does.

Masks are run-length encodings over the image in column-major order (down each column, then the
next), as in pycocotools. A polygon is rasterized with pycocotools' rule (its outline traced at 5x
and sampled at pixel centres); an object's RLE segmentation ("counts" as a list or pycocotools'
compressed string) is used as given. Per label, the label's polygons are united (replacing an RLE of
that label, as DALI does), then the labels are merged in increasing order, a later label winning
where two overlap except in the last run of the image, where DALI keeps the earlier one; if the
smallest label has no mask at all the result is all zeros (DALI's merge starts from that label).
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..errors import DataError
from .coco import CocoSample

_SCALE = 5.0


def rle_from_string(s: str, where: str) -> list[int]:
    """pycocotools' compressed RLE string: 5-bit groups (+48), continuation bit 0x20, sign bit 0x10
    in the last group; counts after the second are stored as differences to the one two back."""
    counts: list[int] = []
    p, n = 0, len(s)
    while p < n:
        x, k, more = 0, 0, True
        while more:
            if p >= n:
                raise DataError(f"{where}: the RLE string ends inside a count")
            c = ord(s[p]) - 48
            if not 0 <= c < 64:
                raise DataError(f"{where}: the RLE string has a character outside '0'..'o': {s[p]!r}")
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if k > 13:
                raise DataError(f"{where}: an RLE count is too long")
            if not more and c & 0x10:
                x |= -1 << (5 * k)
        if len(counts) > 2:
            x += counts[-2]
        if x < 0:
            raise DataError(f"{where}: the RLE string decodes to a negative count")
        counts.append(x)
    return counts


#: outline points (at 5x) one polygon may trace: an edge steps once per 1/5 pixel along its longer
#: axis, so a vertex far outside the image would otherwise mean billions of steps
MAX_OUTLINE_POINTS = 1 << 23
#: outline points all polygons of one image may trace together: a file of thousands of polygons,
#: each just under MAX_OUTLINE_POINTS (~2 s and 1 GB here), would otherwise take hours per image
MAX_IMAGE_OUTLINE_POINTS = 1 << 25
#: |coordinate| a polygon vertex may have, in pixels
MAX_COORDINATE = float(1 << 28)


def outline_points(xy: np.ndarray) -> int:
    """The points `rle_from_polygon` traces for polygon (k, 2) (finite, within MAX_COORDINATE):
    one per 1/5 pixel along each edge's longer axis, and one more per edge."""
    p = np.trunc(_SCALE * np.asarray(xy, np.float64) + 0.5).astype(np.int64)
    return int(np.abs(np.roll(p, -1, axis=0) - p).max(axis=1, initial=0).sum()) + len(p)


def rle_from_polygon(xy: np.ndarray, h: int, w: int, where: str = "readers.coco") -> list[int]:
    """Run lengths of a polygon (k, 2) rasterized on an h x w grid (pycocotools' frPoly rule), the
    outline traced with NumPy. DataError for a vertex beyond MAX_COORDINATE or an outline longer than
    MAX_OUTLINE_POINTS (a hostile file's way to hang or exhaust memory)."""
    k = len(xy)
    if k == 0:
        return [h * w]
    xy = np.asarray(xy, np.float64)
    if not np.isfinite(xy).all() or np.abs(xy).max() > MAX_COORDINATE:
        raise DataError(f"{where}: a polygon vertex is not finite or lies beyond {MAX_COORDINATE:.0f} pixels")
    x = np.trunc(_SCALE * xy[:, 0] + 0.5).astype(np.int64)
    y = np.trunc(_SCALE * xy[:, 1] + 0.5).astype(np.int64)
    xs, xe, ys, ye = x, np.roll(x, -1), y, np.roll(y, -1)  # edge j: vertex j to j + 1 (the last closes it)
    dx, dy = np.abs(xe - xs), np.abs(ys - ye)
    major = dx >= dy  # steps along x
    flip = np.where(major, xs > xe, ys > ye)
    xs, xe = np.where(flip, xe, xs), np.where(flip, xs, xe)
    ys, ye = np.where(flip, ye, ys), np.where(flip, ys, ye)
    steps = np.where(major, dx, dy)
    total = int(steps.sum()) + k
    if total > MAX_OUTLINE_POINTS:
        raise DataError(f"{where}: a polygon's outline is {total} points at 5x scale, more than the "
                        f"{MAX_OUTLINE_POINTS} allowed (a vertex far outside the {w}x{h} image?)")
    e = np.repeat(np.arange(k), steps + 1)
    d = np.arange(total) - np.repeat(np.cumsum(steps + 1) - (steps + 1), steps + 1)
    t = np.where(flip[e], steps[e] - d, d)
    # the same float64 operations, in the same order, as the scalar rule
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.where(major, np.where(dx > 0, (ye - ys) / np.maximum(dx, 1), 0.0), (xe - xs) / np.maximum(dy, 1))
    along = np.trunc(np.where(major, ys, xs)[e] + slope[e] * t + 0.5).astype(np.int64)
    u = np.where(major[e], t + xs[e], along)
    v = np.where(major[e], along, t + ys[e])
    # where the outline crosses a column centre: a run boundary
    cur, prev = u[1:], u[:-1]
    moved = cur != prev
    xd = (np.where(cur < prev, cur, cur - 1) + 0.5) / _SCALE - 0.5
    keep = moved & (np.floor(xd) == xd) & (xd >= 0) & (xd <= w - 1)
    yd = (np.minimum(v[1:], v[:-1]) + 0.5) / _SCALE - 0.5
    yd = np.ceil(np.minimum(np.maximum(yd, 0.0), float(h)))
    starts = (xd[keep].astype(np.int64) * h + yd[keep].astype(np.int64)).tolist()
    a = sorted(starts + [h * w])
    diffs = [a[0]] + [a[i] - a[i - 1] for i in range(1, len(a))]
    out = [diffs[0]]
    j = 1
    while j < len(diffs):  # a zero-length run joins its neighbours
        if diffs[j] > 0:
            out.append(diffs[j])
            j += 1
        else:
            j += 1
            if j < len(diffs):
                out[-1] += diffs[j]
                j += 1
    return out


def _dense(counts: list[int], n: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    p = 0
    for i, c in enumerate(counts):
        if i % 2:
            m[p:p + c] = True
        p += c
    return m


def _encode(m: np.ndarray) -> list[int]:
    change = np.flatnonzero(np.diff(m.astype(np.int8))) + 1
    edges = np.concatenate([[0], change, [len(m)]])
    runs = np.diff(edges).tolist()
    return ([0] + runs) if len(m) and m[0] else runs


def _union(rles: list[list[int]], n: int) -> list[int]:
    if len(rles) == 1:
        return rles[0]
    acc = np.zeros(n, dtype=bool)
    for r in rles:
        acc |= _dense(r, n)
    return _encode(acc)


def _merge_label(a_cnts: list[int], a_vals: list[int], b_cnts: list[int], label: int) -> tuple[list[int], list[int]]:
    """DALI's merge of one more label's runs into the labelled runs so far (its quirks included)."""
    cnt_a = a_cnts[0] if a_cnts else 0
    next_val_a = a_vals[0] if a_vals else 0
    cnt_b = b_cnts[0]
    val_a, vb, next_vb = next_val_a, False, False
    na = nb = 1
    out_c: list[int] = []
    out_v: list[int] = []
    total = 1
    while total > 0:
        c = min(cnt_a, cnt_b)
        cnt_a -= c
        if not cnt_a and na < len(a_cnts):
            cnt_a, next_val_a = a_cnts[na], a_vals[na]
            na += 1
        cnt_b -= c
        if not cnt_b and nb < len(b_cnts):
            cnt_b = b_cnts[nb]
            nb += 1
            next_vb = not next_vb
        total = cnt_a + cnt_b
        if val_a and vb:
            out_v.append(val_a if not cnt_a else label)
        else:
            out_v.append(val_a if val_a else (label if vb else 0))
        out_c.append(c)
        val_a, vb = next_val_a, next_vb
        if cnt_a == 0:
            break
    return out_c, out_v


#: pixels of one image's pixel-wise mask (and of one RLE mask a preprocessed folder holds)
MAX_MASK_PIXELS = 1 << 28


def pixelwise_mask(s: CocoSample, relative: bool = False) -> torch.Tensor:
    """The (H, W, 1) int32 mask of one sample: each pixel the label of the object covering it.
    `relative`: the vertices were divided by the image size (`ratio=True`); they are scaled back as
    DALI 2.4 does, a float32 product by the width and height, so the mask is ratio=False's up to
    that rounding (a vertex a float32 step off can move an edge pixel, in DALI's way)."""
    h, w = s.height, s.width
    if h <= 0 or w <= 0 or h * w > MAX_MASK_PIXELS:
        raise DataError(f"readers.coco: image {s.file_name} (id {s.image_id}) has size {w}x{h}; pixel-wise "
                        "masks need a positive width and height (at most 2**28 pixels)")
    n = h * w
    out = torch.zeros((h, w, 1), dtype=torch.int32)
    labels = s.labels.tolist()
    if not labels:
        return out
    per_label: dict[int, list[int]] = {}
    for obj, rh, rw, counts in s.rles:
        where = f"readers.coco: image {s.file_name} (id {s.image_id}), object {obj}"
        if (rh, rw) != (h, w):
            raise DataError(f"{where}: the RLE mask is {rw}x{rh} but the image is {w}x{h}")
        cnts = rle_from_string(counts, where) if isinstance(counts, str) else list(counts)
        if sum(cnts) != n:
            raise DataError(f"{where}: the RLE counts cover {sum(cnts)} pixels, not the image's {n}")
        per_label[labels[obj]] = cnts
    verts = s.vertices
    if relative:
        verts = verts.astype(np.float32) * np.array([w, h], np.float32)
    polys: dict[int, list[list[int]]] = {}
    traced = 0
    for obj, start, end in s.polygons.tolist():
        where = f"readers.coco: image {s.file_name} (id {s.image_id}), object {obj}"
        xy = verts[start:end].astype(np.float64)
        polys.setdefault(labels[obj], []).append(rle_from_polygon(xy, h, w, where))
        traced += outline_points(xy)
        if traced > MAX_IMAGE_OUTLINE_POINTS:
            raise DataError(f"{where}: the image's polygons trace more than {MAX_IMAGE_OUTLINE_POINTS} outline "
                            "points at 5x scale together (vertices far outside the image?)")
    for lab, rl in polys.items():
        per_label[lab] = _union(rl, n)
    order = sorted(set(labels))
    first = per_label.get(order[0], [])
    a_cnts = list(first)
    a_vals = [order[0] if k % 2 else 0 for k in range(len(first))]
    for lab in order[1:]:
        b = per_label.get(lab)
        if b:
            a_cnts, a_vals = _merge_label(a_cnts, a_vals, b, lab)
    flat = np.zeros(n, dtype=np.int32)
    p = 0
    for c, v in zip(a_cnts, a_vals):
        c = min(c, n - p)
        flat[p:p + c] = v
        p += c
    out[:, :, 0] = torch.from_numpy(flat.reshape(w, h).T.copy())
    return out
