"""The C helper's 3x3 color matrices of uint8 pixels (`_native/csrc/cpu/cpu_image.c`), stand-ins
for `functional` color functions (registered with the dispatch, `ops._dispatch.register_fast_function`):
hsv and color_twist (`functional.color`: the spec's matrix, then `apply_color_matrix`), hue and
saturation (`functional.color_adjust.color_matrix_batch`, per sample) and color_space_conversion
from RGB or BGR to YCbCr (`functional.color_adjust`; GRAY and RGB <-> BGR without the helper). The spec takes a dozen
torch passes over an image's channels; the helper one, with the same float32 roundings. Other
types, layouts, conversions and CUDA run the spec (tests/test_cpu_color.py holds both to it)."""
from __future__ import annotations

import math

import numpy as np
import torch

from ..._native import helpers
from ...functional import color as K
from ...functional import color_adjust as KA
from .._dispatch import register_fast_function

#: below this many values the call costs more than it saves
_MIN_VALUES = 4096
_F32 = torch.float32


def _takes(x: torch.Tensor) -> bool:
    return x.device.type == "cpu" and x.dtype == torch.uint8 and x.dim() >= 1 and int(x.shape[-1]) == 3 \
        and x.numel() >= _MIN_VALUES


def _matrix(x: torch.Tensor, m: torch.Tensor, offset: float, dtype: torch.dtype | None) -> torch.Tensor | None:
    """`apply_color_matrix(x, m, offset, dtype)` (the offset rounds to float32, as torch's scalar)."""
    m32 = m.to(_F32)
    if not bool(torch.isfinite(m32).all()) or not math.isfinite(offset):
        return None
    return helpers.color_matrix_u8(x.contiguous(), m32, torch.full((3,), offset, dtype=_F32),
                                   x.dtype if dtype is None else dtype)


def hsv(x: torch.Tensor, hue: float = 0.0, saturation: float = 1.0, value: float = 1.0,
        dtype: torch.dtype | None = torch.uint8) -> torch.Tensor | None:
    """`functional.color.hsv`, or None for a call the helper does not take."""
    if not _takes(x):
        return None
    return _matrix(x, K.hsv_matrix(hue, saturation, value), 0.0, dtype)


def color_twist(x: torch.Tensor, brightness: float = 1.0, contrast: float = 1.0, hue: float = 0.0,
                saturation: float = 1.0, dtype: torch.dtype | None = None) -> torch.Tensor | None:
    """`functional.color.color_twist`, or None for a call the helper does not take."""
    if not _takes(x):
        return None
    m, offset = K.color_twist_matrix(brightness, contrast, hue, saturation, x.dtype)
    return _matrix(x, m, offset, dtype)


def color_matrix_batch(x: torch.Tensor, m: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor | None:
    """`functional.color_adjust.color_matrix_batch` (the hue and saturation ops: N samples, (N, 3, 3)
    float32 matrices), or None for a call the helper does not take: each sample as hsv's matrix."""
    if x.dim() < 2 or not x.shape[0] or not _takes(x[0]):
        return None
    outs = []
    for n in range(int(x.shape[0])):
        y = _matrix(x[n], m[n], 0.0, dtype)
        if y is None:
            return None
        outs.append(y)
    return outs[0].unsqueeze(0) if len(outs) == 1 else torch.stack(outs)


#: RGB -> YCbCr: the spec's rows (each coefficient rounded to float32, as its `_f`) and offsets
_YCBCR = torch.tensor([KA.Y_ROW, KA.CB_ROW, KA.CR_ROW], dtype=_F32)
_YCBCR_OFFSET = torch.tensor([16.0, 128.0, 128.0], dtype=_F32)


def color_space_conversion(x: torch.Tensor, src: str, dst: str) -> torch.Tensor | None:
    """`functional.color_adjust.color_space_conversion`, or None for a call the helper does not take.
    RGB <-> BGR as three plane copies, RGB / BGR -> GRAY in NumPy (the spec's fixed-point sum in
    int32 on three planes instead of a dozen torch passes: 2x faster); YCbCr in the C helper."""
    if src not in ("RGB", "BGR") or dst not in ("YCbCr", "GRAY", "RGB", "BGR") or src == dst or not _takes(x) \
            or x.requires_grad:
        return None
    if dst == "YCbCr":
        return helpers.color_matrix_u8(x.contiguous(), _YCBCR, _YCBCR_OFFSET, torch.uint8, src == "BGR")
    if dst != "GRAY":  # three plane copies: 4x faster than torch's flip, 2x NumPy's reversed copy
        out = torch.empty(x.shape, dtype=x.dtype)
        for c in range(3):
            out[..., c] = x[..., 2 - c]
        return out
    v = x.numpy()
    r, b = (0, 2) if src == "RGB" else (2, 0)
    y = v[..., r].astype(np.int32) * 9798
    y += v[..., 1].astype(np.int32) * 19235
    y += v[..., b].astype(np.int32) * 3735
    y += 1 << 14
    return torch.from_numpy((y >> 15).astype(np.uint8)[..., None])


register_fast_function(K.hsv, hsv)
register_fast_function(K.color_twist, color_twist)
register_fast_function(KA.color_matrix_batch, color_matrix_batch)
register_fast_function(KA.color_space_conversion, color_space_conversion)
