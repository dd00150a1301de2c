"""The C helper's grid mask (`_native/csrc/cpu/cpu_image.c`), a stand-in for
`functional.distort.grid_mask` (registered with the dispatch, `ops._dispatch.register_fast_function`):
one pass over a CPU batch of uint8 or float32 pixels with the spec's own per-sample coefficients,
where the spec takes about fifteen torch passes. Other types and CUDA run the spec
(tests/test_cpu_masks.py and the fuzz target `cpu_image` hold the helper to it, bit for bit)."""
from __future__ import annotations

import torch

from ..._native import helpers
from ...functional import distort as D
from .._dispatch import register_fast_function

#: below this many values the call costs more than it saves
_MIN_VALUES = 4096


def grid_mask(x: torch.Tensor, tile: torch.Tensor, ratio: torch.Tensor, angle: torch.Tensor, shift_x: torch.Tensor,
              shift_y: torch.Tensor) -> torch.Tensor | None:
    """`functional.distort.grid_mask`, or None for a call the helper does not take."""
    if x.device.type != "cpu" or x.dim() != 4 or x.dtype not in (torch.uint8, torch.float32) \
            or x.numel() < _MIN_VALUES or helpers.CPU_IMAGE.load() is None:
        return None
    return helpers.grid_mask(x.contiguous(), D.grid_mask_coefficients(tile, ratio, angle, shift_x, shift_y))


register_fast_function(D.grid_mask, grid_mask)
