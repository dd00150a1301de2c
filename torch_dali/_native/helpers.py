"""The C helpers: small plain-C libraries under `csrc/cpu`, each built on first use with the system
compiler (`build.CLibrary`) and called through ctypes, which releases the GIL during a call.

Each is optional: without a compiler (or with its variable set) `load()` gives None and its callers
run a pure-Python path with identical results. Declared here, with their C signatures, so that one
module knows every native library the package has (`torch_dali._native.status()` lists them).
"""
from __future__ import annotations

import ctypes
import math
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from .build import CLibrary

CSRC = Path(__file__).resolve().parent / "csrc"


def _host_io_signatures(lib: ctypes.CDLL) -> None:
    c_int, c_vp = ctypes.c_int, ctypes.c_void_p
    paths, i64p = ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_int64)
    intp = ctypes.POINTER(ctypes.c_int)
    lib.td_file_sizes.argtypes = [paths, c_int, i64p, intp]
    lib.td_read_files.argtypes = [paths, c_int, c_vp, i64p, i64p, i64p, intp]
    lib.td_image_infos.argtypes = [ctypes.POINTER(c_vp), i64p, c_int, ctypes.POINTER(ctypes.c_int32)]
    lib.td_pread_ranges.argtypes = [c_int, c_int, i64p, i64p, c_vp, i64p, i64p]
    for f in (lib.td_file_sizes, lib.td_read_files, lib.td_image_infos, lib.td_pread_ranges):
        f.restype = c_int


def _jpeg_roi_signatures(lib: ctypes.CDLL) -> None:
    c_p, c_int, c_size = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    c_ip = ctypes.POINTER(ctypes.c_int)
    lib.tdj_header.argtypes = [c_p, c_size, c_ip, c_ip, c_ip, c_ip, c_ip, ctypes.c_char_p, c_int, c_int]
    lib.tdj_header.restype = c_int
    lib.tdj_decode_roi.argtypes = [c_p, c_size, c_int, c_int, c_int, c_int, c_int, c_p, c_size,
                                   ctypes.c_char_p, c_int]
    lib.tdj_decode_roi.restype = c_int
    lib.tdj_decode_roi_dct.argtypes = lib.tdj_decode_roi.argtypes + [c_int]
    lib.tdj_decode_roi_dct.restype = c_int
    lib.tdj_decode_roi_batch.argtypes = [c_int, c_p, c_p, c_p, c_int, c_p, c_p, c_int, c_int, c_p]
    lib.tdj_decode_roi_batch.restype = c_int


def _crop_windows_signatures(lib: ctypes.CDLL) -> None:
    d, vp = ctypes.c_double, ctypes.c_void_p
    lib.td_crop_windows.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int, vp, vp, d, d, d, d,
                                    ctypes.c_int, vp]
    lib.td_crop_windows.restype = ctypes.c_int


def _cpu_image_signatures(lib: ctypes.CDLL) -> None:
    i64, d, c_int, vp = ctypes.c_int64, ctypes.c_double, ctypes.c_int, ctypes.c_void_p
    lib.td_crop_mirror_normalize.argtypes = [vp, i64, i64, c_int, i64, i64, i64, i64, i64, c_int, vp, vp, c_int, vp]
    lib.td_table_u8.argtypes = [vp, i64, vp, c_int, vp]
    lib.td_equalize_u8.argtypes = [vp, i64, i64, c_int, vp]
    lib.td_filter2d.argtypes = [vp, c_int, i64, i64, i64, i64, vp, i64, vp, i64, ctypes.c_float, vp, i64, i64,
                                c_int, c_int, vp]
    lib.td_convert_f32.argtypes = [vp, i64, c_int, vp]
    lib.td_to_half.argtypes = [vp, i64, vp]
    lib.td_color_matrix_u8.argtypes = [vp, i64, c_int, vp, vp, c_int, vp]
    lib.td_affine_u8.argtypes = [vp, i64, ctypes.c_float, ctypes.c_float, c_int, vp]
    lib.td_grid_mask.argtypes = [vp, i64, i64, i64, i64, c_int, vp, vp, vp, vp, vp, vp]
    for f in (lib.td_crop_mirror_normalize, lib.td_table_u8, lib.td_equalize_u8,
              lib.td_filter2d, lib.td_convert_f32, lib.td_to_half, lib.td_color_matrix_u8, lib.td_affine_u8,
              lib.td_grid_mask):
        f.restype = c_int


