"""Pixels of the formats `decode` does not hand to torchvision: through PIL (BMP, PNM's bilevel maps,
TIFF, WebP, JPEG 2000, CMYK JPEG, ...) and the TIFF reader, with the per-format rules by which
DALI 2.4's decoders differ from PIL's (gray formulas, CMYK, 16-bit BMP samples, the files DALI
hands to OpenCV). Each returns CHW, before colour conversion and range scaling.
"""
from __future__ import annotations

import io

import numpy as np
import torch

from .. import types
from ..functional.image import ANY, GRAY, apply_orientation
from . import headers as _headers
from . import tiff as _tiff

_jpeg_info = _headers.jpeg_info


def gray_of(rgb: np.ndarray, fmt: str, cmyk: bool = False, oriented: bool = False) -> np.ndarray | None:
    """GRAY of an 8-bit RGB image as DALI 2.4's decoder for that format computes it (each measured
    pixel for pixel on files of every kind): OpenCV's 14-bit fixed-point BT.601 for BMP, PNM and a
    TIFF whose orientation tag turns it (`oriented`), 15-bit fixed point for WebP and JPEG 2000,
    libtiff's path in float rounded half up for other TIFFs, the float BT.601 sum truncated for a
    CMYK JPEG (after its conversion to RGB) and a BMP with an alpha channel (`cmyk`); None: PIL's
    conversion."""
    if cmyk:
        r, g, b = (rgb[..., i].astype(np.float32) for i in range(3))
        luma = np.float32(0.299) * r + np.float32(0.587) * g + np.float32(0.114) * b
        return np.floor(luma).clip(0, 255).astype(np.uint8)
    if fmt in ("BMP", "PPM") or (fmt == "TIFF" and oriented):
        r, g, b = (rgb[..., i].astype(np.int32) for i in range(3))
        return ((r * 4899 + g * 9617 + b * 1868 + 8192) >> 14).astype(np.uint8)
    if fmt in ("WEBP", "JPEG2000"):
        r, g, b = (rgb[..., i].astype(np.int32) for i in range(3))
        return ((r * 9798 + g * 19235 + b * 3735 + 16384) >> 15).astype(np.uint8)
    if fmt == "TIFF":
        r, g, b = (rgb[..., i].astype(np.float32) for i in range(3))
        luma = np.float32(0.299) * r + np.float32(0.587) * g + np.float32(0.114) * b
        return np.floor(luma + np.float32(0.5)).clip(0, 255).astype(np.uint8)
    return None


_ORIENTATION_TAG = 0x0112
#: PIL's raw modes of 16-bit BMPs -> the bits OpenCV keeps of each 8-bit R, G, B (x << 3, x << 2)
_BMP_16_MASKS = {"BGR;16": (0xF8, 0xFC, 0xF8), "BGR;15": (0xF8, 0xF8, 0xF8)}
#: the transposition that takes an image turned upright from EXIF orientation k back to as stored
_UNDO_ORIENTATION = {2: "FLIP_LEFT_RIGHT", 3: "ROTATE_180", 4: "FLIP_TOP_BOTTOM", 5: "TRANSPOSE", 6: "ROTATE_90",
                     7: "TRANSVERSE", 8: "ROTATE_270"}


def _cmyk_rgb(a: np.ndarray, alpha: bool, opencv: bool = False) -> np.ndarray:
    """RGB of CMYK samples as DALI's readers compute it; `opencv`: OpenCV's version, k - (x * k >> 8)
    (DALI 2.4 hands a CMYK JPEG it turns by EXIF orientation to OpenCV: measured)."""
    k = 255 - a[..., 3:].astype(np.int32)
    if opencv:
        return (k - (a[..., :3].astype(np.int32) * k >> 8)).astype(np.uint8)
    rgb = (255 - a[..., :3].astype(np.int32)) * k // 255
    if alpha:
        rgb = np.concatenate([rgb, np.full_like(k, 255)], axis=-1)
    return rgb.astype(np.uint8)


