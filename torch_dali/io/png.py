"""PNG decoding that cannot crash the process: chunk checks here, pixels from PIL.

torchvision 0.29's `decode_png` SIGSEGVs on any libpng error (a bad IDAT CRC, a bad zlib checksum,
...), also under `on_error="skip"`, so one corrupt PNG would end a training run. Here the chunk
layout and the critical chunks' CRCs are checked first (libpng refuses those files; PIL alone would
decode a bad IDAT CRC), then PIL decodes, raising Python exceptions on bad data. Results equal
torchvision's (libpng's) for valid files: the palette expanded, alpha dropped for RGB, gray
replicated, all 16 bits kept (PIL reads 16-bit color as 8 bits, so those are decoded twice, once
for the high and once for the low bytes; tests/test_data_png.py compares). GRAY from color is
libpng's `rgb_to_gray` as DALI 2.4 calls it (0.299 / 0.587, gamma-aware for gAMA / sRGB files):
equal to DALI's, where torchvision's coefficients differed by 1. libpng's warnings (e.g. "iCCP:
known incorrect sRGB profile", once per image) are gone: libpng is not involved.

Cost, 512x512 photos on a shared 2-core machine (15 paired rounds, one thread): 1.13-1.3x
torchvision's time (RGB 5.3 -> 6.4 ms, RGBA 6.1 -> 8.0, gray 2.9 -> 3.7, palette 2.1 -> 2.4), of
which the CRC check is 0.04-0.13 ms for a 130 kB file.
"""
from __future__ import annotations

import io
import struct
import zlib
from typing import Any

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHUNK = struct.Struct(">I4s")
# libpng's fixed-point rgb_to_gray coefficients for (0.299, 0.587), as DALI 2.4's decoder sets them
_RC, _GC = 29900 * 32768 // 100000, 58700 * 32768 // 100000
_BC = 32768 - _RC - _GC
_SRGB_GAMMA = 45455  # libpng's gamma of an sRGB file (x 100000)