#: reading a batch of files and parsing a batch of image headers in one call each (io.host_io)
HOST_IO = CLibrary(CSRC / "cpu" / "host_io.c", disable_env="TORCH_DALI_NO_HOST_IO",
                   configure=_host_io_signatures)
#: libjpeg(-turbo) region-of-interest decoding for CPU random crops (io.jpeg_roi)
JPEG_ROI = CLibrary(CSRC / "cpu" / "jpeg_roi.c", ["jpeg"], disable_env="TORCH_DALI_NO_JPEG_ROI",
                    configure=_jpeg_roi_signatures)
#: random-resized-crop windows for a batch, bit-identical to functional.crop_window's draws. No
#: fused multiply-add: products round as Python's do.
CROP_WINDOWS = CLibrary(CSRC / "cpu" / "crop_windows.c", ["m"], ["-ffp-contract=off"],
                        disable_env="TORCH_DALI_NO_HOST_IO", configure=_crop_windows_signatures)

# numeric kernels (numeric.py): declared there, listed and called through here
from .numeric import (BBOX_CROP, BOX_ENCODER, BOX_MOVES, REDUCE_SUM, bbox_crop, bbox_remap, box_encode,  # noqa: E402,F401
                      box_moves, dali_sum)
# resizing (cpu_resize.py): declared there, called through here
from .cpu_resize import CPU_RESIZE, FILTER_KINDS, FilterTables, packed, row_stride, resize_roi, resize_window  # noqa: E402,F401

#: the CPU ops' image kernels (crop_mirror_normalize, per-value tables
#: of uint8 images, histogram equalization, filter (border, correlation and conversion in one pass),
#: float -> integer conversion, 3x3 color matrices of uint8 pixels, grid_mask),
#: bit-identical to their functional specs (no fused multiply-add: products round as torch's do;
#: -O3 vectorises the loops across independent outputs only)
#: -fno-trapping-math lets float selects become blends (vectorised loops); values are unchanged
CPU_IMAGE = CLibrary(CSRC / "cpu" / "cpu_image.c", ["m"], ["-O3", "-ffp-contract=off", "-fno-trapping-math"],
                     disable_env="TORCH_DALI_NO_CPU_KERNELS", configure=_cpu_image_signatures)


def _cpu_warp_signatures(lib: ctypes.CDLL) -> None:
    i64, c_int, vp = ctypes.c_int64, ctypes.c_int, ctypes.c_void_p
    lib.td_warp_sample.argtypes = [vp, c_int, i64, i64, i64, i64, vp, i64, c_int, c_int, vp, c_int, c_int, vp, c_int]
    lib.td_warp_sample.restype = c_int
    lib.td_warp_matrix.argtypes = [vp, c_int, i64, i64, i64, i64, vp, i64, c_int, i64, i64, c_int, c_int, vp, c_int,
                                   c_int, vp, c_int]
    lib.td_warp_matrix.restype = c_int
    lib.td_distort_sample.argtypes = [vp, c_int, i64, i64, i64, i64, vp, vp, i64, i64, i64, c_int, ctypes.c_double, vp]
    lib.td_distort_sample.restype = c_int


#: the warp family's resampling (functional.warp.sample) on the CPU, bit-identical to it (no fused
#: multiply-add: each product rounds as torch's does)
CPU_WARP = CLibrary(CSRC / "cpu" / "cpu_warp.c", ["m"], ["-O3", "-ffp-contract=off"],
                    disable_env="TORCH_DALI_NO_CPU_KERNELS", configure=_cpu_warp_signatures)

