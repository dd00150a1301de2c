"""Image headers without decoding: JPEG (frame size, EXIF orientation, scan count), PNG (IHDR, eXIf),
other formats through PIL's lazy open.

The JPEG walk finds markers as libjpeg's `next_marker` does: bytes that are not a marker are
skipped (libjpeg warns "extraneous bytes before marker" and carries on), and so are fill 0xFF bytes
and 0xFF00 pairs. The size read here is then the size libjpeg decodes: one stray 0x00 after SOI
once made this parse give up while libjpeg went on to decode the declared 20000x20000 pixels.
`_native/csrc/cpu/host_io.c` mirrors `jpeg_info`, `png_info` and `exif_orientation` branch by
branch (tests/test_host_io.py holds them to each other).
"""
from __future__ import annotations

import io
import struct
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ImageInfo:
    """What the header says: stored size (before EXIF orientation) and how the image is coded."""

    format: str  # "jpeg", "png", "bmp", "gif", or PIL's format name
    height: int
    width: int
    channels: int  # as stored: 1 gray, 2 gray+alpha, 3 color (palette too), 4 RGBA / CMYK
    orientation: int = 1  # EXIF orientation, 1..8
    progressive: bool = False  # JPEG: progressive or arithmetic/lossless (not baseline)
    bit_depth: int = 8
    # JPEG, sequential: the first scan leaves components to later scans, so the decoder keeps the
    # whole image's coefficients and every scan is another pass (a few bytes each: see jpeg_scans)
    multi_scan: bool = False


def exif_orientation(tiff: bytes | memoryview) -> int:
    """Orientation tag (0x0112) of IFD0 in a TIFF-structured EXIF block; 1 when absent/unreadable.
    The first 16 bits of the value field are read whatever the entry's type says, as DALI 2.4 (and
    libjpeg-turbo's decoders) read it: a LONG 6 of a little-endian block is 6, of a big-endian
    one 0 (measured: BYTE, SHORT, SSHORT, LONG, SLONG, either byte order)."""
    order = bytes(tiff[:2])
    if len(tiff) < 8 or order not in (b"II", b"MM"):
        return 1
    e = "<" if order == b"II" else ">"
    ifd = struct.unpack_from(e + "I", tiff, 4)[0]
    if ifd + 2 > len(tiff):
        return 1
    n = struct.unpack_from(e + "H", tiff, ifd)[0]
    for k in range(n):
        off = ifd + 2 + 12 * k
        if off + 12 > len(tiff):
            break
        if struct.unpack_from(e + "H", tiff, off)[0] == 0x0112:
            v = struct.unpack_from(e + "H", tiff, off + 8)[0]
            return v if 1 <= v <= 8 else 1
    return 1


# -- JPEG ------------------------------------------------------------------------------------------

class _Markers:
    """libjpeg's next_marker over a buffer: `after(pos)` is the first marker whose 0xFF lies at or
    after `pos`, as (code, position after the code), or None. A marker right at `pos` is read
    directly; otherwise every marker position of the buffer is found once with NumPy (~0.1 ms for
    150 kB), so skipping garbage or entropy-coded data costs no Python loop per byte."""

    __slots__ = ("b", "_codes")

    def __init__(self, b: bytes | memoryview) -> None:
        self.b = b
        self._codes: np.ndarray | None = None

    def after(self, pos: int) -> tuple[int, int] | None:
        b = self.b
        if pos + 1 < len(b) and b[pos] == 0xFF and b[pos + 1] not in (0x00, 0xFF):
            return b[pos + 1], pos + 2
        if self._codes is None:  # positions of code bytes: after a 0xFF, neither 0x00 nor 0xFF
            a = np.frombuffer(b, np.uint8)
            code = a[1:]
            self._codes = np.flatnonzero((a[:-1] == 0xFF) & (code != 0x00) & (code != 0xFF)) + 1
        k = int(np.searchsorted(self._codes, pos + 1))
        if k == len(self._codes):
            return None
        c = int(self._codes[k])
        return b[c], c + 1


def _no_length(marker: int) -> bool:
    return marker == 0x01 or 0xD0 <= marker <= 0xD8  # TEM, RSTn, SOI


def jpeg_info(b: bytes | memoryview) -> ImageInfo:
    """The frame header (first SOFn) and EXIF orientation (the last APP1 Exif before the first
    scan: DALI 2.4 and torchvision also read one between the frame header and the scan); raises
    ValueError when there is no frame header before the first scan."""
    n, orientation, pos, markers = len(b), 1, 2, _Markers(b)
    while (found := markers.after(pos)) is not None:
        marker, pos = found
        if _no_length(marker):
            continue
        if marker in (0xDA, 0xD9) or pos + 2 > n:  # a scan or the end before any frame header
            break
        seg = struct.unpack_from(">H", b, pos)[0]
        body = b[pos + 2:pos + seg]
        if marker == 0xE1 and bytes(body[:6]) == b"Exif\x00\x00":
            orientation = exif_orientation(body[6:])
        elif 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if len(body) < 6:
                break
            precision, h, w, comps = struct.unpack_from(">BHHB", body, 0)
            if h == 0 or w == 0:
                raise ValueError(f"JPEG header declares an empty image ({w}x{h})")
            progressive = marker not in (0xC0, 0xC1)
            first, orientation = _first_scan(b, pos + max(seg, 2), markers, orientation)
            multi = not progressive and first < comps
            return ImageInfo("jpeg", h, w, comps, orientation, progressive, precision, multi)
        pos += max(seg, 2)  # libjpeg reads a length under 2 as no body
    raise ValueError("JPEG header has no frame (SOF) marker; the data is truncated or not a JPEG")


