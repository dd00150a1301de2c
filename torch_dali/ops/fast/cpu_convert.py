"""The C helper's float32 -> integer conversion (`_native/csrc/cpu/cpu_image.c`), a stand-in for
`functional.crop.convert` (DALI's rounding half away from zero and saturation), registered with the
dispatch (`ops._dispatch.register_fast_function`) for the ops whose last step it is (the
convolutions' float32 results). The spec takes four torch passes over the data; this one. Small
tensors, other types and CUDA run the spec (tests/test_cpu_convert.py holds it to it)."""
from __future__ import annotations

import torch

from ..._native import helpers
from ...functional.crop import convert as _spec
from .._dispatch import register_fast_function

#: below this many values the call costs more than it saves
_MIN_VALUES = 4096


def convert(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor | None:
    """`functional.crop.convert`, or None for a call the helper does not take."""
    if x.dtype != torch.float32 or x.device.type != "cpu" or x.numel() < _MIN_VALUES or dtype == torch.float32:
        return None
    return helpers.convert_f32(x.contiguous(), dtype)


register_fast_function(_spec, convert)