_MASK64 = (1 << 64) - 1


def _audio_resample_signatures(lib: ctypes.CDLL) -> None:
    i64, c_int, vp, f = ctypes.c_int64, ctypes.c_int, ctypes.c_void_p, ctypes.c_float
    for fn in (lib.td_audio_resample, lib.td_audio_resample_portable):
        fn.argtypes = [vp, i64, i64, vp, i64, ctypes.c_double, vp, i64, f, f, c_int, c_int]
        fn.restype = c_int


#: audio_resample's windowed-sinc resampling (ops.audio_resample.resample), bit-identical to it (no
#: fused multiply-add; torch's summation order reproduced for the vector width the caller gives)
AUDIO_RESAMPLE = CLibrary(CSRC / "cpu" / "audio_resample.c", ["m"], ["-O3", "-ffp-contract=off"],
                          disable_env="TORCH_DALI_NO_CPU_KERNELS", configure=_audio_resample_signatures)


def crop_windows(seed: int, iteration: int, sizes: Sequence[tuple[int, int]] | np.ndarray, area: tuple[float, float],
                 aspect_ratio: tuple[float, float], num_attempts: int) -> np.ndarray | None:
    """(n, 4) int64 windows (y, x, h, w) for samples 0..n-1 of one iteration, drawn by the C helper
    (the same draws as `functional.crop_window.random_crop_window`); None when it is not built or
    refuses the arguments."""
    lib = CROP_WINDOWS.load()
    n = len(sizes)
    if lib is None or not n:
        return None
    hw = np.ascontiguousarray(np.asarray(sizes, dtype=np.int64).reshape(n, 2).T)
    out = np.empty((n, 4), dtype=np.int64)
    if lib.td_crop_windows(int(seed) & _MASK64, int(iteration) & _MASK64, n, hw[0].ctypes.data,
                           hw[1].ctypes.data, float(area[0]), float(area[1]), float(aspect_ratio[0]),
                           float(aspect_ratio[1]), int(num_attempts), out.ctypes.data) != 0:
        return None
    return out


def crop_mirror_normalize(image: torch.Tensor, window: tuple[int, int, int, int], mirror: bool,
                          mean: torch.Tensor, rstd: torch.Tensor, out: torch.Tensor, chw: bool) -> bool:
    """`functional.normalize`'s crop_mirror_normalize of a window (y, x, h, w) inside `image` (CPU
    uint8 (H, W, C), pixels packed) into `out` (CPU float32, contiguous (C, h, w) when `chw`, else
    (h, w, C)), with scale 1 and shift 0: ((v - mean) * rstd, rstd the float32 reciprocal of
    std), bit for bit, without holding the GIL. False when it did nothing (not built, arguments it
    does not take, a window leaving the image)."""
    lib = CPU_IMAGE.load()
    if lib is None or image.dim() != 3 or image.dtype != torch.uint8 or image.device.type != "cpu" \
            or out.dtype != torch.float32 or out.device.type != "cpu" or not out.is_contiguous() or not packed(image):
        return False
    h, w, c = image.shape
    y, x, wh, ww = (int(v) for v in window)
    if tuple(out.shape) != ((c, wh, ww) if chw else (wh, ww, c)):
        return False
    mean = mean.to(torch.float32).contiguous()
    rstd = rstd.to(torch.float32).contiguous()
    if mean.numel() != c or rstd.numel() != c or mean.device.type != "cpu" or rstd.device.type != "cpu":
        return False
    return lib.td_crop_mirror_normalize(image.data_ptr(), h, w, c, row_stride(image), y, x, wh, ww, int(bool(mirror)),
                                        mean.data_ptr(), rstd.data_ptr(), int(bool(chw)), out.data_ptr()) == 0


