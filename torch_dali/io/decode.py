"""Image decoding (the spec for `decoders.image*`): encoded bytes -> HWC tensors, plus a header-only
size probe.

CPU decoding uses torchvision's libjpeg-turbo binding for JPEGs (measured ~1.3x faster than PIL for
500x375 q90 JPEGs on 2 cores, and pixel-identical to DALI 2.4's CPU decoder, fancy upsampling
included); PNGs go through `png` (checked chunks, then PIL: torchvision's libpng binding crashes the
process on corrupt PNGs); other formats (BMP, TIFF, ...) through PIL. Truncated JPEG/PNG data is an
error, as in DALI, never a silently grey-padded image. A header declaring more than `max_pixels`
pixels is refused before anything is allocated (a 1 kB file may claim 60000x60000: 10 GB of RGB),
and so is a header that cannot be read (`headers` reads JPEG markers as libjpeg does).
"""
from __future__ import annotations

import os
import struct
import threading
from typing import Any, Callable

import numpy as np
import torch

from .. import types
from ..errors import DataError
from ..functional.image import (ANY, BGR, GRAY, RGB, YCBCR, apply_orientation, convert_range,  # noqa: F401
                               to_hwc, to_output)
from . import headers as _headers
from . import host_io
from . import jpeg_roi as _jpeg_roi
from . import png as _png
from . import pnm as _pnm
from . import tiff as _tiff
from .decode_formats import gray_of, pil_decode, premultiply, tiff_decode  # noqa: F401
from .headers import ImageInfo

# torchvision's libjpeg-turbo / nvJPEG kernels, called as the torch ops they register (the Python
# wrappers add a deprecation warning per call in torchvision 0.29). Imported on first use:
# importing torchvision imports torch._dynamo, ~2.3 s that `import torch_dali` should not cost.
_UNSET: Any = object()
_tv_decode_jpeg: Any = _UNSET  # torchvision's decode_jpeg op, or None without torchvision
_tv_ops: Any = _UNSET
_tv_lock = threading.Lock()


def tv_image_ops() -> Any:
    """torchvision's image op library (`torch.ops.image`), or None without torchvision."""
    global _tv_ops, _tv_decode_jpeg
    if _tv_ops is _UNSET:
        with _tv_lock:
            if _tv_ops is _UNSET:
                try:
                    import torchvision.io  # noqa: F401  (loads the `image` op library)
                    ops: Any = torch.ops.image
                    jpeg = ops.decode_jpeg
                except (ImportError, AttributeError, RuntimeError):  # pragma: no cover - PIL does everything
                    ops = jpeg = None
                if _tv_decode_jpeg is _UNSET:
                    _tv_decode_jpeg = jpeg
                _tv_ops = ops
    return _tv_ops


def _jpeg_decoder() -> Any:
    if _tv_decode_jpeg is _UNSET:
        tv_image_ops()
    return _tv_decode_jpeg


TV_GRAY, TV_RGB = 1, 3  # torchvision's ImageReadMode values


def jpeg_round_trip(image: torch.Tensor, quality: int) -> torch.Tensor | None:
    """An HWC uint8 RGB image (CPU) encoded as a baseline JPEG at `quality` (1..100) by
    libjpeg-turbo and decoded back (torchvision's codec ops: 4:2:0, integer DCT, fancy upsampling),
    which is what DALI 2.4's CPU jpeg_compression_distortion gives (its OpenCV runs the same
    library with the same defaults: equal bits, measured). None without torchvision's encoder."""
    ops = tv_image_ops()
    if ops is None or not hasattr(ops, "encode_jpeg") or _jpeg_decoder() is None:
        return None
    encoded = ops.encode_jpeg(image.permute(2, 0, 1).contiguous(), int(quality))
    return _jpeg_decoder()(encoded, TV_RGB, False).permute(1, 2, 0)

#: element types the decoders can produce (DALI 2.4 also accepts these; values are range-scaled)
DECODE_DTYPES = (types.DALIDataType.UINT8, types.DALIDataType.UINT16, types.DALIDataType.INT16,
                 types.DALIDataType.FLOAT, types.DALIDataType.INT8, types.DALIDataType.INT32,
                 types.DALIDataType.UINT32)


