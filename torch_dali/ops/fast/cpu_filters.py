"""The C helper's filter (`_native/csrc/cpu/cpu_image.c`), a stand-in for
`functional.filters.filter_sample` (registered with the dispatch, `ops._dispatch.register_fast_function`):
fn.experimental.filter's kernels over two adjacent axes (H and W of HW, HWC, CHW, FHWC, ...) on
the CPU, in one pass per sample: the input read in its own type, the border taken from the spec's
own index map (`border_indices`), the taps summed in C in the spec's order, the result converted
as the spec's `convert`; bit for bit the spec (tests/test_cpu_filters.py). Anything else (3-D
kernels, other axes, float16, CUDA) runs the spec."""
from __future__ import annotations

import functools
from typing import Sequence

import torch

from ..._native import helpers
from ...functional import filters as K
from .._dispatch import register_fast_function


@functools.lru_cache(maxsize=512)
def _index_map(n: int, lo: int, hi: int, border: str, valid: bool) -> torch.Tensor:
    """The source index of each padded position of an axis (read only: shared between calls)."""
    return torch.arange(n) if valid else K.border_indices(n, lo, hi, border)


def filter_sample(x: torch.Tensor, axes: Sequence[int], kernel: torch.Tensor, anchor: Sequence[int],
                  border: str = "reflect_101", fill: torch.Tensor | float = 0.0, valid: bool = False,
                  dtype: torch.dtype | None = None) -> torch.Tensor | None:
    """`functional.filters.filter_sample`, or None for a call the helper does not take."""
    axes = [int(a) for a in axes]
    if x.device.type != "cpu" or kernel.dim() != 2 or len(axes) != 2 or axes[1] != axes[0] + 1 \
            or kernel.numel() == 0 or K.work_dtype(x.dtype) != torch.float32 or helpers.CPU_IMAGE.load() is None:
        return None
    maps = [_index_map(int(x.shape[a]), int(an), int(k) - 1 - int(an), border, valid)
            for a, k, an in zip(axes, kernel.shape, anchor)]
    fill = float(torch.as_tensor(fill, dtype=torch.float32))  # the spec pads in float32
    return helpers.filter2d(x.contiguous(), axes[0], maps[0], maps[1], fill, kernel,
                            x.dtype if dtype is None else dtype)


register_fast_function(K.filter_sample, filter_sample)
