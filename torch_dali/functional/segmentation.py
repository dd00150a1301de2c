"""Kernels of the segmentation ops: connected components of a label map and their boxes
(random_object_bbox), the k-th foreground pixel (random_mask_pixel), polygon selection
(select_masks). Pure torch.

Components follow DALI 2.4: pixels of equal label that share a face are connected (4-connectivity
in 2-D, 2N neighbours in N-D; diagonal pixels are separate objects). They are found by label
propagation with pointer jumping: every pixel points at the smallest index of its component, found
by hooking each edge's larger root onto the smaller one and compressing the pointers, repeated
until nothing changes (a few rounds for ordinary masks)."""
from __future__ import annotations

from typing import Sequence

import torch

from ..errors import ArgumentError


def components(mask: torch.Tensor) -> torch.Tensor:
    """For each pixel (flattened, raster order) the index of the first pixel of its component."""
    flat = mask.reshape(-1)
    n = int(flat.numel())
    parent = torch.arange(n, device=mask.device)
    idx = parent.reshape(mask.shape)
    a_parts, b_parts = [], []
    for d in range(mask.dim()):
        if mask.shape[d] < 2:
            continue
        a = idx.narrow(d, 0, int(mask.shape[d]) - 1).reshape(-1)
        b = idx.narrow(d, 1, int(mask.shape[d]) - 1).reshape(-1)
        same = flat[a] == flat[b]
        a_parts.append(a[same])
        b_parts.append(b[same])
    if not a_parts:
        return parent
    a, b = torch.cat(a_parts), torch.cat(b_parts)
    while True:
        pa, pb = parent[a], parent[b]
        hooked = parent.scatter_reduce(0, torch.maximum(pa, pb), torch.minimum(pa, pb), reduce="amin")
        while True:  # pointer jumping: every pixel straight to its root
            jumped = hooked[hooked]
            if torch.equal(jumped, hooked):
                break
            hooked = jumped
        if torch.equal(hooked, parent):
            return parent
        parent = hooked


def boxes(mask: torch.Tensor, roots: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(labels (K,), starts (K, ndim), ends (K, ndim)) of the components, ordered by their first
    pixel (raster order); ends are one past the last pixel."""
    ndim = mask.dim()
    uniq, inverse = torch.unique(roots, return_inverse=True)
    k = int(uniq.numel())
    coords = torch.stack(torch.unravel_index(torch.arange(roots.numel(), device=mask.device), mask.shape), 1) \
        if ndim else torch.zeros((1, 0), dtype=torch.int64, device=mask.device)
    idx = inverse.unsqueeze(1).expand(-1, ndim)
    big = torch.iinfo(torch.int64).max
    lo = torch.full((k, ndim), big, dtype=torch.int64, device=mask.device).scatter_reduce(0, idx, coords, "amin")
    hi = torch.full((k, ndim), -1, dtype=torch.int64, device=mask.device).scatter_reduce(0, idx, coords, "amax")
    return mask.reshape(-1)[uniq], lo, hi + 1


def kth_true(flags: torch.Tensor, k: int) -> torch.Tensor:
    """The coordinates (int64, one per dimension) of the k-th True of `flags` in raster order."""
    pos = torch.nonzero(flags.reshape(-1)).reshape(-1)[k]
    return torch.stack([c.reshape(()) for c in torch.unravel_index(pos, flags.shape)]) if flags.dim() else \
        torch.zeros(0, dtype=torch.int64)


def select_polygons(op: str, mask_ids: Sequence[int], polygons: torch.Tensor, vertices: torch.Tensor,
                    reindex: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """The polygons of the masks `mask_ids`, in that order, and their vertices, renumbered from 0.
    A mask id listed by several polygon rows keeps the last row, as DALI 2.4 does."""
    if polygons.dim() != 2 or (polygons.numel() and polygons.shape[1] != 3):
        raise ArgumentError(f"{op}: `polygons` must be 2-D with 3 columns (mask_id, start_idx, end_idx), got shape "
                            f"{list(polygons.shape)}")
    nv = int(vertices.shape[0]) if vertices.dim() else 0
    rows = {int(r[0]): (int(r[1]), int(r[2])) for r in polygons.tolist()}
    seen: set[int] = set()
    out_rows, parts, count = [], [], 0
    for j, m in enumerate(mask_ids):
        if m in seen:
            raise ArgumentError(f"{op}: `mask_ids` must not repeat a value; got {m} twice")
        seen.add(m)
        if m not in rows:
            raise ArgumentError(f"{op}: the selected mask id {m} is not in the input polygons")
        s, e = rows[m]
        if e < s:
            raise ArgumentError(f"{op}: mask id {m}: the vertex range [{s}, {e}) ends before it starts")
        if s < 0 or e > nv:
            raise ArgumentError(f"{op}: mask id {m}: the vertex range [{s}, {e}) is outside the {nv} vertices")
        out_rows.append([j if reindex else m, count, count + e - s])
        parts.append(vertices[s:e])
        count += e - s
    poly = torch.tensor(out_rows, dtype=torch.int32).reshape(-1, 3)
    verts = torch.cat(parts) if parts else vertices[:0]
    return poly, verts