# header parsing lives in `headers`
_exif_orientation = _headers.exif_orientation
_jpeg_info = _headers.jpeg_info
_png_info = _headers.png_info
_pil_info = _headers.pil_info


def _as_bytes(data: bytes | torch.Tensor | np.ndarray) -> bytes | memoryview:
    """A zero-copy byte view of a uint8 tensor / array."""
    if isinstance(data, torch.Tensor):
        data = data.detach().cpu().contiguous().numpy()
    if isinstance(data, np.ndarray):
        return memoryview(np.ascontiguousarray(data).view(np.uint8).reshape(-1))
    return bytes(data)


def _header(b: bytes | memoryview) -> ImageInfo:
    if len(b) == 0:
        raise ValueError("the data is empty (0 bytes)")
    head = bytes(b[:8])
    if head[:2] == b"\xff\xd8":
        return _jpeg_info(b)
    if head == _png.SIGNATURE:
        return _png_info(b)
    lay = _tiff.reads_here(b)
    if lay is not None:
        return ImageInfo("tiff", lay.height, lay.width, lay.channels,
                         lay.orientation if 1 <= lay.orientation <= 8 else 1, bit_depth=lay.depth)
    return _pil_info(b)


def peek_image_info(data: bytes | torch.Tensor | np.ndarray, source: str = "") -> ImageInfo:
    """Parses only the header (JPEG SOF/EXIF, PNG IHDR/eXIf, ...); raises DataError if unreadable."""
    try:
        return _header(data if isinstance(data, bytes) else _as_bytes(data))
    except Exception as e:
        raise DataError(f"cannot read the image header of {source or 'sample'}: {_reason(e)}") from None


def peek_image_infos(datas: list[torch.Tensor], sources: list[str] | None = None) -> list[ImageInfo | None]:
    """`peek_image_info` for a batch; None where the header is unreadable. JPEG and PNG headers are
    parsed by one C call for the whole batch (`host_io`) when it is built, the rest here."""
    infos = host_io.image_infos(datas) if host_io.available() else [None] * len(datas)
    for i, info in enumerate(infos):
        if info is None:
            try:
                infos[i] = peek_image_info(datas[i], sources[i] if sources and i < len(sources) else "")
            except DataError:
                pass
    return infos


def oriented_size(info: ImageInfo) -> tuple[int, int]:
    """(height, width) after EXIF orientation: orientations 5..8 swap the axes."""
    return (info.width, info.height) if info.orientation >= 5 else (info.height, info.width)


def output_channels(info: ImageInfo, output_type: types.DALIImageType) -> int:
    if output_type == GRAY:
        return 1
    if output_type == ANY:
        return 3 if info.channels == 4 and info.format == "jpeg" else info.channels  # CMYK -> RGB
    return 3


def peek_image_shape(data: bytes | torch.Tensor | np.ndarray,
                     output_type: types.DALIImageType = RGB,
                     adjust_orientation: bool = True) -> tuple[int, int, int]:
    """(H, W, C) of what `decoders.image` would return, from the header alone (DALI's
    `peek_image_shape`: C is 3 for RGB whatever the file stores; EXIF orientation applied)."""
    info = peek_image_info(data)
    h, w = oriented_size(info) if adjust_orientation else (info.height, info.width)
    return h, w, output_channels(info, output_type)


# -- CPU decoding ----------------------------------------------------------------------------------

def _env_scans(default: int = 256) -> int:
    """DALI_MAX_JPEG_SCANS when it is a positive integer (DALI's own setting), else DALI's 256."""
    raw = os.environ.get("DALI_MAX_JPEG_SCANS", "")
    return int(raw) if raw.isascii() and raw.isdigit() and int(raw) > 0 else default


#: default `max_pixels` of the decoders: 2**28 pixels (16384x16384), 768 MiB as RGB uint8
MAX_PIXELS = 1 << 28

