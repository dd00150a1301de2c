"""Batches of variable-size samples as one tensor, so that an op runs a few torch calls per batch
(one launch sequence on the GPU) instead of a few per sample.

Two forms, both computing each output value with the same operations as the per-sample kernels
(so the same bits):
* flat: every sample's elements one after the other (`Flat`); an output of the same form is
  split back into samples that are views of one buffer, which the next op takes without a copy.
  Per-sample parameters reach the elements through an index per element (`Flat.expand`).
* padded groups (`size_groups`, `pad_gather`): samples of similar size in one (G, H, W, C) tensor
  whose borders are each sample's own (reflected, clamped...), for windows (filters, medians).
"""
from __future__ import annotations

from typing import Sequence

import torch

BORDERS = ("reflect_101", "reflect_1001", "wrap", "clamp", "constant")


def _adjacent(samples: Sequence[torch.Tensor]) -> bool:
    """Whether the samples are contiguous and lie one after the other in one storage (the split
    output of a flat op): then the flat batch is a view, no copy."""
    first = samples[0]
    if not first.is_contiguous():
        return False
    ptr = first.untyped_storage().data_ptr()
    end = first.data_ptr() + first.numel() * first.element_size()
    for t in samples[1:]:
        if not t.is_contiguous() or t.untyped_storage().data_ptr() != ptr or t.data_ptr() != end:
            return False
        end += t.numel() * t.element_size()
    return True


