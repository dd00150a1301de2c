"""The fuzz targets' inputs (tests/_fuzz.py): seed files, mutations, and guard-page buffers that make
an out-of-bounds access by C code a crash instead of a silent wrong answer."""
from __future__ import annotations

import ctypes
import io
import mmap
import random
import struct
import zlib

import numpy as np
import torch
from PIL import Image

from torch_dali.io.recordio import encode_record, pack

try:
    from tests.corruption import multi_scan_baseline_jpeg
except ImportError:
    from corruption import multi_scan_baseline_jpeg  # type: ignore[no-redef]

SPECIAL = [0x00, 0x01, 0x02, 0x08, 0x10, 0x7F, 0x80, 0xC0, 0xC2, 0xC4, 0xD0, 0xD8, 0xD9, 0xDA, 0xDB,
           0xE1, 0xFE, 0xFF]


# -- seeds -----------------------------------------------------------------------------------------

def _img(h: int, w: int, seed: int) -> Image.Image:
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    a = np.stack([xx * 255 // w, yy * 255 // h, (xx * 5 + yy * 3) % 256], -1) + rng.integers(0, 40, (h, w, 3))
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


def _save(im: Image.Image, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _png16(a: np.ndarray, ctype: int) -> bytes:
    h, w = a.shape[:2]
    rows = a.astype(">u2").view(np.uint8).reshape(h, -1)
    raw = b"".join(b"\0" + r.tobytes() for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, ctype, 0, 0, 0))
            + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b""))


def jpeg_seeds() -> list[bytes]:
    im = _img(37, 53, 1)
    exif = b"Exif\0\0MM\0\x2a\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0\x06\0\0\0\0\0\0"
    return [_save(im, "JPEG", quality=85), _save(im, "JPEG", quality=85, progressive=True),
            _save(im.convert("L"), "JPEG"), _save(im.convert("CMYK"), "JPEG"),
            _save(im, "JPEG", subsampling=0, restart_marker_blocks=1), _save(im, "JPEG", exif=exif),
            multi_scan_baseline_jpeg(5, 16, 24)]


def png_seeds() -> list[bytes]:
    im = _img(19, 27, 2)
    a16 = np.random.default_rng(3).integers(0, 65536, (9, 11, 4), dtype=np.uint16)
    return [_save(im, "PNG"), _save(im.convert("RGBA"), "PNG"), _save(im.convert("L"), "PNG"),
            _save(im.convert("LA"), "PNG"), _save(im.convert("1"), "PNG"),
            _save(im.convert("P", palette=Image.ADAPTIVE, colors=20), "PNG", transparency=2),
            _save(im.convert("P", palette=Image.ADAPTIVE, colors=4), "PNG", bits=2),
            _png16(a16[..., :3], 2), _png16(a16, 6), _png16(a16[..., :2], 4)]


def rec_seed() -> bytes:
    magic = struct.pack("<I", 0xCED7230A)
    items = [pack(1.0, b"abc"), pack([1.0, 2.0], b"x" * 13), pack(3.0, b"wxyz" + magic + b"q" * 9),
             pack(4.0, magic * 3), pack(5.0, b"")]
    return b"".join(encode_record(r) for r in items)


# -- mutations -------------------------------------------------------------------------------------

def mutate(data: bytes, rnd: random.Random, corpus: list[bytes]) -> bytes:
    """A few random edits: byte flips / special bytes, inserts, deletes, duplicates, splices,
    truncation. Edits favour the first 1 kB, where the headers are."""
    b = bytearray(data)
    for _ in range(rnd.choice((1, 1, 2, 3, 6))):
        n = len(b)
        pos = rnd.randrange(n) if n and rnd.random() < 0.3 else min(n, int(rnd.expovariate(1 / 300)))
        op = rnd.randrange(8)
        if op <= 1 and pos < n:
            b[pos] = rnd.choice(SPECIAL) if op else rnd.randrange(256)
        elif op == 2:
            b[pos:pos] = bytes(rnd.choice(SPECIAL) for _ in range(rnd.randint(1, 4)))
        elif op == 3:
            del b[pos:pos + rnd.randint(1, 16)]
        elif op == 4 and n:
            k = rnd.randrange(n)
            b[pos:pos] = b[k:k + rnd.randint(1, 64)]
        elif op == 5:
            other = rnd.choice(corpus)
            k = rnd.randrange(len(other))
            b[pos:pos + rnd.randint(0, 64)] = other[k:k + rnd.randint(1, 64)]
        elif op == 6 and pos + 2 <= n:  # a 16-bit field: lengths, sizes
            struct.pack_into(">H", b, pos, rnd.choice((0, 1, 2, 0x7FFF, 0xFFFF, rnd.randrange(65536))))
        elif op == 7:
            del b[rnd.randint(0, n):]
    return bytes(b)


def fix_png_crcs(b: bytes) -> bytes:
    """Recomputes every chunk's CRC, so a mutation reaches the decoder instead of the CRC check."""
    out, pos = bytearray(b[:8]), 8
    while pos + 12 <= len(b):
        n = struct.unpack_from(">I", b, pos)[0]
        if pos + 12 + n > len(b):
            break
        out += b[pos:pos + 8 + n] + struct.pack(">I", zlib.crc32(b[pos + 4:pos + 8 + n]))
        pos += 12 + n
    return bytes(out + b[pos:])


