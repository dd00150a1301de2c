"""The C helper's 2-D correlation (`_native/csrc/cpu/cpu_image.c`), a stand-in for
`functional.filters.correlate` (registered with the dispatch, `ops._dispatch.register_fast_function`):
fn.experimental.filter's kernels over two adjacent axes (H and W of HW, HWC, CHW, FHWC, ...) on
the CPU. The border is padded by the spec's own `pad_axis`; the taps are summed in C in the
spec's order, so the result is the spec's bit for bit (tests/test_cpu_filters.py). Anything else
(3-D kernels, other axes, CUDA) runs the spec."""
from __future__ import annotations

from typing import Sequence

import torch

from ..._native import helpers
from ...functional import filters as K
from .._dispatch import register_fast_function


def correlate(x: torch.Tensor, axes: Sequence[int], kernel: torch.Tensor, anchor: Sequence[int],
              border: str = "reflect_101", fill: torch.Tensor | float = 0.0, valid: bool = False) -> torch.Tensor | None:
    """`functional.filters.correlate`, or None for a call the helper does not take."""
    axes = [int(a) for a in axes]
    if x.device.type != "cpu" or x.dtype != torch.float32 or kernel.dim() != 2 or len(axes) != 2 \
            or axes[1] != axes[0] + 1 or kernel.numel() == 0 or helpers.CPU_IMAGE.load() is None:
        return None
    xp = x
    if not valid:
        for a, k, an in zip(axes, kernel.shape, anchor):
            xp = K.pad_axis(xp, a, an, int(k) - 1 - an, border, fill)
    return helpers.correlate2d(xp.contiguous(), axes[0], kernel.to(x.device))


register_fast_function(K.correlate, correlate)