#: most bytes deflate can inflate one compressed byte to (a 258-byte match in 2 bits), with room
#: for the zlib header and block overhead of a small stream
_INFLATE_RATIO, _INFLATE_SLACK = 1032, 1 << 16
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def raw_size(b: bytes | memoryview) -> int:
    """Bytes of filtered scanlines the IHDR of `b` calls for (each row: a filter byte, then its
    samples), Adam7's seven passes for an interlaced image."""
    w, h, depth, ctype, _, _, interlace = struct.unpack_from(">IIBBBBB", b, 16)
    bits = depth * {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(ctype, 4)
    if not interlace:
        return h * (1 + (w * bits + 7) // 8)
    total = 0
    for x0, y0, dx, dy in _ADAM7:
        pw, ph = (w - x0 + dx - 1) // dx, (h - y0 + dy - 1) // dy
        total += ph * (1 + (pw * bits + 7) // 8) if pw > 0 and ph > 0 else 0
    return total


def check_chunks(b: bytes | memoryview) -> int:
    """Raises ValueError when a chunk runs past the end of the data (truncated), a critical chunk
    (IHDR, PLTE, IDAT, IEND, ...: first letter upper case) fails its CRC, as libpng does, or the
    IDAT chunks are too short to inflate to the image's size (a few hundred bytes declaring
    millions of rows: PIL allocated the whole image, then filled what the stream held). Returns
    the file gamma as libpng reads it (x 100000; sRGB's 45455 when an sRGB chunk is there; 0 when
    none): gAMA / sRGB before PLTE and IDAT, first one only, out-of-range values ignored."""
    pos, n, gamma, srgb, late, idat = len(SIGNATURE), len(b), 0, False, False, 0
    while pos + 12 <= n:
        length, kind = _CHUNK.unpack_from(b, pos)
        end = pos + 12 + length
        name = kind.decode("latin-1")
        if end > n:
            raise ValueError(f"PNG data is truncated: chunk {name!r} at byte {pos} runs past the end "
                             f"({n} bytes)")
        if not kind[0] & 0x20 and zlib.crc32(b[pos + 4:end - 4]) != struct.unpack_from(">I", b, end - 4)[0]:
            raise ValueError(f"PNG chunk {name!r} at byte {pos} fails its CRC check; the data is corrupt")
        if kind in (b"PLTE", b"IDAT"):
            late = True
            idat += length if kind == b"IDAT" else 0
        elif kind == b"IEND":
            break
        elif not late and kind == b"gAMA" and length == 4 and not gamma:
            g = struct.unpack_from(">I", b, pos + 8)[0]
            gamma = g if 16 <= g <= 625000000 else 0
        elif not late and kind == b"sRGB" and length == 1 and b[pos + 8] <= 3:
            srgb = True
        pos = end
    else:
        if pos < n:
            raise ValueError(f"PNG data is truncated: a chunk header at byte {pos} runs past the end "
                             f"({n} bytes)")
    need = raw_size(b)
    if need > _INFLATE_RATIO * idat + _INFLATE_SLACK:
        raise ValueError(f"PNG image data is too short: {idat} compressed bytes cannot hold the {need} "
                         "bytes its header's size needs")
    return _SRGB_GAMMA if srgb else gamma


def _open(data: bytes, rawmode: str | None = None) -> Any:
    """The decoded PIL image. `rawmode` replaces PIL's unpacker (one with the same bytes per pixel,
    so the unfiltering is unchanged). Opened with the plugin class, not Image.open: the caller has
    checked `max_pixels`, and Image.open's decompression-bomb check (a global of PIL's, 179M
    pixels) would refuse images below our limit."""
    from PIL import PngImagePlugin
    im = PngImagePlugin.PngImageFile(io.BytesIO(data))
    if rawmode is not None:
        im.tile = [t._replace(args=rawmode) for t in im.tile]
    im.load()
    im.info.pop("transparency", None)  # not applied by libpng's RGB / gray output; PIL warns on it
    return im


def _hwc(a: np.ndarray) -> np.ndarray:
    return a[..., None] if a.ndim == 2 else a


def _wide(data: bytes, ctype: int) -> np.ndarray:
    """A 16-bit file's samples as stored, HWC uint16 (PIL itself keeps 8 bits of color samples)."""
    if ctype in (2, 6):  # decoded twice: the big-endian unpacker keeps the high bytes, the
        raw = "RGB" if ctype == 2 else "RGBA"  # little-endian one byte 1 of 2 (the low bytes)
        wide = np.asarray(_open(data, raw + ";16B")).astype(np.uint16)
        wide <<= 8  # in place: a 16-bit RGBA image is 8 bytes a pixel, each temporary as much
        wide |= np.asarray(_open(data, raw + ";16L"))
        return wide
    if ctype == 4:  # gray+alpha: 4 raw bytes a pixel, read as RGBA
        w = np.asarray(_open(data, "RGBA")).astype(np.uint16)
        return np.stack(((w[..., 0] << 8) | w[..., 1], (w[..., 2] << 8) | w[..., 3]), -1)
    return _hwc(np.asarray(_open(data)).astype(np.uint16))  # gray: PIL's I;16 is exact


def _narrow(data: bytes, mode: str, gamma: int) -> np.ndarray:
    """A file of up to 8 bits a sample, HWC uint8; PIL's conversions (in C) expand palettes and
    gray, drop alpha and scale 1/2/4-bit gray exactly as libpng."""
    im = _open(data)
    if mode == "gray":
        if im.mode == "P":  # libpng converts the expanded colors: the gray of each palette entry
            entries = np.asarray(im.getpalette("RGB") or [], np.uint8).reshape(-1, 3)[:256]
            table = np.zeros(256, np.uint8)  # indices past the palette: black, as libpng
            table[:len(entries)] = _gray(entries[None], gamma)[0, :, 0]
            return table[np.asarray(im)][..., None]
        if im.mode in ("RGB", "RGBA"):
            return _gray(np.asarray(im.convert("RGB") if im.mode == "RGBA" else im), gamma)
        return _hwc(np.asarray(im.convert("L") if im.mode != "L" else im))
    if mode == "any":
        return _hwc(np.asarray(im.convert({"P": "RGB", "1": "L"}.get(im.mode, im.mode))))
    return np.asarray(im if im.mode == "RGB" else im.convert("RGB"))


def _gamma_table(exponent: float) -> np.ndarray:
    """libpng's 8-bit gamma table (png_gamma_8bit_correct): 0 and 255 kept, the rest rounded."""
    v = np.arange(256, dtype=np.float64)
    t = np.floor(255 * np.power(v / 255, exponent) + 0.5).astype(np.int64)
    t[0], t[255] = 0, 255
    return t


def _gray(rgb: np.ndarray, gamma: int) -> np.ndarray:
    """libpng's rgb_to_gray: gray pixels (R = G = B) are kept; with a significant file gamma
    (more than 5% from 1) the sum is taken in linear light (8-bit: libpng's tables, equal to DALI
    2.4; 16-bit: in floating point, within 2 of libpng's tables), else truncated (8-bit) or
    rounded (16-bit) as libpng does. Computed a band of rows at a time: the int64 / float64 work
    arrays of a whole image took 40 bytes a pixel (11 GB at max_pixels)."""
    out = np.empty(rgb.shape[:-1] + (1,), rgb.dtype)
    step = max(1, (1 << 20) // max(1, rgb[0].size))
    for y in range(0, rgb.shape[0], step):
        out[y:y + step] = _gray_band(rgb[y:y + step], gamma)
    return out


def _gray_band(rgb: np.ndarray, gamma: int) -> np.ndarray:
    r, g, b = (rgb[..., k].astype(np.int64) for k in range(3))
    wide = rgb.dtype == np.uint16
    if gamma and abs(gamma - 100000) > 5000:
        if wide:
            lin = [np.power(c / 65535.0, 100000 / gamma) for c in (r, g, b)]
            s = (_RC * lin[0] + _GC * lin[1] + _BC * lin[2]) / 32768
            y = np.floor(65535 * np.power(s, gamma * 1e-5) + 0.5).astype(np.int64)
        else:
            to_1 = _gamma_table(np.floor(1e10 / gamma + 0.5) * 1e-5)
            from_1 = _gamma_table(gamma * 1e-5)
            y = from_1[(_RC * to_1[r] + _GC * to_1[g] + _BC * to_1[b] + 16384) >> 15]
    else:
        y = _RC * r + _GC * g + _BC * b
        y = (y + 16384 >> 15) if wide else y >> 15
    y = np.where((r == g) & (g == b), r, y)
    return y.astype(rgb.dtype)[..., None]


def decode(data: bytes | memoryview, mode: str) -> np.ndarray:
    """A PNG as HWC uint8 (uint16 for 16-bit files): `mode` "rgb" (3 channels), "gray" (1) or
    "any" (as stored; a palette expanded to RGB). No EXIF orientation is applied. Raises
    ValueError saying what is wrong with data it cannot decode."""
    if bytes(data[:8]) != SIGNATURE or len(data) < 33 or bytes(data[12:16]) != b"IHDR":
        raise ValueError("not a PNG (no signature and IHDR)")
    gamma = check_chunks(data)
    depth, ctype = data[24], data[25]
    try:  # tensors must not view PIL's read-only bytes: np.require copies those
        if depth != 16:
            return np.require(_narrow(bytes(data), mode, gamma), requirements="W")
        a = _wide(bytes(data), ctype)
    except (OSError, SyntaxError, ValueError, EOFError) as e:  # what PIL raises on bad data
        raise ValueError(f"corrupt PNG data: {e}") from None
    if mode == "any":
        out = a
    elif mode == "gray":
        out = a[..., :1] if a.shape[2] <= 2 else _gray(a, gamma)
    else:
        out = a[..., :3] if a.shape[2] >= 3 else np.repeat(a[..., :1], 3, axis=2)
    return np.require(out, requirements="W")
