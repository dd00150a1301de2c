"""The C helper's float32 -> integer and float16 conversions (`_native/csrc/cpu/cpu_image.c`), stand-ins
for `functional.crop.convert` and `functional.half.to_half` (DALI's rounding half away from zero,
saturation), registered with the dispatch (`ops._dispatch.register_fast_function`) for the ops whose
last step they are (the convolutions' float32 results, `cast`). The specs take four or more torch
passes over the data; these one. Small tensors, other types and CUDA run the specs
(tests/test_cpu_convert.py holds them to them)."""
from __future__ import annotations

import torch

from ..._native import helpers
from ...functional.crop import convert as _spec
from ...functional.half import to_half as _half_spec
from .._dispatch import register_fast_function

#: below this many values the call costs more than it saves
_MIN_VALUES = 4096


def convert(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor | None:
    """`functional.crop.convert`, or None for a call the helper does not take."""
    if x.dtype != torch.float32 or x.device.type != "cpu" or x.numel() < _MIN_VALUES or dtype == torch.float32:
        return None
    if dtype == torch.float16:
        return helpers.to_half(x.contiguous())
    return helpers.convert_f32(x.contiguous(), dtype)


def to_half(x: torch.Tensor) -> torch.Tensor | None:
    """`functional.half.to_half` of a float32 tensor, or None for a call the helper does not take."""
    if x.dtype != torch.float32 or x.device.type != "cpu" or x.numel() < _MIN_VALUES:
        return None
    return helpers.to_half(x.contiguous())


register_fast_function(_spec, convert)
register_fast_function(_half_spec, to_half)