class Flat:
    """A batch of samples (same dtype, device and number of dimensions) as one 1-D tensor of all
    their elements, sample after sample. `rows` (the product of all dims but the last `inner`)
    counts the items an op works on (pixels of HWC images with inner=1)."""

    def __init__(self, samples: Sequence[torch.Tensor], inner: int = 0) -> None:
        if not samples:
            raise ValueError("a flat batch needs at least one sample")
        self.shapes = [tuple(int(s) for s in t.shape) for t in samples]
        self.device = samples[0].device
        self.dtype = samples[0].dtype
        self.numels = [int(t.numel()) for t in samples]
        self.inner = inner
        inner_sizes = {s[len(s) - inner:] for s in self.shapes} if inner else {()}
        if len(inner_sizes) != 1:
            raise ValueError(f"the samples' last {inner} dimensions differ: {sorted(inner_sizes)}")
        self.row = 1
        for s in next(iter(inner_sizes)):
            self.row *= int(s)
        self.rows = [n // self.row if self.row else 0 for n in self.numels]
        total = sum(self.numels)
        if _adjacent(samples):
            first = samples[0]
            self.data = torch.empty(0, dtype=first.dtype, device=first.device).set_(
                first.untyped_storage(), first.storage_offset(), (total,))
        else:
            self.data = torch.cat([t.reshape(-1) for t in samples]) if len(samples) > 1 else samples[0].reshape(-1)
        self._ids: torch.Tensor | None = None

    def __len__(self) -> int:
        return len(self.shapes)

    def items(self) -> torch.Tensor:
        """The data as (rows, row): one line per item (a pixel's channels)."""
        return self.data.view(-1, self.row) if self.row else self.data.view(0, 0)

    def ids(self) -> torch.Tensor:
        """(rows,) int64: the sample each item belongs to."""
        if self._ids is None:
            self._ids = segment_ids(self.rows, self.device)
        return self._ids

    def expand(self, per_sample: torch.Tensor) -> torch.Tensor:
        """A per-sample (N, ...) tensor as one row per item (rows, ...)."""
        return per_sample.to(self.device).index_select(0, self.ids())

    def split(self, out: torch.Tensor, shapes: Sequence[Sequence[int]] | None = None) -> list[torch.Tensor]:
        """A flat output (any shape whose elements are the samples' one after the other) as samples
        of `shapes` (default: the input's), views of `out`."""
        shapes = self.shapes if shapes is None else [tuple(int(v) for v in s) for s in shapes]
        return split(out, shapes)


def split(out: torch.Tensor, shapes: Sequence[Sequence[int]]) -> list[torch.Tensor]:
    """`out`'s elements (contiguous) cut into tensors of `shapes`, in order (views)."""
    flat = out.reshape(-1)
    sizes = []
    for s in shapes:
        n = 1
        for d in s:
            n *= int(d)
        sizes.append(n)
    return [p.view(tuple(s)) for p, s in zip(torch.split(flat, sizes), shapes)]


def index_dtype(total: int) -> torch.dtype:
    """int32 indices where they reach (half the memory traffic of int64), else int64."""
    return torch.int32 if total < 2**31 - 1 else torch.int64


def segment_ids(counts: Sequence[int], device: torch.device) -> torch.Tensor:
    """(sum(counts),) integers (`index_dtype`): i repeated counts[i] times."""
    total = int(sum(counts))
    dt = index_dtype(total)
    n = torch.tensor(list(counts), dtype=dt)
    if device.type != "cpu":
        n = n.to(device, non_blocking=True)
    return torch.repeat_interleave(torch.arange(len(counts), dtype=dt, device=device), n, output_size=total)


def starts(counts: Sequence[int]) -> list[int]:
    """Where each segment of `counts` begins."""
    out, acc = [], 0
    for c in counts:
        out.append(acc)
        acc += int(c)
    return out


def segments(counts: Sequence[int], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(segment, index within it) of every item of segments of `counts` items, one after the other."""
    ids = segment_ids(counts, device)
    first = _to(torch.tensor(starts(counts), dtype=ids.dtype), device).index_select(0, ids)
    return ids, torch.arange(int(sum(counts)), dtype=ids.dtype, device=device) - first


def positions(hw: Sequence[tuple[int, int]], device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(sample, y, x), each (sum of h * w,) integers (`index_dtype`), of every pixel of images of
    sizes `hw`, image after image, rows in order."""
    counts = [int(h) * int(w) for h, w in hw]
    ids = segment_ids(counts, device)
    table = torch.tensor([[s, int(w)] for s, (_, w) in zip(starts(counts), hw)], dtype=ids.dtype)
    table = table.to(device, non_blocking=True) if device.type != "cpu" else table
    first, width = table[:, 0].index_select(0, ids), table[:, 1].index_select(0, ids)
    local = torch.arange(int(sum(counts)), dtype=ids.dtype, device=device) - first
    y = torch.div(local, width, rounding_mode="floor")
    return ids, y, local - y * width


def columns(table: Sequence[Sequence[int]], ids: torch.Tensor) -> list[torch.Tensor]:
    """Per-sample integer rows (N, k) as k per-item columns (items, ) of ids' type: column j of
    item p is table[ids[p]][j]."""
    t = _to(torch.tensor([list(r) for r in table], dtype=ids.dtype).t().contiguous(), ids.device)
    return [t[j].index_select(0, ids) for j in range(int(t.shape[0]))]


def per_item(values: Sequence[Sequence[float]] | torch.Tensor, ids: torch.Tensor,
             dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Per-sample values (N, k) as (items, k) rows of `dtype` on ids' device."""
    t = values if isinstance(values, torch.Tensor) else torch.tensor(values, dtype=dtype)
    t = t.to(dtype)
    if ids.device.type != "cpu":
        t = t.to(ids.device, non_blocking=True)
    return t.index_select(0, ids)


# -- padded groups ----------------------------------------------------------------------------------

def size_groups(hw: Sequence[tuple[int, int]], max_waste: float = 1.6) -> list[list[int]]:
    """Sample indices in groups whose (max h) x (max w) box is at most `max_waste` times their
    summed areas (sorted by size, so similar images share a group; one group for most batches)."""
    order = sorted(range(len(hw)), key=lambda i: (hw[i][0], hw[i][1]))
    groups: list[list[int]] = []
    cur: list[int] = []
    mh = mw = area = 0
    for i in order:
        h, w = int(hw[i][0]), int(hw[i][1])
        nh, nw, na = max(mh, h), max(mw, w), area + h * w
        if cur and (len(cur) + 1) * nh * nw > max_waste * max(na, 1):
            groups.append(cur)
            cur, nh, nw, na = [], h, w, h * w
        cur.append(i)
        mh, mw, area = nh, nw, na
    if cur:
        groups.append(cur)
    return groups


def border_map(i: torch.Tensor, n: torch.Tensor, border: str) -> torch.Tensor:
    """Positions i (any integers) mapped into [0, n) by a filter border (names of
    `functional.filters`), with per-position extents n (tensors broadcasting with i); -1 where the
    constant border fills. An extent of 1 repeats its one value."""
    if border == "constant":
        return torch.where((i >= 0) & (i < n), i, torch.full_like(i, -1))
    last = n - 1
    if border == "clamp":
        return torch.minimum(i.clamp(min=0), last)
    if border == "wrap":
        return torch.remainder(i, n)
    if border == "reflect_101":
        period = (2 * n - 2).clamp(min=1)
        j = torch.remainder(i, period)
        j = torch.where(j >= n, period - j, j)
    elif border == "reflect_1001":
        j = torch.remainder(i, 2 * n)
        j = torch.where(j >= n, 2 * n - 1 - j, j)
    else:
        raise ValueError(f"unknown border {border!r}; expected one of {', '.join(BORDERS)}")
    return torch.where(n == 1, torch.zeros_like(j), j)


def pad_gather(items: torch.Tensor, base: Sequence[int], stride: Sequence[int], hw: Sequence[tuple[int, int]],
               box: tuple[int, int], pad: tuple[int, int, int, int], border: str,
               fill: float | torch.Tensor | None = None) -> torch.Tensor:
    """Samples read from `items` (rows of channels: sample g's pixel (y, x) is row
    base[g] + y * stride[g] + x) into one (G, top + H + bottom, left + W + right, C) tensor,
    box = (H, W) >= every size: each sample at (top, left), extended by its own `border` over the
    pad (top, bottom, left, right) and clamped into itself past that (values no valid output
    reads). The constant border takes `fill` (a scalar or per-channel tensor)."""
    top, bottom, left, right = pad
    dev = items.device
    g = len(hw)
    ph, pw = box[0] + top + bottom, box[1] + left + right
    total = g * ph * pw
    dt = index_dtype(max(total, int(items.shape[0])))
    sizes = torch.tensor([[int(h), int(w)] for h, w in hw], dtype=torch.int64)
    hs, ws = sizes[:, :1], sizes[:, 1:]
    rows = border_map(torch.arange(-top, box[0] + bottom).reshape(1, -1), hs, border)  # (G, ph), small
    cols = border_map(torch.arange(-left, box[1] + right).reshape(1, -1), ws, border)  # (G, pw), small
    outside = (rows < 0, cols < 0) if border == "constant" else None
    # past the sample's own pad: any pixel of it (clamped)
    rows = (torch.minimum(rows.clamp(min=0), hs - 1) * torch.tensor(list(stride), dtype=torch.int64)[:, None]
            + torch.tensor(list(base), dtype=torch.int64)[:, None])
    cols = torch.minimum(cols.clamp(min=0), ws - 1)
    rows, cols = _to(rows.to(dt), dev), _to(cols.to(dt), dev)
    idx = (rows[:, :, None] + cols[:, None, :]).reshape(-1)  # (G * ph * pw,), made on the device
    out = items.index_select(0, idx).reshape(g, ph, pw, -1)
    if outside is not None:
        f = torch.as_tensor(0.0 if fill is None else fill, dtype=out.dtype, device=dev)
        mask = _to(outside[0], dev)[:, :, None, None] | _to(outside[1], dev)[:, None, :, None]
        out = torch.where(mask, f, out)
    return out


def _to(t: torch.Tensor, dev: torch.device) -> torch.Tensor:
    return t if dev.type == "cpu" else t.to(dev, non_blocking=True)


def gather_groups(results: Sequence[torch.Tensor], groups: Sequence[Sequence[int]],
                  hw: Sequence[tuple[int, int]]) -> torch.Tensor:
    """The samples' own pixels of group results (results[k] (G_k, H_k, W_k, C) holds the samples
    groups[k] at its top left, sample groups[k][j] of size hw[...]), as rows of channels in sample
    order (the flat form): one gather."""
    where: dict[int, tuple[int, int]] = {}  # sample -> (first row of its box, box width)
    offset = 0
    for res, members in zip(results, groups):
        h, w = int(res.shape[1]), int(res.shape[2])
        for j, i in enumerate(members):
            where[i] = (offset + j * h * w, w)
        offset += int(res.shape[0]) * h * w
    src = results[0].reshape(offset, -1) if len(results) == 1 else \
        torch.cat([r.reshape(-1, int(r.shape[-1])) for r in results])
    ids, yy, xx = positions(hw, src.device)
    dt = index_dtype(max(offset, len(ids)))
    table = torch.tensor([where[i] for i in range(len(hw))], dtype=dt)
    table = _to(table.t().contiguous(), src.device)
    if ids.dtype != dt:
        ids, yy, xx = ids.to(dt), yy.to(dt), xx.to(dt)
    first, width = table[0].index_select(0, ids), table[1].index_select(0, ids)
    return src.index_select(0, first + yy * width + xx)
