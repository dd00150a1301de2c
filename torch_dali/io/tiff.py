"""Baseline TIFF read here for the files PIL cannot hand over whole.

PIL maps a TIFF onto one of its modes: an RGB file with extra samples beyond an alpha loses them
(5 or 6 samples come out RGB), 8 samples or 16-bit multi-sample files are refused, 16-bit colour is
cut to 8 bits and associated alpha is un-premultiplied. DALI's decoders keep every sample as stored
for `ANY_DATA` (multispectral images: RGB plus more bands), take the first three for RGB/BGR, and
scale 16-bit samples to the output type. So these files are read here: the first IFD, strips or
tiles, chunky or planar samples, unsigned 8/16-bit samples, no compression, LZW, Deflate or
PackBits, with or without horizontal differencing. 8-bit palette files too: DALI 2.4 gives their
16-bit colormap entries as a 16-bit RGB image (ANY_DATA: 3 channels; uint8 outputs scaled from
16 bits, GRAY the luma of the 16-bit values), where PIL keeps the entries' high bytes, one level
off for most pixels of a palette written as v*256. Every other TIFF still goes through PIL
(`decode`).

Limits (the bytes are untrusted): `decode`'s `max_pixels` check sees the size from `layout`; at
most MAX_SAMPLES samples a pixel and MAX_BYTES bytes an image; a strip or tile may not be much
larger than the image; no strip or tile is inflated past the bytes its pixels need (a Deflate/LZW
bomb stops there).
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

MAGIC = (b"II*\x00", b"MM\x00*")

_WIDTH, _HEIGHT, _BITS, _COMPRESSION, _PHOTOMETRIC = 256, 257, 258, 259, 262
_STRIP_OFFSETS, _ORIENTATION, _SAMPLES, _ROWS_PER_STRIP, _STRIP_COUNTS = 273, 274, 277, 278, 279
_PLANAR, _PREDICTOR, _TILE_W, _TILE_H, _TILE_OFFSETS, _TILE_COUNTS = 284, 317, 322, 323, 324, 325
_EXTRA_SAMPLES, _SAMPLE_FORMAT, _COLORMAP = 338, 339, 320

_NONE, _LZW, _DEFLATE, _PACKBITS, _OLD_DEFLATE = 1, 5, 8, 32773, 32946
_COMPRESSIONS = (_NONE, _LZW, _DEFLATE, _PACKBITS, _OLD_DEFLATE)
_MIN_IS_BLACK, _RGB, _PALETTE = 1, 2, 3
_UNASSOCIATED_ALPHA = 2  # the ExtraSamples value PIL keeps as stored (RGBA, LA); associated alpha (1) it
# un-premultiplies (RGBa) or refuses (gray), where DALI gives the samples as stored
_TYPES = {1: "B", 3: "H", 4: "I", 16: "Q"}  # BYTE, SHORT, LONG, LONG8: the integer tag types used

#: most samples per pixel read here (multispectral files hold tens of bands); more go to PIL, which refuses
MAX_SAMPLES = 256
#: most bytes a decoded image may take here: what `max_pixels`' default (2**28) allows a 16-bit RGB image
MAX_BYTES = 3 << 29


@dataclass(frozen=True)
class Layout:
    """What IFD0 says about the pixels."""

    height: int
    width: int
    samples: int
    bits: int
    photometric: int
    compression: int
    planar: int  # 1 chunky (samples interleaved), 2 planar (one plane per sample)
    predictor: int
    orientation: int
    extra: tuple[int, ...]
    sample_format: int
    offsets: tuple[int, ...]
    counts: tuple[int, ...]
    block: tuple[int, int]  # (rows, columns) of one strip or tile
    tiled: bool
    colormap: tuple[int, ...] = ()  # a palette file's 3 * 2**bits 16-bit entries (all reds, greens, blues)

    @property
    def palette(self) -> bool:
        return self.photometric == _PALETTE

    @property
    def channels(self) -> int:
        """Samples per decoded pixel (a palette index becomes RGB)."""
        return 3 if self.palette else self.samples

    @property
    def depth(self) -> int:
        """Bits per decoded sample (colormap entries are 16-bit)."""
        return 16 if self.palette else self.bits


def _tags(b: bytes | memoryview) -> tuple[str, dict[int, tuple[int, ...]]]:
    e = "<" if bytes(b[:2]) == b"II" else ">"
    ifd = struct.unpack_from(e + "I", b, 4)[0]
    n = struct.unpack_from(e + "H", b, ifd)[0]
    tags: dict[int, tuple[int, ...]] = {}
    for i in range(n):
        tag, typ, count = struct.unpack_from(e + "HHI", b, ifd + 2 + 12 * i)
        fmt = _TYPES.get(typ)
        if fmt is None:
            continue
        size = struct.calcsize(fmt) * count
        at = ifd + 2 + 12 * i + 8
        if size > 4:
            at = struct.unpack_from(e + "I", b, at)[0]
        if at + size > len(b):
            raise ValueError(f"TIFF tag {tag} points past the end of the data")
        tags[tag] = struct.unpack_from(f"{e}{count}{fmt}", b, at)
    return e, tags


def layout(b: bytes | memoryview) -> Layout:
    """IFD0 of a TIFF; ValueError / struct.error when it cannot be read."""
    _, t = _tags(b)

    def one(tag: int, default: int) -> int:
        return int(t[tag][0]) if tag in t and t[tag] else default

    samples = one(_SAMPLES, 1)
    bits = set(t.get(_BITS, (1,)))
    if len(bits) != 1:
        raise ValueError(f"TIFF samples of different bit depths {sorted(bits)}")
    formats = set(t.get(_SAMPLE_FORMAT, (1,)))
    tiled = _TILE_OFFSETS in t
    h, w = one(_HEIGHT, 0), one(_WIDTH, 0)
    block = (one(_TILE_H, 0), one(_TILE_W, 0)) if tiled else (min(one(_ROWS_PER_STRIP, h), h), w)
    return Layout(h, w, samples, bits.pop(), one(_PHOTOMETRIC, _MIN_IS_BLACK), one(_COMPRESSION, _NONE),
                  one(_PLANAR, 1), one(_PREDICTOR, 1), one(_ORIENTATION, 1), tuple(t.get(_EXTRA_SAMPLES, ())),
                  formats.pop() if len(formats) == 1 else 0,
                  tuple(t.get(_TILE_OFFSETS if tiled else _STRIP_OFFSETS, ())),
                  tuple(t.get(_TILE_COUNTS if tiled else _STRIP_COUNTS, ())), block, tiled,
                  tuple(t.get(_COLORMAP, ())))


def premultiplied(b: bytes | memoryview, adjust_orientation: bool) -> Layout | None:
    """The layout of an 8-bit RGB + unassociated alpha TIFF that DALI 2.4 hands to OpenCV: planar,
    or turned by its orientation tag while `adjust_orientation` is on. OpenCV reads 8-bit TIFFs
    with libtiff's RGBA reader, which premultiplies the colours: (c * a + 127) // 255 (measured on
    every orientation and on planar files; up to 232 off the stored colours). None otherwise."""
    try:
        lay = layout(b)
    except (ValueError, struct.error):
        return None
    ok = lay.bits == 8 and lay.samples == 4 and lay.photometric == _RGB and lay.extra[:1] == (_UNASSOCIATED_ALPHA,)
    return lay if ok and (lay.planar == 2 or (adjust_orientation and 2 <= lay.orientation <= 8)) else None


def reads_here(b: bytes | memoryview) -> Layout | None:
    """The layout when this TIFF is one PIL would not hand over whole and this reader can take;
    None for everything else (not a TIFF, or a TIFF for PIL)."""
    if len(b) < 8 or bytes(b[:4]) not in MAGIC:
        return None
    try:
        lay = layout(b)
    except (ValueError, struct.error):
        return None
    if lay.bits not in (8, 16) or lay.sample_format != 1 or lay.compression not in _COMPRESSIONS \
            or lay.predictor not in (1, 2) or lay.height <= 0 or lay.width <= 0 or min(lay.block) <= 0 \
            or not 1 <= lay.samples <= MAX_SAMPLES or lay.planar not in (1, 2) \
            or lay.block[0] * lay.block[1] > 4 * lay.height * lay.width + (1 << 16) \
            or lay.height * lay.width * lay.channels * (lay.depth // 8) > MAX_BYTES:
        return None
    if lay.photometric == _RGB and lay.samples >= 3:
        plain = lay.samples == 3 or (lay.samples == 4 and lay.extra[:1] == (_UNASSOCIATED_ALPHA,))
    elif lay.photometric == _MIN_IS_BLACK:
        plain = lay.samples == 1 or (lay.samples == 2 and lay.extra[:1] == (_UNASSOCIATED_ALPHA,))
    elif lay.palette:
        return lay if lay.samples == 1 and lay.bits == 8 and len(lay.colormap) == 3 * 256 else None
    else:
        return None
    return None if plain and lay.bits == 8 else lay


def _lzw(data: bytes, limit: int) -> bytes:
    """TIFF's LZW: MSB-first codes of 9..12 bits, the width growing one code early; stops after
    `limit` bytes out."""
    out = bytearray()
    table = [bytes([i]) for i in range(256)] + [b"", b""]
    nbits, pos, end = 9, 0, len(data) * 8
    padded = bytes(data) + b"\0\0\0"
    prev = b""
    while pos + nbits <= end and len(out) < limit:
        at = pos >> 3
        word = (padded[at] << 16) | (padded[at + 1] << 8) | padded[at + 2]
        code = (word >> (24 - (pos & 7) - nbits)) & ((1 << nbits) - 1)
        pos += nbits
        if code == 256:
            del table[258:]
            nbits, prev = 9, b""
            continue
        if code == 257:
            break
        if not prev:
            entry = table[code] if code < len(table) else b""
            if not entry:
                raise ValueError("corrupt LZW data")
        elif code < len(table):
            entry = table[code]
            table.append(prev + entry[:1])
        elif code == len(table):
            entry = prev + prev[:1]
            table.append(entry)
        else:
            raise ValueError("corrupt LZW data")
        out += entry
        prev = entry
        if len(table) + 1 >= (1 << nbits) and nbits < 12:
            nbits += 1
    return bytes(out)


def _lzw_libtiff(data: bytes, row_bytes: int, rows: int) -> bytes | None:
    """The strip/tile's bytes through PIL's libtiff binding (100x the Python loop's speed), the
    data wrapped as the one strip of a `row_bytes` x `rows` 8-bit gray TIFF; None when PIL has no
    libtiff or refuses the data (the Python decoder then decides)."""
    from PIL import Image, features
    if not features.check("libtiff") or row_bytes > 0xFFFFFFFF or rows > 0xFFFFFFFF:
        return None
    tags = [(256, 4, row_bytes), (257, 4, rows), (258, 3, 8), (259, 3, _LZW), (262, 3, _MIN_IS_BLACK),
            (273, 4, 8 + 2 + 12 * 9 + 4), (277, 3, 1), (278, 4, rows), (279, 4, len(data))]
    ifd = struct.pack("<H", len(tags)) + b"".join(
        struct.pack("<HHIHH" if typ == 3 else "<HHII", tag, typ, 1, val, *((0,) if typ == 3 else ()))
        for tag, typ, val in tags) + struct.pack("<I", 0)
    import io
    try:
        with Image.open(io.BytesIO(b"II*\x00" + struct.pack("<I", 8) + ifd + data)) as im:
            im.load()
            return im.tobytes()
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError):  # bomb: a strip over ~179 MB
        return None


def _packbits(data: bytes, limit: int) -> bytes:
    out, i = bytearray(), 0
    while i < len(data) and len(out) < limit:
        n = data[i]
        i += 1
        if n < 128:
            out += data[i:i + n + 1]
            i += n + 1
        elif n > 128:
            out += data[i:i + 1] * (257 - n)
            i += 1
    return bytes(out)


def _inflate(lay: Layout, raw: bytes, need: int, rows: int) -> bytes:
    """The first `need` bytes (`rows` rows) a strip/tile's data holds (fewer when it holds fewer)."""
    if lay.compression == _LZW:
        fast = _lzw_libtiff(raw, need // rows, rows) if rows > 0 and need % rows == 0 else None
        return fast if fast is not None and len(fast) == need else _lzw(raw, need)
    if lay.compression in (_DEFLATE, _OLD_DEFLATE):
        return zlib.decompressobj().decompress(raw, need)
    if lay.compression == _PACKBITS:
        return _packbits(raw, need)
    return raw


def decode(b: bytes | memoryview, lay: Layout) -> np.ndarray:
    """HWC array of every sample as stored (uint8 or uint16; a palette file's RGB), before orientation."""
    dtype = np.dtype(("<" if bytes(b[:2]) == b"II" else ">") + ("u1" if lay.bits == 8 else "u2"))
    planes = lay.samples if lay.planar == 2 else 1
    per_block = 1 if lay.planar == 2 else lay.samples
    bh, bw = lay.block
    across, down = -(-lay.width // bw), -(-lay.height // bh)
    if len(lay.offsets) < planes * across * down or len(lay.counts) < len(lay.offsets):
        raise ValueError("TIFF has fewer strips/tiles than its size needs")
    out = np.zeros((planes, lay.height, lay.width, per_block), dtype)
    k = 0
    for p in range(planes):
        for by in range(down):
            for bx in range(across):
                off, cnt = lay.offsets[k], lay.counts[k]
                k += 1
                rows = bh if lay.tiled else min(bh, lay.height - by * bh)
                need = rows * bw * per_block * dtype.itemsize
                data = _inflate(lay, bytes(b[off:off + cnt]), need, rows)
                if len(data) < need:
                    raise ValueError("TIFF strip/tile data is truncated")
                blk = np.frombuffer(data[:need], dtype).reshape(rows, bw, per_block)
                if lay.predictor == 2:
                    blk = np.cumsum(blk, axis=1, dtype=dtype)
                y, x = by * bh, bx * bw
                h, w = min(rows, lay.height - y), min(bw, lay.width - x)
                out[p, y:y + h, x:x + w] = blk[:h, :w]
    hwc = out[..., 0].transpose(1, 2, 0) if lay.planar == 2 else out[0]
    if lay.palette:  # index -> the colormap's 16-bit RGB
        return np.asarray(lay.colormap, np.uint16).reshape(3, -1).T[hwc[..., 0]]
    return np.ascontiguousarray(hwc.astype(dtype.newbyteorder("=")))


def to_channels(hwc: np.ndarray, lay: Layout, want: str, turned: bool = False) -> np.ndarray:
    """`want` "any": every sample; "rgb": the first three; "gray": BT.601 luma of the first three,
    halves rounded up (OpenCV's 14-bit fixed point when `turned`, a file whose orientation tag is
    applied: DALI 2.4 decodes those with OpenCV, measured on 16-bit RGB). As DALI, the first three samples
    are taken as RGB whatever the photometric tag says; a file of fewer samples (gray + extra)
    gives its first sample (DALI 2.4 reads past the pixel there)."""
    if want == "any":
        return hwc
    if lay.channels < 3:
        gray = hwc[..., :1]
        return gray if want == "gray" else np.repeat(gray, 3, axis=2)
    rgb = hwc[..., :3]
    if want == "rgb":
        return rgb
    if turned:
        r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
        return ((r * 4899 + g * 9617 + b * 1868 + 8192) >> 14).astype(hwc.dtype)[..., None]
    r, g, b = (rgb[..., i].astype(np.float32) for i in range(3))
    luma = np.float32(0.299) * r + np.float32(0.587) * g + np.float32(0.114) * b
    top = 255 if hwc.dtype == np.uint8 else 65535
    return np.clip(np.floor(luma + np.float32(0.5)), 0, top).astype(hwc.dtype)[..., None]
