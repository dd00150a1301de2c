"""The C helper of CPU resizing (`csrc/cpu/cpu_resize.c`): one HWC image (uint8, int16, uint16 or
float32), or a window of it, resampled with DALI's linear / triangular, cubic, Lanczos-3 or
Gaussian filter into its own type or float32, bit for bit what `functional.resize.resize`
computes (re-exported by `helpers`, through which the fast kernels call it, so that tests can
stand in for it in one place)."""
from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch

from .build import CLibrary

CSRC = Path(__file__).resolve().parent / "csrc"

#: the filters the helper takes (functional.resize's names) -> its kind numbers (cpu_resize.c's K_*)
FILTER_KINDS = {"linear": 0, "triangular": 0, "cubic": 1, "lanczos3": 2, "gaussian": 3}
_KIND_NAMES = ("triangular", "cubic", "lanczos3", "gaussian")  # a table per kind, in that order
#: the element types it reads and writes (cpu_resize.c's T_*): an output is the input's type or float32
_TYPES = {torch.uint8: 0, torch.int16: 1, torch.uint16: 2, torch.float32: 3}


def _signatures(lib: ctypes.CDLL) -> None:
    i64, d, c_int, vp = ctypes.c_int64, ctypes.c_double, ctypes.c_int, ctypes.c_void_p
    lib.td_resize.argtypes = [vp, c_int, i64, i64, c_int, i64, d, d, d, d, d, d, c_int, c_int, c_int, c_int, c_int,
                              vp, vp, c_int, c_int, vp]
    lib.td_resize.restype = c_int


#: bit-identical to functional.resize (no fused multiply-add: products round as torch's do; -O3
#: vectorises the loops across independent outputs only; -fno-trapping-math lets float selects
#: become blends, values unchanged)
CPU_RESIZE = CLibrary(CSRC / "cpu" / "cpu_resize.c", ["m"], ["-O3", "-ffp-contract=off", "-fno-trapping-math"],
                      disable_env="TORCH_DALI_NO_CPU_KERNELS", configure=_signatures)


class FilterTables:
    """DALI's filter tables (float32, one per kind, `table(name)` giving each) held for the C
    helper: the arrays and the pointer and size arrays it reads, built once."""

    def __init__(self, table: Callable[[str], np.ndarray]) -> None:
        self.arrays = [np.ascontiguousarray(table(n), dtype=np.float32) for n in _KIND_NAMES]
        self.ptrs = (ctypes.c_void_p * len(self.arrays))(*[a.ctypes.data for a in self.arrays])
        self.sizes = (ctypes.c_int * len(self.arrays))(*[len(a) for a in self.arrays])


def packed(image: torch.Tensor) -> bool:
    """(H, W, C) with packed pixels; rows may be strided."""
    h, w, c = image.shape
    return image.stride(2) == 1 and (w <= 1 or image.stride(1) == c) and (h <= 1 or image.stride(0) >= w * c)


def row_stride(image: torch.Tensor) -> int:
    """Elements from one row to the next (a one-row image's stride may be anything)."""
    return int(image.stride(0)) if image.shape[0] > 1 else int(image.shape[1] * image.shape[2])


def resize_roi(image: torch.Tensor, roi: Sequence[float], out: torch.Tensor, antialias: bool,
               filters: tuple[str, str], tables: FilterTables, row_channels: int | None = None) -> bool:
    """Resizes the region `roi` = (y, x, h, w) of `image` (CPU (H, W, C) uint8, int16, uint16 or
    float32, pixels packed, rows may be strided) into `out` (CPU, contiguous (out_h, out_w, C), the
    image's type or float32) as `functional.resize(image, ..., antialias=antialias,
    min_filter=filters[0], mag_filter=filters[1], roi=roi, row_channels=row_channels)` does, bit
    for bit, without holding the GIL. False when it did nothing: the helper is not built, the
    arguments are not what it takes, or neither axis needs filtering (the caller runs the spec)."""
    F = np.float32
    with np.errstate(all="ignore"):  # a window past float32's range: infinities, which C declines
        axes = [(float(F(o)), float(F(s)), float(F(F(o) + F(s)))) for o, s in ((roi[0], roi[2]), (roi[1], roi[3]))]
    return _resize_axes(image, axes, out, antialias, filters, tables, row_channels)


def resize_window(image: torch.Tensor, window: Sequence[tuple[float, float]], out: torch.Tensor, antialias: bool,
                  filters: tuple[str, str], tables: FilterTables, row_channels: int | None = None) -> bool:
    """`resize_roi` of the source window ((y0, y1), (x0, x1)) (fractional, possibly past the
    edges; forward only), as `functional.resize(..., window=window)` reads it."""
    F = np.float32
    with np.errstate(all="ignore"):
        axes = [(float(F(lo)), float(F(F(hi) - F(lo))), float(F(hi))) for lo, hi in window]
    return _resize_axes(image, axes, out, antialias, filters, tables, row_channels)


def _resize_axes(image: torch.Tensor, axes: list[tuple[float, float, float]], out: torch.Tensor, antialias: bool,
                 filters: tuple[str, str], tables: FilterTables, row_channels: int | None) -> bool:
    lib = CPU_RESIZE.load()
    kinds = [FILTER_KINDS.get(f, -1) for f in filters]
    if lib is None or image.dim() != 3 or out.dim() != 3 or image.dtype not in _TYPES \
            or out.dtype not in (image.dtype, torch.float32) or image.device.type != "cpu" \
            or out.device.type != "cpu" or not out.is_contiguous() or out.shape[2] != image.shape[2] or -1 in kinds:
        return False
    h, w, c = image.shape
    if not packed(image):
        return False
    (oy, sy, ey), (ox, sx, ex) = axes
    return lib.td_resize(image.data_ptr(), _TYPES[image.dtype], h, w, c, row_stride(image), oy, sy, ey, ox, sx, ex,
                         int(out.shape[0]), int(out.shape[1]), int(bool(antialias)), kinds[0], kinds[1], tables.ptrs,
                         tables.sizes, _TYPES[out.dtype], c if row_channels is None else int(row_channels),
                         out.data_ptr()) == 0
