"""Per-value tables for uint8 images on the CPU (`_native/csrc/cpu/cpu_image.c`), stand-ins for
`functional` color and histogram functions (registered with the dispatch,
`ops._dispatch.register_fast_function`):

* brightness_contrast of a uint8 image is a function of each value alone: the C helper reads the
  image through a table of the 256 results, which it works out itself with the spec's float32
  coefficients for uint8 and int16 (the spec's own table was the costly part, per sample), or the
  spec works out for other types; to float32 the helper does the arithmetic on the image directly
  (vectorised, faster than a lookup). The same bits, whatever the output type.
* brightness_contrast_batch (the brightness and contrast ops: a batch with per-sample
  parameters): each sample through the above with its own float32 coefficients.
* equalize: each plane's histogram and OpenCV's table (`functional.histogram`) in C, for planes
  whose pixels are contiguous (HW, HWC, CHW, FHWC, ...).

Anything else runs the spec (tests/test_cpu_tables.py holds both to it).
"""
from __future__ import annotations

import functools
import math

import torch

from ..._native import helpers
from ...functional import color as K
from ...functional import color_adjust as KA
from ...functional import histogram as HG
from .._dispatch import register_fast_function

#: below this many values the table costs more than it saves
_MIN_VALUES = 2048
_VALUES = torch.arange(256, dtype=torch.uint8)


def brightness_contrast(x: torch.Tensor, brightness: float = 1.0, brightness_shift: float = 0.0,
                        contrast: float = 1.0, contrast_center: float | None = None,
                        dtype: torch.dtype | None = None) -> torch.Tensor | None:
    """`functional.color.brightness_contrast`, or None for a call the helper does not take."""
    if x.device.type != "cpu" or x.dtype != torch.uint8 or x.numel() < _MIN_VALUES \
            or helpers.CPU_IMAGE.load() is None:
        return None
    out_type = x.dtype if dtype is None else dtype
    if out_type in (torch.uint8, torch.int16, torch.float32):
        mul, add = K.brightness_contrast_coefficients(x.dtype, brightness, brightness_shift, contrast,
                                                      contrast_center, dtype)
        if math.isfinite(mul) and math.isfinite(add):
            if out_type == torch.float32:  # the arithmetic itself, vectorised: faster than a lookup
                return helpers.affine_u8(x.contiguous(), mul, add, out_type)
            table = helpers.affine_u8(_VALUES, mul, add, out_type)  # the same arithmetic, 256 values
            if table is not None:
                return helpers.table_u8(x.contiguous(), table)
    return helpers.table_u8(x.contiguous(), _table(brightness, brightness_shift, contrast, contrast_center, dtype))


@functools.lru_cache(maxsize=64)
def _table(brightness: float, brightness_shift: float, contrast: float, contrast_center: float | None,
           dtype: torch.dtype | None) -> torch.Tensor:
    """The spec's brightness_contrast of the 256 uint8 values (kept for constant arguments; only
    read afterwards)."""
    return K.brightness_contrast(torch.arange(256, dtype=torch.uint8), brightness, brightness_shift, contrast,
                                 contrast_center, dtype)


def brightness_contrast_batch(x: torch.Tensor, brightness: torch.Tensor, shift: torch.Tensor,
                              contrast: torch.Tensor, center: torch.Tensor | None,
                              dtype: torch.dtype | None = None) -> torch.Tensor | None:
    """`functional.color_adjust.brightness_contrast_batch` (N samples, per-sample float32 values),
    or None for a call the helper does not take: each sample as `brightness_contrast` (the same
    float32 coefficients: `brightness * center * (1 - contrast) + shift * max`, in that order)."""
    if x.device.type != "cpu" or x.dtype != torch.uint8 or x.dim() < 2 or not x.shape[0] \
            or x[0].numel() < _MIN_VALUES:
        return None
    outs = []
    for n in range(int(x.shape[0])):
        y = brightness_contrast(x[n], float(brightness[n]), float(shift[n]), float(contrast[n]),
                                None if center is None else float(center[n]), dtype)
        if y is None:
            return None
        outs.append(y)
    return outs[0].unsqueeze(0) if len(outs) == 1 else torch.stack(outs)


def equalize(x: torch.Tensor, h_axis: int, w_axis: int) -> torch.Tensor | None:
    """`functional.histogram.equalize`, or None for a call the helper does not take: H and W next
    to each other, followed by at most one (channel) dimension."""
    d = x.dim()
    if x.device.type != "cpu" or x.dtype != torch.uint8 or x.numel() == 0 or w_axis != h_axis + 1 \
            or w_axis < d - 2 or helpers.CPU_IMAGE.load() is None:
        return None
    ch = int(x.shape[-1]) if w_axis == d - 2 else 1
    return helpers.equalize_u8(x.contiguous(), math.prod(int(s) for s in x.shape[:h_axis]), ch)


register_fast_function(K.brightness_contrast, brightness_contrast)
register_fast_function(KA.brightness_contrast_batch, brightness_contrast_batch)
register_fast_function(HG.equalize, equalize)
