"""The C helper's resampling for the warp family on the CPU (`_native/csrc/cpu/cpu_warp.c`), a
stand-in for `functional.warp`'s `sample`, `warp` and `warp_matrix` and for `functional.distort`'s
`sample` (water, sphere, jitter) (registered with the dispatch,
`ops._dispatch.register_fast_function`): rotate, warp_affine, warp_perspective and remap call them
through `_dispatch.call`. It takes CPU images (N, H, W, C) of uint8, int16, uint16, int32 or
float32 with 2D points, into the input's type or float32; anything else runs the spec, whose
result it equals bit for bit (tests/test_cpu_warp.py and the fuzz target `warp` hold it to it).
"""
from __future__ import annotations

from typing import Sequence

import torch

from ..._native import helpers
from ...functional import distort as D
from ...functional import warp as W
from .._dispatch import register_fast_function


def _takes(images: torch.Tensor, coords: torch.Tensor, out_dtype: torch.dtype | None) -> bool:
    return (images.device.type == "cpu" and coords.device.type == "cpu" and images.dim() == 4
            and coords.dim() >= 2 and int(coords.shape[-1]) == 2 and images.numel() > 0
            and coords[..., 0].numel() > 0 and out_dtype in (None, images.dtype, torch.float32)
            and helpers.CPU_WARP.load() is not None)


def sample(images: torch.Tensor, coords: torch.Tensor, interp: str = "linear", fill: torch.Tensor | None = None,
           out_dtype: torch.dtype | None = None, border: str = "constant", centred: bool = False,
           weight_bits: int | None = None) -> torch.Tensor | None:
    """`functional.warp.sample`, or None for a call the helper does not take."""
    if not _takes(images, coords, out_dtype):
        return None
    n, c = int(images.shape[0]), int(images.shape[-1])
    out_spatial = tuple(int(s) for s in coords.shape[1:-1])
    pts = coords.reshape(n, -1, 2).to(torch.float32).contiguous()
    out = torch.empty((n, int(pts.shape[1]), c), dtype=out_dtype or images.dtype)
    if not helpers.warp_sample(images.contiguous(), pts, interp, fill, border, centred, weight_bits, out):
        return None
    return out.reshape(n, *out_spatial, c)


def warp(images: torch.Tensor, coords: torch.Tensor, interp: str, fill: float | Sequence[float] | None,
         out_dtype: torch.dtype | None = None, border: str = "constant", centred: bool = False,
         weight_bits: int | None = None) -> torch.Tensor | None:
    """`functional.warp.warp`, or None for a call the helper does not take."""
    if not _takes(images, coords, out_dtype):
        return None
    images = W.nn_source(images, interp, fill, out_dtype)
    f = W.fill_values(fill, int(images.shape[-1]), images.dtype, images.device, out_dtype)
    return sample(images, coords, interp, f, out_dtype, border, centred, weight_bits)


def warp_matrix(images: torch.Tensor, matrices: torch.Tensor, out_spatial: Sequence[int], interp: str,
                fill: float | Sequence[float] | None, out_dtype: torch.dtype | None = None,
                border: str = "constant", centred: bool = False, weight_bits: int | None = None) -> torch.Tensor | None:
    """`functional.warp.warp_matrix` (2D), or None for a call the helper does not take."""
    if not (images.device.type == "cpu" and matrices.device.type == "cpu" and images.dim() == 4
            and len(out_spatial) == 2 and images.numel() > 0 and out_dtype in (None, images.dtype, torch.float32)
            and helpers.CPU_WARP.load() is not None):
        return None
    oh, ow = (int(s) for s in out_spatial)
    if oh * ow == 0:
        return None
    images = W.nn_source(images, interp, fill, out_dtype)
    f = W.fill_values(fill, int(images.shape[-1]), images.dtype, images.device, out_dtype)
    out = torch.empty((int(images.shape[0]), oh, ow, int(images.shape[-1])), dtype=out_dtype or images.dtype)
    mats = matrices.to(torch.float32).contiguous()
    if not helpers.warp_matrix(images.contiguous(), mats, interp, f, border, centred, weight_bits, out):
        return None
    return out


def distort_sample(x: torch.Tensor, px: torch.Tensor, py: torch.Tensor, linear: bool, fill: float) -> torch.Tensor | None:
    """`functional.distort.sample` (water, sphere, jitter), or None for a call the helper does not take."""
    if x.device.type != "cpu" or x.dtype not in (torch.uint8, torch.float32):
        return None
    return helpers.distort_sample(x.contiguous(), px, py, linear, D.fill_in_type(fill, x.dtype))


register_fast_function(W.sample, sample)
register_fast_function(D.sample, distort_sample)
register_fast_function(W.warp_matrix, warp_matrix)
register_fast_function(W.warp, warp)