def mutate_png_pixels(b: bytes, rnd: random.Random) -> bytes:
    """Edits the decompressed image data (filter bytes, samples) and recompresses it."""
    pos, parts, idat = 8, [], b""
    while pos + 12 <= len(b):
        n, kind = struct.unpack_from(">I4s", b, pos)
        if kind == b"IDAT":
            idat += b[pos + 8:pos + 8 + n]
        else:
            parts.append((kind, b[pos + 8:pos + 8 + n]))
        pos += 12 + n
    try:
        raw = bytearray(zlib.decompress(idat))
    except zlib.error:
        return b
    for _ in range(rnd.randint(1, 4)):
        if raw:
            raw[rnd.randrange(len(raw))] = rnd.choice((0, 1, 4, 5, 9, 255, rnd.randrange(256)))
    if rnd.random() < 0.3:
        raw = raw[:rnd.randint(0, len(raw))]
    k = next((i for i, (kind, _) in enumerate(parts) if kind == b"IEND"), len(parts))
    parts.insert(k, (b"IDAT", zlib.compress(bytes(raw))))
    return b[:8] + b"".join(_chunk(kind, body) for kind, body in parts)


# -- guard pages: an out-of-bounds read or write by C code is a crash, not a silent wrong answer ----

class Guarded:
    """A buffer whose end is followed by an unreadable page."""

    def __init__(self, size: int = 1 << 20) -> None:
        page = mmap.PAGESIZE
        self.size = -(-size // page) * page
        self.m = mmap.mmap(-1, self.size + page)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(self.m))
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        if libc.mprotect(addr + self.size, page, 0) != 0:
            raise OSError(ctypes.get_errno(), "mprotect failed")
        self.t = torch.frombuffer(self.m, dtype=torch.uint8)[:self.size]

    def place(self, b: bytes) -> torch.Tensor:
        """`b` ending flush against the guard page (len(b) <= size)."""
        start = self.size - len(b)
        self.m[start:self.size] = b
        return self.t[start:]


_GUARDS: list[Guarded] = []


def guard(k: int) -> Guarded:
    while len(_GUARDS) <= k:
        _GUARDS.append(Guarded())
    return _GUARDS[k]


# -- the warp family's resampling (cpu_warp.c): images, arguments, points and matrices -------------

WARP_TYPES = (torch.uint8, torch.int16, torch.uint16, torch.int32, torch.float32)
WARP_BORDERS = ("constant", "replicate", "reflect", "reflect_101", "wrap")
#: what degenerate remap maps and homographies give
ODD_POINTS = (float("nan"), float("inf"), -float("inf"), 3e9, -5e18, 0.5, -0.5, 2.0 ** 31, -2.0 ** 31, 1e-45)


def warp_image(rng: random.Random, n: int, dtype: torch.dtype, most: int = 24) -> torch.Tensor:
    h, w, c = rng.randint(1, most), rng.randint(1, most), rng.choice([1, 2, 3, 4, 5])
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    if dtype == torch.float32:
        return torch.randn((n, h, w, c), generator=g) * 300
    lo, hi = {torch.uint8: (0, 256), torch.int16: (-32768, 32768), torch.uint16: (0, 65536),
              torch.int32: (-(1 << 31), 1 << 31)}[dtype]
    return torch.randint(lo, hi, (n, h, w, c), generator=g, dtype=torch.int64).to(dtype)


def warp_args(rng: random.Random, dtype: torch.dtype, c: int) -> dict:
    interp = rng.choice(["nn", "linear", "cubic"])
    return dict(interp=interp, border=rng.choice(WARP_BORDERS),
                fill=rng.choice([None, [rng.uniform(-400, 70000)], [rng.uniform(-10, 300)] * c]),
                out_dtype=rng.choice([dtype, torch.float32]), centred=rng.random() < 0.5,
                weight_bits=5 if interp == "linear" and rng.random() < 0.3 else None)


def warp_points(rng: random.Random, n: int, odd: float = 0.3, spread: float = 32) -> torch.Tensor:
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    pts = torch.empty((n, rng.randint(1, 9), rng.randint(1, 9), 2)).uniform_(-spread / 4, spread, generator=g)
    if rng.random() < odd:
        flat = pts.view(-1)
        for _ in range(rng.randint(1, 6)):
            flat[rng.randrange(flat.numel())] = rng.choice(ODD_POINTS)
    return pts


def warp_matrices(rng: random.Random, n: int, perspective: bool) -> torch.Tensor:
    g = torch.Generator().manual_seed(rng.randrange(1 << 30))
    m = torch.eye(3).repeat(n, 1, 1)
    m[:, :2, :2] += torch.empty((n, 2, 2)).uniform_(-0.6, 0.6, generator=g)
    m[:, :2, 2] = torch.empty((n, 2)).uniform_(-10, 10, generator=g)
    if perspective:
        m[:, 2, :2] = torch.empty((n, 2)).uniform_(-0.02, 0.02, generator=g)
        return m
    return m[:, :2].contiguous()