def pil_decode(b: bytes, output_type: types.DALIImageType, adjust_orientation: bool) -> torch.Tensor:
    from PIL import Image, ImageOps
    im = Image.open(io.BytesIO(b), formats=_headers.PIL_FORMATS)
    fmt = str(im.format)
    tags = getattr(im, "tag_v2", None)  # a TIFF's tags
    stored = int(tags.get(_ORIENTATION_TAG, 1) or 1) if tags is not None else 1
    if fmt == "JPEG" and output_type == GRAY and im.mode == "RGB":
        im.draft("L", im.size)  # libjpeg's own gray (the Y plane), as DALI's; not the luma of RGB
    raw = im.tile[0].args[0] if fmt == "BMP" and im.tile and im.tile[0].args else None
    im.load()
    if raw in _BMP_16_MASKS:  # DALI's BMP reader (OpenCV) shifts 5/6-bit samples up; PIL scales them
        im = Image.fromarray(np.asarray(im) & np.array(_BMP_16_MASKS[raw], np.uint8))
    # Pillow 11+ turns a TIFF upright while loading it and drops its orientation tag; older ones
    # leave both to the caller (exif_transpose then finds the tag)
    upright = tags is not None and 2 <= stored <= 8 and _ORIENTATION_TAG not in im.tag_v2
    if adjust_orientation and not upright:
        im = ImageOps.exif_transpose(im)
    elif not adjust_orientation and upright:
        im = im.transpose(Image.Transpose[_UNDO_ORIENTATION[stored]])  # as stored, as DALI gives it
    cmyk = im.mode == "CMYK"
    opencv = cmyk and fmt == "JPEG" and adjust_orientation and 2 <= _jpeg_info(b).orientation <= 8
    if cmyk:  # DALI's readers (libjpeg-turbo, libtiff's RGBA one): (255 - x) * (255 - k) // 255; PIL
        # rounds (1 off on half the values where k > 0). A TIFF's ANY_DATA is that RGB and alpha 255
        im = Image.fromarray(_cmyk_rgb(np.asarray(im), fmt == "TIFF" and output_type == ANY, opencv))
    if im.mode == "F":  # 32-bit float samples (a TIFF): kept, 0..1 being the range, as DALI
        gray = torch.from_numpy(np.array(im, dtype=np.float32))[None]
        return gray if output_type in (GRAY, ANY) else gray.expand(3, -1, -1)
    if im.mode.startswith("I;16") or im.mode == "I":  # 16-bit gray: keep the depth
        a = np.asarray(im).astype(np.int64).clip(0, 65535).astype(np.uint16)
        gray = torch.from_numpy(a)[None]
        return gray if output_type in (GRAY, ANY) else gray.expand(3, -1, -1)
    if output_type == GRAY and im.mode not in ("1", "L", "LA"):
        rule = "BMP" if opencv else fmt  # OpenCV's 14-bit luma for what DALI hands to OpenCV
        gray = gray_of(np.asarray(im.convert("RGB")), rule, cmyk=(fmt == "JPEG" and cmyk and not opencv)
                     or (fmt == "BMP" and im.mode == "RGBA"), oriented=2 <= stored <= 8)
        if gray is not None:
            return torch.from_numpy(gray)[None]
    if output_type == GRAY or (output_type == ANY and im.mode == "1"):  # bilevel: gray, as stored
        mode = "L"
    elif output_type == ANY and im.mode in ("L", "LA", "RGBA"):
        mode = im.mode
    else:
        mode = "RGB"
    a = np.array(im.convert(mode))
    return torch.from_numpy(a.reshape(a.shape[0], a.shape[1], -1)).permute(2, 0, 1)


def tiff_decode(b: memoryview, output_type: types.DALIImageType,
                 adjust_orientation: bool) -> torch.Tensor | None:
    """CHW of a TIFF PIL would not hand over whole (more samples than its modes, 16-bit colour:
    see `tiff`); None for the TIFFs PIL reads as they are."""
    lay = _tiff.reads_here(b)
    if lay is None:
        return None
    want = "gray" if output_type == GRAY else "any" if output_type == ANY else "rgb"
    turned = adjust_orientation and 2 <= lay.orientation <= 8
    hwc = _tiff.decode(b, lay)
    if turned and lay.palette:  # DALI hands it to OpenCV, whose libtiff RGBA reader keeps the
        # colormap's high bytes; DALI widens that 8-bit image (colours or gray) to its 16 bits
        hwc = _tiff.to_channels((hwc >> 8).astype(np.uint8), lay, want, turned).astype(np.uint16) * 257
        return apply_orientation(torch.from_numpy(hwc).permute(2, 0, 1), lay.orientation)
    chw = torch.from_numpy(_tiff.to_channels(hwc, lay, want, turned)).permute(2, 0, 1)
    return apply_orientation(chw, lay.orientation) if adjust_orientation else chw


def premultiply(rgba: torch.Tensor, lay: _tiff.Layout, output_type: types.DALIImageType) -> torch.Tensor:
    """CHW of a `tiff.premultiplied` file from its stored RGBA: colours times alpha, rounded."""
    a = rgba.numpy().astype(np.int32)
    rgb = ((a[:3] * a[3:] + 127) // 255).astype(np.uint8)
    if output_type == ANY:
        return torch.from_numpy(np.concatenate([rgb, rgba[3:].numpy()]))
    if output_type == GRAY:
        hwc = np.ascontiguousarray(rgb.transpose(1, 2, 0))
        return torch.from_numpy(gray_of(hwc, "TIFF", oriented=2 <= lay.orientation <= 8))[None]
    return torch.from_numpy(rgb)
