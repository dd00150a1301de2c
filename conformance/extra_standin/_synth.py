"""Photo-like synthetic pictures and the few encoders Pillow lacks (16-bit multi-channel PNG, TIFF
with any number of samples, ASCII PNM), for the stand-in's image files. NumPy and Pillow only, so
the stand-in can be written where OpenCV is not installed."""
from __future__ import annotations

import struct
import zlib

import numpy as np


def photo(rng: np.random.Generator, h: int, w: int, channels: int = 3, depth: int = 8) -> np.ndarray:
    """A smooth background (gradients, soft blobs), a few hard-edged shapes, fine texture and
    noise: enough structure for resampling, filters, histograms and JPEG to behave as on photos."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    yn, xn = yy / max(h - 1, 1), xx / max(w - 1, 1)
    img = np.empty((h, w, channels), np.float32)
    for c in range(channels):
        a = rng.uniform(-90, 90, 3)
        img[..., c] = rng.uniform(70, 180) + a[0] * xn + a[1] * yn + a[2] * xn * yn
    for _ in range(4):  # soft blobs
        cy, cx, s = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(0.08, 0.3) * min(h, w)
        blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * s * s))
        img += blob[..., None] * rng.uniform(-80, 80, channels)
    for k in range(5):  # hard edges: rectangles and discs
        color = rng.uniform(0, 255, channels)
        cy, cx = rng.uniform(0, h), rng.uniform(0, w)
        ry, rx = rng.uniform(0.05, 0.25) * h, rng.uniform(0.05, 0.25) * w
        if k % 2:
            mask = (np.abs(yy - cy) < ry) & (np.abs(xx - cx) < rx)
        else:
            mask = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 < 1
        img[mask] = 0.3 * img[mask] + 0.7 * color
    f = rng.uniform(0.05, 0.4, 2)
    img += (6 * np.sin(f[0] * xx + f[1] * yy))[..., None]  # texture
    img += rng.normal(0, 4, img.shape)
    if depth == 16:
        return np.clip(img * 257 + rng.normal(0, 40, img.shape), 0, 65535).astype(np.uint16)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def gray(img: np.ndarray) -> np.ndarray:
    return np.rint(img[..., :3].astype(np.float32) @ np.float32([0.299, 0.587, 0.114])).astype(img.dtype)


def png16(img: np.ndarray) -> bytes:
    """A 16-bit PNG (gray, gray+alpha, RGB or RGBA) written by hand: Pillow has no such mode."""
    h, w, c = img.shape
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    rows = img.astype(">u2").reshape(h, w * c).view(np.uint8)
    raw = np.concatenate([np.zeros((h, 1), np.uint8), rows], axis=1).tobytes()  # filter 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", w, h, 16, color_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")


def tiff(img: np.ndarray, extra_alpha: bool = False) -> bytes:
    """An uncompressed little-endian TIFF with any number of 8- or 16-bit samples per pixel (one
    strip, interleaved): RGB plus extra samples, which Pillow cannot write."""
    h, w, c = img.shape
    bits = img.dtype.itemsize * 8
    data = img.astype("<u%d" % img.dtype.itemsize).tobytes()
    n_extra = c - 3 if c >= 3 else c - 1
    entries = []  # (tag, type, count, values): type 3 SHORT, 4 LONG
    header_len = 8
    tags = [(256, 4, [w]), (257, 4, [h]), (258, 3, [bits] * c), (259, 3, [1]),
            (262, 3, [2 if c >= 3 else 1]), (273, 4, [0]), (277, 3, [c]), (278, 4, [h]),
            (279, 4, [len(data)]), (284, 3, [1])]
    if n_extra:
        tags.append((338, 3, [2 if extra_alpha else 0] + [0] * (n_extra - 1)))
    tags.append((339, 3, [1] * c))
    ifd_len = 2 + 12 * len(tags) + 4
    blob = bytearray()  # out-of-line values after the IFD
    data_off = header_len + ifd_len
    out_of_line = {t: v for t, typ, v in tags if len(v) * (2 if typ == 3 else 4) > 4}
    off = data_off
    for t, typ, v in tags:
        if t in out_of_line:
            off += len(v) * (2 if typ == 3 else 4)
    strip_off = off
    for t, typ, v in tags:
        fmt = "<" + ("H" if typ == 3 else "I") * len(v)
        if t == 273:
            v = [strip_off]
        packed = struct.pack(fmt, *v)
        if t in out_of_line:
            entries.append(struct.pack("<HHII", t, typ, len(v), data_off + len(blob)))
            blob += packed
        else:
            entries.append(struct.pack("<HHI", t, typ, len(v)) + packed.ljust(4, b"\0"))
    ifd = struct.pack("<H", len(tags)) + b"".join(entries) + struct.pack("<I", 0)
    return b"II*\0" + struct.pack("<I", header_len) + ifd + bytes(blob) + data


def pnm_ascii(img: np.ndarray) -> bytes:
    """P2 (gray) or P3 (RGB), the plain-text forms Pillow does not write."""
    h, w, c = img.shape
    head = f"P{2 if c == 1 else 3}\n# stand-in\n{w} {h}\n255\n".encode()
    rows = "\n".join(" ".join(map(str, r)) for r in img.reshape(h, w * c).tolist())
    return head + rows.encode() + b"\n"
