"""Floating-point sums in the order DALI 2.4's CPU reduction kernels add, so that sums, means and
variances come out with DALI's bits rather than torch's (whose blocked order differs by an ulp or
more on most outputs).

DALI's order: adjacent reduced axes are merged; the last merged axis is summed left to right in
runs of at most 32 elements, longer runs split in halves (first half + second half); an outer axis
whose slab holds more than 32 elements is split in halves the same way, else its rows are summed
left to right. The order depends only on the shape, so it is planned once per shape (a binary tree
over the element indices) and evaluated for every output position at once, level by level.
"""
from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np
import torch

_RUN = 32  # DALI's kTreeReduceThreshold
MAX_PLANNED = 4096  # larger regions are summed by torch: evaluating the plan level by level cost
# ~10x torch's sum (8 float32 224x224x3 images, 5 reductions: 56 ms against 6; DALI 3), a price no
# pipeline should pay for last-bit agreement


class _Plan:
    def __init__(self, sizes: tuple[int, ...]) -> None:
        self.n = math.prod(sizes)
        self.sizes = sizes
        self.strides = [math.prod(sizes[k + 1:]) for k in range(len(sizes))]
        self.pairs: list[tuple[int, int]] = []  # node n + i = pairs[i][0] + pairs[i][1]
        self.height = [0] * self.n
        self.root = self._axis(0, sizes[0], 0)

    def _add(self, a: int, b: int) -> int:
        self.pairs.append((a, b))
        self.height.append(1 + max(self.height[a], self.height[b]))
        return self.n + len(self.pairs) - 1

    def _chain(self, nodes: list[int]) -> int:
        acc = nodes[0]
        for b in nodes[1:]:
            acc = self._add(acc, b)
        return acc

    def _run(self, off: int, stride: int, n: int) -> int:
        if n > _RUN:
            m = n >> 1
            return self._add(self._run(off, stride, m), self._run(off + m * stride, stride, n - m))
        return self._chain([off + i * stride for i in range(n)])

    def _axis(self, axis: int, extent: int, off: int) -> int:
        last = len(self.sizes) - 1
        if axis == last:
            return self._run(off, self.strides[axis], self.sizes[axis])
        stride = self.strides[axis]
        if extent >= 2 and extent * stride > _RUN:
            mid = extent // 2
            return self._add(self._axis(axis, mid, off), self._axis(axis, extent - mid, off + mid * stride))
        return self._chain([self._axis(axis + 1, self.sizes[axis + 1], off + i * stride) for i in range(extent)])

    @functools.cached_property
    def np_levels(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        return [(i.numpy(), a.numpy(), b.numpy()) for i, a, b in self.levels]

    @functools.cached_property
    def levels(self) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """(node ids, left ids, right ids) per height, lowest first."""
        by: dict[int, list[int]] = {}
        for i in range(len(self.pairs)):
            by.setdefault(self.height[self.n + i], []).append(i)
        out = []
        for h in sorted(by):
            ids = by[h]
            out.append((torch.tensor([self.n + i for i in ids]), torch.tensor([self.pairs[i][0] for i in ids]),
                        torch.tensor([self.pairs[i][1] for i in ids])))
        return out


@functools.lru_cache(maxsize=32)
def _plan(sizes: tuple[int, ...]) -> _Plan:
    return _Plan(sizes)


def merged(shape: Sequence[int], axes: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    """(sorted reduced axes, kept axes, sizes of the merged runs of adjacent reduced axes): the
    order DALI sums in depends on these alone."""
    axes = sorted(axes)
    keep = [k for k in range(len(shape)) if k not in axes]
    groups: list[int] = []
    for k, a in enumerate(axes):
        if k and a == axes[k - 1] + 1:
            groups[-1] *= int(shape[a])
        else:
            groups.append(int(shape[a]))
    return axes, keep, groups


def dali_sum(v: torch.Tensor, axes: Sequence[int]) -> torch.Tensor:
    """The sum of `v` over `axes` (sorted, distinct) in `v`'s type and DALI's order; the reduced
    axes are dropped."""
    axes, keep, groups = merged(v.shape, axes)
    out_shape = [int(v.shape[k]) for k in keep]
    n = math.prod(groups)
    if n == 0 or n > MAX_PLANNED or v.device.type != "cpu":  # (DALI's GPU kernels add in their own order)
        return v.sum(dim=tuple(axes)) if axes else v
    plan = _plan(tuple(groups))
    if v.dtype == torch.bfloat16:  # NumPy has no bfloat16
        x = v.permute(axes + keep).reshape(n, -1)  # a row per element: gathers take whole rows
        if not plan.pairs:
            return x[0].reshape(out_shape)
        vals = torch.empty((n + len(plan.pairs), x.shape[1]), dtype=v.dtype)
        vals[:n] = x
        for ids, left, right in plan.levels:
            vals[ids] = vals[left] + vals[right]
        return vals[plan.root].reshape(out_shape)
    # NumPy: single-threaded, where torch's threaded gathers cost more than the adds
    xn = np.ascontiguousarray(v.detach().numpy().transpose(axes + keep)).reshape(n, -1)
    if not plan.pairs:
        return torch.from_numpy(xn[0].copy()).reshape(out_shape)
    vn = np.empty((n + len(plan.pairs), xn.shape[1]), dtype=xn.dtype)
    vn[:n] = xn
    for ids, left, right in plan.np_levels:
        vn[ids] = vn[left] + vn[right]
    return torch.from_numpy(vn[plan.root]).reshape(out_shape)