def _first_scan(b: bytes | memoryview, pos: int, markers: _Markers, orientation: int) -> tuple[int, int]:
    """(components in the first scan (SOS) after `pos`, 255 when there is none (no later scans
    either: libjpeg stops there); `orientation` updated by the APP1 Exif segments on the way)."""
    n = len(b)
    while (found := markers.after(pos)) is not None:
        marker, pos = found
        if _no_length(marker):
            continue
        if marker == 0xD9 or pos + 2 > n:
            break
        seg = struct.unpack_from(">H", b, pos)[0]
        if marker == 0xDA:
            return (b[pos + 2] if seg >= 3 and pos + 2 < n else 255), orientation
        if marker == 0xE1 and bytes(b[pos + 2:pos + 8]) == b"Exif\x00\x00" and seg >= 8:
            orientation = exif_orientation(b[pos + 8:pos + seg])
        pos += max(seg, 2)
    return 255, orientation


def jpeg_scans(b: bytes | memoryview, limit: int) -> int:
    """How many scans (SOS markers) libjpeg would decode, counting up to `limit` + 1: markers are
    found as libjpeg finds them, entropy-coded data and segment bodies skipped, up to EOI."""
    n, scans, pos, markers = len(b), 0, 2, _Markers(b)
    while scans <= limit and (found := markers.after(pos)) is not None:
        marker, pos = found
        if marker == 0xD9:
            break
        if _no_length(marker):
            continue
        if pos + 2 > n:
            break
        scans += marker == 0xDA
        pos += max(struct.unpack_from(">H", b, pos)[0], 2)
    return scans


def jpeg2000_tiles(b: bytes | memoryview) -> int | None:
    """Tiles the SIZ marker of a JPEG 2000 codestream declares (raw, or the first `jp2c` box of a
    JP2 file); None where there is no readable SIZ (the decoder then reports what is wrong)."""
    n, pos = len(b), 0
    if bytes(b[:4]) != b"\xff\x4f\xff\x51":
        while True:  # JP2 boxes: u32 length (1: a u64 follows, 0: to the end), 4-byte type
            if pos + 8 > n:
                return None
            length, kind, head = struct.unpack_from(">I", b, pos)[0], bytes(b[pos + 4:pos + 8]), 8
            if length == 1 and pos + 16 <= n:
                length, head = struct.unpack_from(">Q", b, pos + 8)[0], 16
            if kind == b"jp2c":
                pos += head
                break
            if length < head:
                return None
            pos += length
    if pos + 42 > n or bytes(b[pos:pos + 4]) != b"\xff\x4f\xff\x51":
        return None
    xs, ys, _, _, xt, yt, xto, yto = struct.unpack_from(">8I", b, pos + 8)
    if xt == 0 or yt == 0 or xto >= xs or yto >= ys:
        return None
    return -(-(xs - xto) // xt) * -(-(ys - yto) // yt)


# -- PNG and the rest ------------------------------------------------------------------------------

def png_info(b: bytes | memoryview) -> ImageInfo:
    """IHDR, and the orientation of the first eXIf chunk, before or after the image data (DALI 2.4
    turns a PNG by an eXIf after its IDAT chunks too: measured); raises ValueError."""
    if len(b) < 33 or bytes(b[12:16]) != b"IHDR":
        raise ValueError("PNG data has no IHDR header; the data is truncated")
    w, h, depth, ctype = struct.unpack_from(">IIBB", b, 16)
    if h == 0 or w == 0:
        raise ValueError(f"PNG header declares an empty image ({w}x{h})")
    channels = {0: 1, 2: 3, 3: 3, 4: 2, 6: 4}.get(ctype)
    if channels is None:
        raise ValueError(f"PNG header has an invalid color type {ctype}")
    orientation, pos = 1, 33
    while pos + 8 <= len(b):
        length, kind = struct.unpack_from(">I4s", b, pos)
        if kind == b"IEND":
            break
        if kind == b"eXIf":
            orientation = exif_orientation(b[pos + 8:pos + 8 + length])
            break
        pos += 12 + length
    return ImageInfo("png", h, w, channels, orientation, bit_depth=depth)


#: the formats PIL may open (PIL's plugin names): DALI 2.4's (JPEG, PNG, BMP, PNM, TIFF, WebP, JPEG
#: 2000) and GIF. Not every plugin PIL has: its EPS plugin runs Ghostscript on the file, a
#: PostScript program, and DALI decodes none of the others (ICO, TGA, PCX, SGI, PSD, ...)
PIL_FORMATS = ("JPEG", "PNG", "BMP", "PPM", "TIFF", "WEBP", "JPEG2000", "GIF")


def pil_info(b: bytes | memoryview) -> ImageInfo:
    """A format of PIL_FORMATS, from PIL's lazy open (the header only)."""
    from PIL import Image
    with Image.open(io.BytesIO(b), formats=PIL_FORMATS) as im:
        w, h = im.size
        orientation = int(im.getexif().get(0x0112, 1) or 1)
        tags = getattr(im, "tag_v2", None)
        if tags is not None and isinstance(tags.get(256), int) and isinstance(tags.get(257), int):
            w, h = tags[256], tags[257]  # a TIFF's stored size (Pillow 11+ reports it upright)
        bands = 3 if im.mode in ("P", "PA") else len(im.getbands())  # a palette decodes to its colours
        depth = 16 if im.mode.startswith("I;16") else 8
        return ImageInfo(str(im.format).lower(), h, w, bands, orientation if 1 <= orientation <= 8 else 1,
                         bit_depth=depth)
