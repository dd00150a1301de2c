"""Netpbm gray and colour maps (P2, P3, P5, P6) decoded as DALI 2.4's CPU decoder gives them.

DALI hands PNM files to OpenCV's reader, which does not scale samples to `maxval` the way netpbm
(and PIL) do. Measured on every maxval class (1, 2, 15, 100, 254, 255, 256, 1000, 4095, 32767,
32768, 65534, 65535) of each of the four formats:
- maxval 65535: 16-bit samples as stored (uint8 outputs then scaled from 16 bits);
- maxval 256..65534: 8-bit samples, the high byte of each 16-bit value (no scaling to maxval);
- maxval up to 255, binary (P5, P6): the bytes as stored, not scaled;
- maxval up to 255, ASCII (P2, P3): `v * 255 // maxval` (values above maxval taken as maxval).
PIL scaled every sample to maxval (a P6 of maxval 100 came out 2.55x brighter than DALI's) and
kept 8 bits of 16-bit colour. GRAY of a colour map is OpenCV's 14-bit fixed-point BT.601, in 16
bits for a 16-bit file. Bilevel maps (P1, P4) stay with PIL (equal to DALI's).
"""
from __future__ import annotations

import numpy as np

MAGICS = (b"P2", b"P3", b"P5", b"P6")
_SPACE = b" \t\n\r\v\f"
_R, _G, _B = 4899, 9617, 1868  # OpenCV's BT.601 weights, 14-bit fixed point


def handles(head: bytes) -> bool:
    return head[:2] in MAGICS and len(head) > 2 and head[2:3] in _SPACE


def _tokens(b: bytes | memoryview, pos: int, count: int) -> tuple[list[int], int]:
    """`count` decimal numbers from `pos` (whitespace and '#' comments between them); the position
    after the last one."""
    out, n = [], len(b)
    while len(out) < count:
        while pos < n and (b[pos] in _SPACE or b[pos] == 0x23):
            if b[pos] == 0x23:  # a comment runs to the end of its line
                while pos < n and b[pos] not in (0x0A, 0x0D):
                    pos += 1
            else:
                pos += 1
        start = pos
        while pos < n and 0x30 <= b[pos] <= 0x39:
            pos += 1
        if pos == start:
            raise ValueError("PNM header is truncated or holds something other than a number")
        out.append(int(bytes(b[start:pos])))
    return out, pos


def header(b: bytes | memoryview) -> tuple[int, int, int, int, int]:
    """(height, width, channels, maxval, offset of the pixel data)."""
    (w, h, maxval), pos = _tokens(b, 2, 3)
    if w == 0 or h == 0:
        raise ValueError(f"PNM header declares an empty image ({w}x{h})")
    if not 1 <= maxval <= 65535:
        raise ValueError(f"PNM maxval {maxval} is outside 1..65535")
    return h, w, 3 if bytes(b[1:2]) in b"36" else 1, maxval, pos + 1  # one whitespace byte ends the header


def _samples(b: bytes | memoryview, h: int, w: int, c: int, maxval: int, pos: int) -> np.ndarray:
    """The samples as stored (uint16 where maxval > 255), HWC."""
    n = h * w * c
    if bytes(b[1:2]) in b"56":  # binary
        wide = maxval > 255
        need = n * (2 if wide else 1)
        if len(b) - pos < need:
            raise ValueError(f"PNM data is truncated: {len(b) - pos} bytes of pixels, {need} needed")
        a = np.frombuffer(b, ">u2" if wide else np.uint8, n, pos)
        return a.astype(np.uint16 if wide else np.uint8).reshape(h, w, c)
    text = bytes(b[pos - 1:])
    if b"#" in text:
        text = b"\n".join(line.split(b"#", 1)[0] for line in text.splitlines())
    try:
        a = np.array(text.split()[:n], dtype=np.int64) if n else np.zeros(0, np.int64)
    except ValueError:
        raise ValueError("PNM ASCII data holds something other than numbers") from None
    if a.size < n:
        raise ValueError(f"PNM data is truncated: {a.size} samples, {n} needed")
    return np.minimum(a, maxval).astype(np.uint16 if maxval > 255 else np.uint8).reshape(h, w, c)


def _gray(rgb: np.ndarray) -> np.ndarray:
    r, g, b = (rgb[..., k].astype(np.int64) for k in range(3))
    return ((r * _R + g * _G + b * _B + 8192) >> 14).astype(rgb.dtype)[..., None]


def decode(b: bytes | memoryview, mode: str) -> np.ndarray:
    """HWC uint8 (uint16 for maxval 65535) of a P2/P3/P5/P6 file: `mode` "rgb", "gray" or "any"."""
    h, w, c, maxval, pos = header(b)
    a = _samples(b, h, w, c, maxval, pos)
    if maxval <= 255:
        if bytes(b[1:2]) in b"23" and maxval != 255:
            a = (a.astype(np.int64) * 255 // maxval).astype(np.uint8)
    elif maxval != 65535:
        a = (a >> 8).astype(np.uint8)
    if mode == "gray":
        return a if c == 1 else _gray(a)
    if mode == "rgb" and c == 1:
        return np.repeat(a, 3, axis=2)
    return np.ascontiguousarray(a)
