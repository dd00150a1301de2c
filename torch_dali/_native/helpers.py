"""The C helpers: small plain-C libraries under `csrc/cpu`, each built on first use with the system
compiler (`build.CLibrary`) and called through ctypes, which releases the GIL during a call.

Each is optional: without a compiler (or with its variable set) `load()` gives None and its callers
run a pure-Python path with identical results. Declared here, with their C signatures, so that one
module knows every native library the package has (`torch_dali._native.status()` lists them).
"""
from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Sequence

import numpy as np

from .build import CLibrary

CSRC = Path(__file__).resolve().parent / "csrc"


def _host_io_signatures(lib: ctypes.CDLL) -> None:
    c_int, c_vp = ctypes.c_int, ctypes.c_void_p
    paths, i64p = ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_int64)
    intp = ctypes.POINTER(ctypes.c_int)
    lib.td_file_sizes.argtypes = [paths, c_int, i64p, intp]
    lib.td_read_files.argtypes = [paths, c_int, c_vp, i64p, i64p, i64p, intp]
    lib.td_image_infos.argtypes = [ctypes.POINTER(c_vp), i64p, c_int, ctypes.POINTER(ctypes.c_int32)]
    for f in (lib.td_file_sizes, lib.td_read_files, lib.td_image_infos):
        f.restype = c_int


def _jpeg_roi_signatures(lib: ctypes.CDLL) -> None:
    c_p, c_int, c_size = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    c_ip = ctypes.POINTER(ctypes.c_int)
    lib.tdj_header.argtypes = [c_p, c_size, c_ip, c_ip, c_ip, c_ip, c_ip, ctypes.c_char_p, c_int, c_int]
    lib.tdj_header.restype = c_int
    lib.tdj_decode_roi.argtypes = [c_p, c_size, c_int, c_int, c_int, c_int, c_int, c_p, c_size,
                                   ctypes.c_char_p, c_int]
    lib.tdj_decode_roi.restype = c_int


def _crop_windows_signatures(lib: ctypes.CDLL) -> None:
    d, vp = ctypes.c_double, ctypes.c_void_p
    lib.td_crop_windows.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int, vp, vp, d, d, d, d,
                                    ctypes.c_int, vp]
    lib.td_crop_windows.restype = ctypes.c_int


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

_MASK64 = (1 << 64) - 1


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