#: Most scans (SOS markers) a progressive JPEG may have; None: no limit. Each scan makes libjpeg
#: pass over every block of the image, and a scan can be a few bytes: 1,000 scans of a 4096x4096
#: image fit in 68 kB and took 4.5 s to decode. libjpeg's standard progression writes 10 scans (6
#: for gray); common encoders stay within a few dozen. DALI's limit: 256, or its environment
#: variable DALI_MAX_JPEG_SCANS, read here too. Read at every check: assign
#: `torch_dali.io.decode.MAX_JPEG_SCANS` to change it for all decoders, or pass `max_scans`.
MAX_JPEG_SCANS: int | None = _env_scans()

#: Tiles a JPEG 2000 image may have beyond one per 4096 pixels: OpenJPEG sets up each tile, so
#: 65,535 tiles of one pixel (a 100-byte file) took 8 s to fail here (DALI 2.4: 1.6 s). Tiles of a
#: real image are 128 pixels a side or more; 2**28 pixels in 64x64 tiles still pass.
MAX_J2K_TILES = 4096


def check_pixels(data: torch.Tensor, max_pixels: int | None, source: str = "",
                 op: str = "ImageDecoder", info: ImageInfo | None = None,
                 max_scans: int | None = None) -> None:
    """Raises DataError when the header declares more than `max_pixels` pixels, when a progressive
    JPEG has more than `max_scans` scans (None: MAX_JPEG_SCANS), or when the header cannot be read:
    an image whose size is unknown is not decoded, so no header gets past the limit."""
    scans = MAX_JPEG_SCANS if max_scans is None else max_scans
    if max_pixels is None and scans is None:
        return
    where = source or "sample"
    if info is None:
        try:
            info = _header(_as_bytes(data))
        except Exception as e:
            raise DataError(f"{op}: cannot decode {where}: {_reason(e)}") from None
    if max_pixels is not None and info.height * info.width > max_pixels:
        raise DataError(f"{op}: {where} declares {info.width}x{info.height} pixels; "
                        f"more than the limit `max_pixels` ({max_pixels})")
    if scans is not None and info.format == "jpeg" and (info.progressive or info.multi_scan) \
            and _headers.jpeg_scans(_as_bytes(data), scans) > scans:
        kind = "progressive" if info.progressive else "multi-scan"
        raise DataError(f"{op}: {where} is a {kind} JPEG of more than {scans} scans, the limit "
                        "(torch_dali.io.decode.MAX_JPEG_SCANS): each scan is a pass over "
                        "the whole image")
    if info.format == "jpeg2000":
        tiles = _headers.jpeg2000_tiles(_as_bytes(data))
        if tiles is not None and tiles > max(MAX_J2K_TILES, info.height * info.width // 4096):
            raise DataError(f"{op}: {where} is a JPEG 2000 image of {tiles} tiles for {info.width}x"
                            f"{info.height} pixels; more than {MAX_J2K_TILES} tiles need 4096 pixels each")


def _reason(e: BaseException) -> str:
    if "cannot identify image file" in str(e):  # PIL names its BytesIO, not the data
        return "not an image (no JPEG, PNG, BMP, TIFF, ... signature)"
    msg = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
    if ".cpp:" in msg:  # torchvision prefixes "decode_jpeg, /path/file.cpp:171, <reason>"
        msg = msg.split(", ", 2)[-1]
    return msg


def decode_chw(data: torch.Tensor, output_type: types.DALIImageType = RGB,
               adjust_orientation: bool = True, source: str = "", op: str = "ImageDecoder",
               max_pixels: int | None = MAX_PIXELS, *, fast_idct: bool = False) -> torch.Tensor:
    """The whole image as decoded, CHW (before color conversion, range scaling and copy to HWC);
    `from_chw` finishes it. Raises DataError naming `source` as `decode_image` does."""
    return _decode_chw(data, output_type, adjust_orientation, source, op, max_pixels, fast_idct)


def from_chw(chw: torch.Tensor, output_type: types.DALIImageType = RGB,
             dtype: torch.dtype = torch.uint8,
             window: tuple[int, int, int, int] | None = None) -> torch.Tensor:
    """What `decode_image` (window None) or `decode_image_crop` returns, from `decode_chw`'s image."""
    return to_output(chw, output_type, window, dtype)


def _decode_chw(data: torch.Tensor, output_type: types.DALIImageType,
                adjust_orientation: bool, source: str, op: str,
                max_pixels: int | None = None, fast_idct: bool = False) -> torch.Tensor:
    if not isinstance(data, torch.Tensor) or data.dtype != torch.uint8 or data.dim() != 1:
        what = f"{data.dtype} tensor of shape {tuple(data.shape)}" if isinstance(data, torch.Tensor) \
            else type(data).__name__
        raise DataError(f"{op}: cannot decode {source or 'sample'}: expected encoded bytes as a 1-D "
                        f"uint8 tensor, got a {what}")
    data = data.cpu().contiguous()
    check_pixels(data, max_pixels, source, op)
    if fast_idct:  # DALI's use_fast_idct: libjpeg's JDCT_IFAST (torchvision's decoder is ISLOW only)
        chw = _fast_idct_decode(data, output_type, adjust_orientation)
        if chw is not None:
            return chw
    try:
        if data.numel() == 0:
            raise ValueError("the data is empty (0 bytes)")
        head = bytes(data[:8].tolist())
        jpeg = _jpeg_decoder() if head[:2] == b"\xff\xd8" else None
        if jpeg is not None:
            info = _jpeg_info(_as_bytes(data))
            if info.channels != 4:  # CMYK goes to PIL below: torchvision rounds its conversion to RGB
                mode = TV_GRAY if output_type == GRAY or (output_type == ANY and info.channels == 1) else TV_RGB
                # the orientation DALI reads (`headers`): torchvision's missed an Exif APP1 after an XMP one
                chw = jpeg(data, mode, False)
                return apply_orientation(chw, info.orientation) if adjust_orientation else chw
        if head == _png.SIGNATURE:  # never torchvision's decode_png: it SIGSEGVs on corrupt data
            b = _as_bytes(data)
            hwc = _png.decode(b, "gray" if output_type == GRAY else "any" if output_type == ANY else "rgb")
            chw = torch.from_numpy(hwc).permute(2, 0, 1)
            return apply_orientation(chw, _png_info(b).orientation) if adjust_orientation else chw
        if _pnm.handles(head):  # not PIL: it scales samples to maxval, which DALI does not
            hwc = _pnm.decode(_as_bytes(data), "gray" if output_type == GRAY else "any" if output_type == ANY else "rgb")
            return torch.from_numpy(np.require(hwc, requirements="W")).permute(2, 0, 1)
        if head[:4] in _tiff.MAGIC and (lay := _tiff.premultiplied(_as_bytes(data), adjust_orientation)):
            rgba = tiff_decode(_as_bytes(data), ANY, adjust_orientation)
            if rgba is None:
                rgba = pil_decode(data.numpy().tobytes(), ANY, adjust_orientation)
            return premultiply(rgba, lay, output_type)
        if head[:4] in _tiff.MAGIC:
            chw = tiff_decode(_as_bytes(data), output_type, adjust_orientation)
            if chw is not None:
                return chw
        return pil_decode(data.numpy().tobytes(), output_type, adjust_orientation)
    except DataError:
        raise
    except Exception as e:  # RuntimeError from torchvision, OSError / UnidentifiedImageError from PIL
        raise DataError(f"{op}: cannot decode {source or 'sample'}: {_reason(e)}") from None


def _roi_plan(data: torch.Tensor, output_type: types.DALIImageType,
              adjust_orientation: bool) -> tuple[ImageInfo, bool] | None:
    """(header, gray?) when the region decoder (`jpeg_roi`, pixel-identical to torchvision's) can take
    this sample: an 8-bit gray/color JPEG needing no EXIF rotation; None -> the reference path."""
    if not (isinstance(data, torch.Tensor) and data.dtype == torch.uint8 and data.dim() == 1
            and data.device.type == "cpu" and data.numel() > 4 and _jpeg_roi.available()):
        return None
    b = _as_bytes(data)
    if b[0] != 0xFF or b[1] != 0xD8:
        return None
    try:
        info = _jpeg_info(b)
    except (ValueError, struct.error):
        return None
    if info.channels not in (1, 3) or info.bit_depth != 8 or (adjust_orientation and info.orientation != 1):
        return None
    return info, output_type == GRAY or (output_type == ANY and info.channels == 1)


def _roi_decode(data: torch.Tensor, gray: bool, window: tuple[int, int, int, int] | None,
                fast_idct: bool = False) -> torch.Tensor | None:
    """CHW view of the decoded window; None when the region decoder refuses the data (corrupt,
    truncated, CMYK, ...): the reference decoder then decides, error message included."""
    try:
        return _jpeg_roi.decode_roi(data if data.is_contiguous() else data.contiguous(), window,
                                    gray, fast_idct=fast_idct).permute(2, 0, 1)
    except (DataError, ValueError):
        return None


def _fast_idct_decode(data: torch.Tensor, output_type: types.DALIImageType,
                      adjust_orientation: bool) -> torch.Tensor | None:
    """A whole 8-bit gray/colour JPEG decoded with JDCT_IFAST; None for anything else (other
    formats, CMYK, corrupt data: the reference path decides). DALI 2.4 (measured) decodes a JPEG
    whose EXIF orientation it applies with the default IDCT: so does this (None)."""
    plan = _roi_plan(data, output_type, adjust_orientation)
    return None if plan is None else _roi_decode(data, plan[1], None, fast_idct=True)


def decode_image(data: torch.Tensor, output_type: types.DALIImageType = RGB,
                 dtype: torch.dtype = torch.uint8, adjust_orientation: bool = True,
                 source: str = "", op: str = "ImageDecoder",
                 max_pixels: int | None = MAX_PIXELS, *, fast_idct: bool = False) -> torch.Tensor:
    """Decodes one encoded image (1-D uint8 tensor) to an HWC tensor of `dtype` on the CPU.

    Raises DataError naming `source` for empty, corrupt, truncated or unknown data, and for a
    header declaring more than `max_pixels` pixels (None: no limit)."""
    # (jpeg_roi's whole-image decode measured no faster than torchvision's: 0.58 ms both)
    chw = _decode_chw(data, output_type, adjust_orientation, source, op, max_pixels, fast_idct)
    return to_output(chw, output_type, None, dtype)


def decode_image_crop(data: torch.Tensor, window_fn: Callable[[int, int], tuple[int, int, int, int]],
                      output_type: types.DALIImageType = RGB,
                      dtype: torch.dtype = torch.uint8, adjust_orientation: bool = True,
                      source: str = "", op: str = "ImageDecoderRandomCrop",
                      max_pixels: int | None = MAX_PIXELS, *, fast_idct: bool = False) -> torch.Tensor:
    """Decodes and crops to `window_fn(H, W) -> (y, x, h, w)` of the (oriented) image. Pixels equal
    the crop of `decode_image`. Only the crop is converted and copied to HWC; for most JPEGs only
    the crop is decoded (`jpeg_roi`)."""
    plan = _roi_plan(data, output_type, adjust_orientation)
    if plan is not None:
        info, gray = plan
        check_pixels(data, max_pixels, source, op, info)
        window = window_fn(info.height, info.width)  # drawn once: a fallback reuses it
        chw = _roi_decode(data, gray, window, fast_idct)
        if chw is not None:
            return to_output(chw, output_type, None, dtype)
        chw = _decode_chw(data, output_type, adjust_orientation, source, op, None, fast_idct)
        return to_output(chw, output_type, window, dtype)
    chw = _decode_chw(data, output_type, adjust_orientation, source, op, max_pixels, fast_idct)
    y, x, h, w = window_fn(int(chw.shape[1]), int(chw.shape[2]))
    return to_output(chw, output_type, (y, x, h, w), dtype)