def table_u8(image: torch.Tensor, table: torch.Tensor) -> torch.Tensor | None:
    """table[image] for a contiguous CPU uint8 tensor and a 256-entry table (1, 2, 4 or 8 bytes an
    entry), without holding the GIL; None when it did nothing (not built, arguments it does not
    take)."""
    lib = CPU_IMAGE.load()
    if lib is None or image.dtype != torch.uint8 or image.device.type != "cpu" or not image.is_contiguous() \
            or table.dim() != 1 or int(table.shape[0]) != 256 or table.device.type != "cpu" \
            or table.element_size() not in (1, 2, 4, 8) or table.dtype.is_complex:
        return None
    table = table.contiguous()
    out = torch.empty(image.shape, dtype=table.dtype)
    ok = lib.td_table_u8(image.data_ptr(), image.numel(), table.data_ptr(), table.element_size(), out.data_ptr()) == 0
    return out if ok else None


def equalize_u8(x: torch.Tensor, count: int, ch: int) -> torch.Tensor | None:
    """`functional.histogram.equalize_planes` of a contiguous CPU uint8 tensor holding `count`
    blocks of pixels with `ch` interleaved channels, each block's channels equalized apart (the
    result has x's shape); None when it did nothing."""
    lib = CPU_IMAGE.load()
    n = x.numel()
    if lib is None or x.dtype != torch.uint8 or x.device.type != "cpu" or not x.is_contiguous() \
            or not 1 <= ch <= 64 or count < 1 or n == 0 or n % (count * ch):
        return None
    out = torch.empty_like(x)
    ok = lib.td_equalize_u8(x.data_ptr(), count, n // (count * ch), ch, out.data_ptr()) == 0
    return out if ok else None


_FILTER_TYPES = {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.uint16: 3, torch.int32: 4, torch.float32: 5}


def filter2d(x: torch.Tensor, axis: int, rows: torch.Tensor, cols: torch.Tensor, fill: float, kernel: torch.Tensor,
             dtype: torch.dtype, fused: bool = False) -> torch.Tensor | None:
    """`functional.filters.filter_sample` of a contiguous CPU tensor over the axes (axis, axis + 1):
    the padded rows and columns given as source indices (`functional.filters.border_indices`; -1:
    `fill`), a 2-D kernel, the taps summed in float32 in the spec's order, the result converted to
    `dtype` (`fused`: as `functional.filters.filter_sample` to the input's own type: fused
    multiply-adds, integers rounded half to even); without holding the GIL. None when it did nothing."""
    lib = CPU_IMAGE.load()
    if lib is None or x.dtype not in _FILTER_TYPES or dtype not in _FILTER_TYPES or x.device.type != "cpu" \
            or not x.is_contiguous() or kernel.dim() != 2 or not 0 <= axis < x.dim() - 1 or x.numel() == 0:
        return None
    shape = [int(v) for v in x.shape]
    kh, kw = (int(v) for v in kernel.shape)
    hp, wp = int(rows.numel()), int(cols.numel())
    if kh < 1 or kw < 1 or kh > hp or kw > wp:
        return None
    rows = rows.to("cpu", torch.int64).contiguous()
    cols = cols.to("cpu", torch.int64).contiguous()
    w = kernel.to("cpu", torch.float32).contiguous()
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 2:])
    out = torch.empty(shape[:axis] + [hp - kh + 1, wp - kw + 1] + shape[axis + 2:], dtype=dtype)
    ok = lib.td_filter2d(x.data_ptr(), _FILTER_TYPES[x.dtype], outer, shape[axis], shape[axis + 1], inner,
                         rows.data_ptr(), hp, cols.data_ptr(), wp, float(fill), w.data_ptr(), kh, kw,
                         _FILTER_TYPES[dtype], int(fused), out.data_ptr()) == 0
    return out if ok else None


_CONVERT_TYPES = {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.uint16: 3, torch.int32: 4}


