"""Region-of-interest JPEG decoding on the CPU: decode only the rows and columns a crop needs.

A small C library over libjpeg(-turbo) (`_native/csrc/cpu/jpeg_roi.c`: `jpeg_crop_scanline` for
columns, `jpeg_skip_scanlines` for rows, libjpeg's default ISLOW IDCT and fancy upsampling), so the
pixels equal the same window of a full decode. It is built on first use with the system C compiler
(`cc -O2 -shared -fPIC ... -ljpeg`, see `torch_dali._native.build`) into `$TORCH_DALI_EXT_DIR` (default
`~/.cache/torch_dali`), named by a hash of the source and flags, and loaded with ctypes: ctypes
releases the GIL during the call, so the executor's threads decode in parallel. Without a compiler
or libjpeg, `available()` is False, `unavailable_reason()` says why, and callers keep their
full-decode path.
"""
from __future__ import annotations

import ctypes
import struct

import numpy as np
import torch

from .._native import helpers
from ..errors import DataError
from . import headers

_OK, _ERROR, _UNSUPPORTED, _BAD_ARGS = 0, 1, 2, 3
_MSG_LEN = 256


class Unsupported(DataError):
    """The JPEG is valid but not for this decoder (CMYK / YCCK): use the full decoder."""


LIB = helpers.JPEG_ROI
_load = LIB.load


def available() -> bool:
    """Whether the ROI decoder is built and loaded (builds it on the first call)."""
    return _load() is not None


def unavailable_reason() -> str:
    """Why `available()` is False ("" when it is True or was not asked yet)."""
    return LIB.reason


def _buffer(data: torch.Tensor | bytes | np.ndarray) -> tuple[int, int, object]:
    """(address, length, keep-alive) of the encoded bytes."""
    if isinstance(data, torch.Tensor):
        if data.dtype != torch.uint8 or data.dim() != 1:
            raise DataError(f"expected encoded JPEG bytes as a 1-D uint8 tensor, got {data.dtype} "
                            f"of shape {tuple(data.shape)}")
        if data.device.type != "cpu" or not data.is_contiguous():
            data = data.cpu().contiguous()
        return data.data_ptr(), data.numel(), data
    if isinstance(data, np.ndarray):
        a = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        return a.ctypes.data, a.size, a
    b = bytes(data)
    buf = ctypes.create_string_buffer(b, len(b))
    return ctypes.addressof(buf), len(b), buf


def _message(msg: ctypes.Array) -> str:
    return msg.value.decode("utf-8", "replace") or "unknown libjpeg error"


def jpeg_header(data: torch.Tensor | bytes | np.ndarray, lenient: bool = False) -> tuple[int, int, int, bool]:
    """(height, width, components, progressive) from libjpeg's header parse; raises DataError.
    `lenient`: libjpeg's warnings (extraneous bytes, ...) are ignored, as torchvision's decoder
    ignores them; by default they are errors, as in `decode_roi`."""
    lib = _load()
    if lib is None:
        raise RuntimeError(f"the JPEG ROI decoder is not available: {LIB.reason}")
    ptr, n, keep = _buffer(data)
    w, h, c, cs, prog = (ctypes.c_int() for _ in range(5))
    msg = ctypes.create_string_buffer(_MSG_LEN)
    rc = lib.tdj_header(ptr, n, ctypes.byref(w), ctypes.byref(h), ctypes.byref(c), ctypes.byref(cs),
                        ctypes.byref(prog), msg, _MSG_LEN, int(lenient))
    del keep
    if rc != _OK:
        raise DataError(f"corrupt JPEG header: {_message(msg)}")
    return h.value, w.value, c.value, bool(prog.value)


def _view(keep: object, data: object) -> bytes | memoryview:
    """The encoded bytes `_buffer` kept alive, without a copy."""
    if isinstance(keep, torch.Tensor):
        return memoryview(keep.numpy())
    return memoryview(keep) if isinstance(keep, np.ndarray) else bytes(data)  # type: ignore[arg-type]


def _checked_window(b: bytes | memoryview, window: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """The window as ints inside the image, checked before anything is allocated: ctypes would
    wrap a value past the C int range into another, valid window, and a window near INT_MAX
    once overflowed the C check."""
    y, x, hh, ww = (int(v) for v in window)
    if hh <= 0 or ww <= 0:
        raise ValueError(f"crop window {tuple(window)} is empty")
    try:
        info = headers.jpeg_info(b)
    except (ValueError, struct.error) as e:
        raise DataError(f"corrupt JPEG header: {e}") from None
    if y < 0 or x < 0 or hh > info.height - y or ww > info.width - x:
        raise ValueError(f"decode_roi: crop window {(y, x, hh, ww)} is outside the image "
                         f"({info.height}x{info.width})")
    return y, x, hh, ww


def decode_roi(data: torch.Tensor | bytes | np.ndarray,
               window: tuple[int, int, int, int] | None = None, gray: bool = False,
               out: torch.Tensor | None = None, fast_idct: bool = False) -> torch.Tensor:
    """Decodes rows [y, y+h) and columns [x, x+w) of a JPEG (`window=(y, x, h, w)`; None: all of
    it) to an (h, w, 3) RGB or (h, w, 1) gray uint8 tensor, pixel-identical to cropping a full
    libjpeg decode (with `fast_idct`, one made with libjpeg's JDCT_IFAST, as DALI's
    `use_fast_idct`). No EXIF orientation is applied.

    Raises `Unsupported` (a DataError) for CMYK/YCCK JPEGs, DataError with libjpeg's message for
    corrupt or truncated data, ValueError for a window outside the image."""
    lib = _load()
    if lib is None:
        raise RuntimeError(f"the JPEG ROI decoder is not available: {LIB.reason}")
    ptr, n, keep = _buffer(data)
    c = 1 if gray else 3
    if window is None:
        hh, ww = jpeg_header(data)[:2]
        y = x = 0
    else:
        y, x, hh, ww = _checked_window(_view(keep, data), window)
    if out is None:
        out = torch.empty((hh, ww, c), dtype=torch.uint8)
    elif out.shape != (hh, ww, c) or out.dtype != torch.uint8 or not out.is_contiguous():
        raise ValueError(f"`out` must be a contiguous uint8 tensor of shape {(hh, ww, c)}")
    msg = ctypes.create_string_buffer(_MSG_LEN)
    rc = lib.tdj_decode_roi_dct(ptr, n, y, x, hh, ww, 1 if gray else 0, out.data_ptr(), out.numel(), msg,
                                _MSG_LEN, 1 if fast_idct else 0)
    del keep
    if rc == _OK:
        return out
    if rc == _UNSUPPORTED:
        raise Unsupported(f"cannot decode this JPEG region by region: {_message(msg)}")
    if rc == _BAD_ARGS:
        raise ValueError(f"decode_roi: {_message(msg)} (window {(y, x, hh, ww)})")
    raise DataError(f"corrupt JPEG data: {_message(msg)}")
