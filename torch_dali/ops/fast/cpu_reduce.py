"""Sums in DALI's CPU order in C (`_native/csrc/cpu/reduce_sum.c`), a stand-in for
`functional.reduce_order.dali_sum` (registered with the dispatch; the reductions pass it to the
functional kernels): one pass over the input where it lies, where the spec evaluates its plan level by level in
NumPy (~30x torch's sum on 48x48 images). float32 and float64 on the CPU, regions the spec plans
(tests/test_reduce_native.py holds it to the spec, bit for bit)."""
from __future__ import annotations

import math
from typing import Sequence

import torch

from ..._native import helpers
from ...functional import reduce_order as RO
from .._dispatch import register_fast_function


def dali_sum(v: torch.Tensor, axes: Sequence[int]) -> torch.Tensor | None:
    """`RO.dali_sum`, or None for a call the helper does not take."""
    if v.device.type != "cpu" or v.dtype not in (torch.float32, torch.float64):
        return None
    axes, keep, groups = RO.merged(v.shape, axes)
    n = math.prod(groups)
    out_shape = [int(v.shape[k]) for k in keep]
    if not groups or n == 0 or n > RO.MAX_PLANNED or math.prod(out_shape) == 0:
        return None
    out = helpers.dali_sum(v.detach(), axes, keep, groups)
    return None if out is None else out.reshape(out_shape)


register_fast_function(RO.dali_sum, dali_sum)