def convert_f32(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor | None:
    """`functional.crop.convert` of a contiguous CPU float32 tensor to uint8, int8, int16, uint16 or
    int32, bit for bit, without holding the GIL; None when it did nothing."""
    lib = CPU_IMAGE.load()
    if lib is None or x.dtype != torch.float32 or x.device.type != "cpu" or not x.is_contiguous() \
            or dtype not in _CONVERT_TYPES:
        return None
    out = torch.empty(x.shape, dtype=dtype)
    return out if lib.td_convert_f32(x.data_ptr(), x.numel(), _CONVERT_TYPES[dtype], out.data_ptr()) == 0 else None


def to_half(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor | None:
    """`functional.half.to_half` of a contiguous CPU float32 tensor (into `out`, float16 of its
    shape, when given), bit for bit, without holding the GIL; None when it did nothing."""
    lib = CPU_IMAGE.load()
    if lib is None or x.dtype != torch.float32 or x.device.type != "cpu" or not x.is_contiguous():
        return None
    if out is None:
        out = torch.empty(x.shape, dtype=torch.float16)
    elif out.dtype != torch.float16 or out.shape != x.shape or not out.is_contiguous() or out.device.type != "cpu":
        return None
    return out if lib.td_to_half(x.data_ptr(), x.numel(), out.data_ptr()) == 0 else None


_MATRIX_TYPES = {torch.float32: 0, torch.uint8: 1, torch.int16: 2}


def grid_mask(x: torch.Tensor, coefficients: tuple[torch.Tensor, ...]) -> torch.Tensor | None:
    """`functional.distort.grid_mask` of a contiguous CPU (N, H, W, C) uint8 or float32 tensor with
    the per-sample float32 (ca, sa, sx, sy, ratio) of `grid_mask_coefficients`, bit for bit,
    without holding the GIL; None when it did nothing."""
    lib = CPU_IMAGE.load()
    if lib is None or x.dim() != 4 or x.dtype not in (torch.uint8, torch.float32) or x.device.type != "cpu" \
            or not x.is_contiguous() or len(coefficients) != 5:
        return None
    n = int(x.shape[0])
    co = [v.to(torch.float32).contiguous() for v in coefficients]
    if any(v.numel() != n or v.device.type != "cpu" for v in co):
        return None
    out = torch.empty_like(x)
    ok = lib.td_grid_mask(x.data_ptr(), n, int(x.shape[1]), int(x.shape[2]), int(x.shape[3]),
                          int(x.dtype == torch.float32), *(v.data_ptr() for v in co), out.data_ptr()) == 0
    return out if ok else None


def affine_u8(x: torch.Tensor, mul: float, add: float, dtype: torch.dtype) -> torch.Tensor | None:
    """x * mul + add in float32 for a contiguous CPU uint8 tensor (mul and add float32 values), to
    float32, uint8 or int16 with `functional.crop.convert`'s rounding, bit for bit, without holding
    the GIL; None when it did nothing."""
    lib = CPU_IMAGE.load()
    if lib is None or x.dtype != torch.uint8 or x.device.type != "cpu" or not x.is_contiguous() \
            or dtype not in _MATRIX_TYPES:
        return None
    out = torch.empty(x.shape, dtype=dtype)
    ok = lib.td_affine_u8(x.data_ptr(), x.numel(), mul, add, _MATRIX_TYPES[dtype], out.data_ptr()) == 0
    return out if ok else None


def color_matrix_u8(x: torch.Tensor, m: torch.Tensor, offset: torch.Tensor, dtype: torch.dtype,
                    bgr: bool = False) -> torch.Tensor | None:
    """`functional.color.apply_color_matrix` of a contiguous CPU uint8 tensor of RGB pixels
    (channels last) with a 3x3 float32 matrix and three float32 offsets (one per output channel),
    to float32, uint8 or int16, bit for bit, without holding the GIL; `bgr` reads each pixel's
    channels reversed. None when it did nothing."""
    lib = CPU_IMAGE.load()
    if lib is None or x.dtype != torch.uint8 or x.device.type != "cpu" or not x.is_contiguous() or x.dim() < 1 \
            or int(x.shape[-1]) != 3 or dtype not in _MATRIX_TYPES or m.dtype != torch.float32 \
            or tuple(m.shape) != (3, 3) or offset.dtype != torch.float32 or offset.numel() != 3:
        return None
    m, offset = m.contiguous(), offset.contiguous()
    out = torch.empty(x.shape, dtype=dtype)
    ok = lib.td_color_matrix_u8(x.data_ptr(), x.numel() // 3, int(bool(bgr)), m.data_ptr(), offset.data_ptr(),
                                _MATRIX_TYPES[dtype], out.data_ptr()) == 0
    return out if ok else None


_WARP_TYPES = {torch.uint8: 0, torch.int16: 1, torch.uint16: 2, torch.int32: 3, torch.float32: 4}
_WARP_INTERPS = {"nn": 0, "linear": 1, "cubic": 2}
_WARP_BORDERS = {"constant": 0, "replicate": 1, "reflect": 2, "reflect_101": 3, "wrap": 4}


def _warp_common(images: torch.Tensor, interp: str, fill: torch.Tensor | None, border: str,
                 out: torch.Tensor) -> tuple[ctypes.CDLL, torch.Tensor | None] | None:
    """The library and the fill as float64 when the helper takes these images, else None."""
    lib = CPU_WARP.load()
    if lib is None or images.dim() != 4 or images.dtype not in _WARP_TYPES or images.device.type != "cpu" \
            or out.dtype not in (images.dtype, torch.float32) or out.device.type != "cpu" or not out.is_contiguous() \
            or not images.is_contiguous() or interp not in _WARP_INTERPS or border not in _WARP_BORDERS \
            or images.numel() == 0:
        return None
    if fill is None:
        return lib, None
    f = fill.to(torch.float64).contiguous()
    return (lib, f) if f.numel() == int(images.shape[-1]) else None


def warp_sample(images: torch.Tensor, points: torch.Tensor, interp: str, fill: torch.Tensor | None,
                border: str, centred: bool, weight_bits: int | None, out: torch.Tensor) -> bool:
    """`functional.warp.sample` of contiguous CPU images (N, H, W, C) at float32 points (N, M, 2)
    (x, y) into `out` (N, M, C), bit for bit, without holding the GIL. `fill`: C values in the
    images' type, or None. False when it did nothing (not built, or arguments it does not take)."""
    got = _warp_common(images, interp, fill, border, out)
    n, h, w, c = (int(v) for v in images.shape)
    m = int(points.shape[1]) if points.dim() == 3 else -1
    if got is None or tuple(points.shape) != (n, m, 2) or points.dtype != torch.float32 \
            or points.device.type != "cpu" or not points.is_contiguous() or tuple(out.shape) != (n, m, c):
        return False
    lib, f = got
    return lib.td_warp_sample(images.data_ptr(), _WARP_TYPES[images.dtype], n, h, w, c, points.data_ptr(), m,
                              _WARP_INTERPS[interp], _WARP_BORDERS[border], None if f is None else f.data_ptr(),
                              int(bool(centred)), -1 if weight_bits is None else int(weight_bits), out.data_ptr(),
                              _WARP_TYPES[out.dtype]) == 0


def warp_matrix(images: torch.Tensor, matrices: torch.Tensor, interp: str, fill: torch.Tensor | None,
                border: str, centred: bool, weight_bits: int | None, out: torch.Tensor) -> bool:
    """`functional.warp.warp_matrix` of contiguous CPU images (N, H, W, C) by float32 matrices
    (N or 1, 2 or 3, 3) into `out` (N, out_h, out_w, C), bit for bit, without holding the GIL.
    False when it did nothing (not built, or arguments it does not take)."""
    got = _warp_common(images, interp, fill, border, out)
    n, h, w, c = (int(v) for v in images.shape)
    if got is None or matrices.dim() != 3 or int(matrices.shape[0]) not in (1, n) \
            or tuple(matrices.shape[1:]) not in ((2, 3), (3, 3)) or matrices.dtype != torch.float32 \
            or matrices.device.type != "cpu" or not matrices.is_contiguous() or out.dim() != 4 \
            or int(out.shape[0]) != n or int(out.shape[3]) != c:
        return False
    lib, f = got
    return lib.td_warp_matrix(images.data_ptr(), _WARP_TYPES[images.dtype], n, h, w, c, matrices.data_ptr(),
                              int(matrices.shape[0]), int(matrices.shape[1]), int(out.shape[1]), int(out.shape[2]),
                              _WARP_INTERPS[interp], _WARP_BORDERS[border], None if f is None else f.data_ptr(),
                              int(bool(centred)), -1 if weight_bits is None else int(weight_bits), out.data_ptr(),
                              _WARP_TYPES[out.dtype]) == 0


def distort_sample(images: torch.Tensor, px: torch.Tensor, py: torch.Tensor, linear: bool, fill: float) -> torch.Tensor | None:
    """`functional.distort.sample` of contiguous CPU images (N, H, W, C), uint8 or float32, at
    float32 points px, py (N or 1, H', W'), with `fill` already in the images' type
    (`distort.fill_in_type`), bit for bit, without holding the GIL; None when it did nothing."""
    lib = CPU_WARP.load()
    if lib is None or images.dim() != 4 or images.dtype not in (torch.uint8, torch.float32) \
            or images.device.type != "cpu" or not images.is_contiguous() or images.numel() == 0:
        return None
    n, h, w, c = (int(v) for v in images.shape)
    if px.dim() != 3 or px.shape != py.shape or int(px.shape[0]) not in (1, n) or px.dtype != torch.float32 \
            or py.dtype != torch.float32 or px.device.type != "cpu" or py.device.type != "cpu":
        return None
    px, py = px.contiguous(), py.contiguous()
    oh, ow = int(px.shape[1]), int(px.shape[2])
    out = torch.empty((n, oh, ow, c), dtype=images.dtype)
    ok = lib.td_distort_sample(images.data_ptr(), _WARP_TYPES[images.dtype], n, h, w, c, px.data_ptr(), py.data_ptr(),
                               int(px.shape[0]), oh, ow, int(bool(linear)), float(fill), out.data_ptr()) == 0
    return out if ok else None


def audio_resample(x: torch.Tensor, n_out: int, ratio: float, table: torch.Tensor, scale: float, center: float,
                   lobes: int, width: int, portable: bool = False) -> torch.Tensor | None:
    """`ops.audio_resample.resample` of CPU float32 (n, c) samples (n, c >= 1) with the spec's sinc
    `table`, `scale` and `center` (`sinc_table(lobes)`), torch's sums taken `width` floats a vector,
    bit for bit, without holding the GIL: (n_out, c) float32, or None when it did nothing.
    `portable` runs the kernel's baseline build where the CPU would take its AVX2 one (for tests)."""
    lib = AUDIO_RESAMPLE.load()
    if lib is None or x.dim() != 2 or x.dtype != torch.float32 or x.device.type != "cpu" or x.numel() == 0 \
            or table.dtype != torch.float32 or table.device.type != "cpu":
        return None
    x, table = x.contiguous(), table.contiguous()
    out = torch.empty((int(n_out), int(x.shape[1])), dtype=torch.float32)
    run = lib.td_audio_resample_portable if portable else lib.td_audio_resample
    ok = run(x.data_ptr(), int(x.shape[0]), int(x.shape[1]), out.data_ptr(), int(n_out), float(ratio),
             table.data_ptr(), table.numel(), float(scale), float(center), int(lobes), int(width)) == 0
    return out if ok else None
