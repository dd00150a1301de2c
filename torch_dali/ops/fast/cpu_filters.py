"""The C helper's filter (`_native/csrc/cpu/cpu_image.c`), a stand-in for
`functional.filters.filter_sample` (registered with the dispatch, `ops._dispatch.register_fast_function`):
fn.experimental.filter's kernels over two adjacent axes (H and W of HW, HWC, CHW, FHWC, ...) on
the CPU, in one pass per sample: the input read in its own type, the border taken from the spec's
own index map (`border_indices`), the taps summed in C in the spec's order, the result converted
as the spec's `convert`; bit for bit the spec (tests/test_cpu_filters.py). Anything else (3-D
kernels, other axes, float16, CUDA) runs the spec. The same C pass, one axis at a time, stands in
for `gaussian_blur` and `laplacian` (their separable windows) over two adjacent axes."""
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
    out = x.dtype if dtype is None else dtype
    return helpers.filter2d(x.contiguous(), axes[0], maps[0], maps[1], fill, kernel, out, out == x.dtype)


@functools.lru_cache(maxsize=256)
def _span(start: int, n: int) -> torch.Tensor:
    return torch.arange(start, start + n)


@functools.lru_cache(maxsize=256)
def _gaussian_window(sigma: float, size: int) -> torch.Tensor:
    return K.gaussian_window(sigma, size)


def _correlate1d(x: torch.Tensor, axis: int, along_w: bool, w: torch.Tensor, pad: int | None,
                 length: int | None) -> torch.Tensor | None:
    """One pass of `functional.filters.separable` over axis `axis` (+1 when `along_w`) of a
    contiguous float32 tensor: `correlate1d` (reflect_101 borders) when `pad` is None, else `_taps`
    over a tensor that holds its borders; None when the helper does not take it."""
    k = int(w.numel())
    n = int(x.shape[axis + along_w])
    if pad is None or length is None:
        taps = _index_map(n, k // 2, k - 1 - k // 2, "reflect_101", False)
    else:
        taps = _span(pad - k // 2, length + k - 1)
    keep = _index_map(int(x.shape[axis + (not along_w)]), 0, 0, "reflect_101", True)
    kernel = w.reshape(1, k) if along_w else w.reshape(k, 1)
    rows, cols = (keep, taps) if along_w else (taps, keep)
    return helpers.filter2d(x, axis, rows, cols, 0.0, kernel, torch.float32)


def _separable(x: torch.Tensor, axes: Sequence[int], windows: Sequence[torch.Tensor], pads: Sequence[int] | None,
               lengths: Sequence[int] | None) -> torch.Tensor | None:
    """`functional.filters.separable` over two adjacent axes of a CPU float32 tensor, each window
    one pass of the C filter (innermost axis first, as the spec), or None."""
    axes = [int(a) for a in axes]
    if x.device.type != "cpu" or x.dtype != torch.float32 or len(axes) != 2 or axes[1] != axes[0] + 1 \
            or x.numel() == 0 or helpers.CPU_IMAGE.load() is None:
        return None
    y = x.contiguous()
    for i in (1, 0):  # W, then H
        w = windows[i]
        pad, length = (None, None) if pads is None or lengths is None else (int(pads[i]), int(lengths[i]))
        if w.numel() > 1:
            out = _correlate1d(y, axes[0], i == 1, w, pad, length)
            if out is None:
                return None
            y = out
        elif pad is not None and length is not None:  # a one-tap window: the spec only narrows
            y = y.narrow(axes[i], pad, length).contiguous()
    return y


def gaussian_blur(x: torch.Tensor, axes: Sequence[int], sigmas: Sequence[float], sizes: Sequence[int],
                  pads: Sequence[int] | None = None, lengths: Sequence[int] | None = None) -> torch.Tensor | None:
    """`functional.filters.gaussian_blur` over two adjacent axes of a CPU float32 tensor, or None."""
    if len(sigmas) != 2 or len(sizes) != 2:
        return None
    wins = [_gaussian_window(float(s), int(d)) for s, d in zip(sigmas, sizes)]
    return _separable(x, axes, wins, pads, lengths)


@functools.lru_cache(maxsize=256)
def _laplacian_windows(i: int, row: tuple[int, ...]) -> list[torch.Tensor]:
    return [torch.tensor(K.derivative_window(d) if i == j else K.smoothing_window(d), dtype=torch.float64)
            .to(torch.float32) for j, d in enumerate(row)]


def laplacian(x: torch.Tensor, axes: Sequence[int], sizes: Sequence[Sequence[int]], scales: Sequence[float],
              pads: Sequence[int] | None = None, lengths: Sequence[int] | None = None) -> torch.Tensor | None:
    """`functional.filters.laplacian` over two adjacent axes of a CPU float32 tensor: each partial
    derivative's windows through `_separable`, scaled and summed as the spec; or None."""
    if len(sizes) != 2 or len(scales) != 2:
        return None
    acc: torch.Tensor | None = None
    for i, (row, sc) in enumerate(zip(sizes, scales)):
        part = _separable(x, axes, _laplacian_windows(i, tuple(int(d) for d in row)), pads, lengths)
        if part is None:
            return None
        term = part * torch.tensor(sc, dtype=torch.float32)
        acc = term if acc is None else acc.add_(term)
    return acc


register_fast_function(K.filter_sample, filter_sample)
register_fast_function(K.gaussian_blur, gaussian_blur)
register_fast_function(K.laplacian, laplacian)
