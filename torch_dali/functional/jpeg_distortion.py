"""JPEG compression artifacts without a codec (fn.jpeg_compression_distortion), batched in torch:
the image goes the way baseline JPEG takes it and comes back, in float32 -

RGB -> YCbCr (JPEG's full-range BT.601) -> chroma averaged over 2x2 (4:2:0) -> 8x8 DCT of each
plane -> coefficients rounded to multiples of the quality-scaled IJG tables (Annex K; quality q in
1..100 scales them by 5000 / q below 50, 200 - 2 q above, clamped to 1..255) -> inverse DCT ->
chroma upsampled with the triangle filter libjpeg's decoder uses -> RGB, rounded to uint8.

Edges are padded by repetition to whole 16x16 macroblocks, as encoders do. DALI's CPU backend runs
libjpeg through OpenCV (integer DCT, other rounding), so results match it in distribution
(measured mean absolute difference below 1 on smooth images), not bit for bit.
"""
from __future__ import annotations

import math

import torch

F32 = torch.float32

_LUMA = [16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
         14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
         49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99]
_CHROMA = [17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99,
           47, 66, 99, 99, 99, 99, 99, 99] + [99] * 32


def quant_tables(quality: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, 8, 8) luma and chroma tables for per-sample qualities (clamped to 1..100)."""
    q = quality.to(torch.int64).clamp(1, 100)
    scale = torch.where(q < 50, 5000 // q, 200 - 2 * q).reshape(-1, 1)
    out = []
    for base in (_LUMA, _CHROMA):
        b = torch.tensor(base, dtype=torch.int64).reshape(1, 64)
        out.append(((b * scale + 50) // 100).clamp(1, 255).reshape(-1, 8, 8).to(F32))
    return out[0], out[1]


def _dct_matrix(device: torch.device) -> torch.Tensor:
    k = torch.arange(8, dtype=torch.float64).reshape(8, 1)
    n = torch.arange(8, dtype=torch.float64).reshape(1, 8)
    m = torch.cos((2 * n + 1) * k * math.pi / 16) * math.sqrt(2 / 8)
    m[0] /= math.sqrt(2)
    return m.to(device, F32)


def _blocks_roundtrip(plane: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """plane (N, H, W) with H, W multiples of 8, level-shifted; per-sample (N, 8, 8) tables."""
    n, h, w = (int(s) for s in plane.shape)
    d = _dct_matrix(plane.device)
    b = plane.reshape(n, h // 8, 8, w // 8, 8).permute(0, 1, 3, 2, 4)
    coef = d @ b @ d.T
    t = table.to(plane.device).reshape(n, 1, 1, 8, 8)
    coef = torch.round(coef / t) * t
    back = d.T @ coef @ d
    return back.permute(0, 1, 3, 2, 4).reshape(n, h, w)


def _pad_edge(x: torch.Tensor, h: int, w: int) -> torch.Tensor:
    """x (N, H0, W0, C) repeated at the bottom/right edges to (N, h, w, C)."""
    h0, w0 = int(x.shape[1]), int(x.shape[2])
    if h > h0:
        x = torch.cat([x, x[:, -1:].expand(-1, h - h0, -1, -1)], 1)
    if w > w0:
        x = torch.cat([x, x[:, :, -1:].expand(-1, -1, w - w0, -1)], 2)
    return x


def _upsample2(c: torch.Tensor, axis: int) -> torch.Tensor:
    """Doubles `axis` with the triangle filter: each output is 3/4 its source, 1/4 the nearer neighbour."""
    n = int(c.shape[axis])
    prev = torch.cat([c.narrow(axis, 0, 1), c.narrow(axis, 0, n - 1)], axis)
    nxt = torch.cat([c.narrow(axis, 1, n - 1), c.narrow(axis, n - 1, 1)], axis)
    even, odd = 0.75 * c + 0.25 * prev, 0.75 * c + 0.25 * nxt
    return torch.stack([even, odd], axis + 1).flatten(axis, axis + 1)


def jpeg_distortion(x: torch.Tensor, quality: torch.Tensor) -> torch.Tensor:
    """x (N, H, W, 3) uint8 RGB; quality (N,) ints. Returns uint8 (N, H, W, 3)."""
    n, h0, w0 = int(x.shape[0]), int(x.shape[1]), int(x.shape[2])
    if h0 == 0 or w0 == 0:
        return x.clone()
    h, w = -(-h0 // 16) * 16, -(-w0 // 16) * 16
    return _roundtrip(_pad_edge(x.to(F32), h, w), quality, None)[:, :h0, :w0]


def jpeg_distortion_padded(x: torch.Tensor, quality: torch.Tensor, hw: list[tuple[int, int]]) -> torch.Tensor:
    """`jpeg_distortion` of images of different sizes in one padded group (`functional.ragged`):
    x (G, H, W, 3) uint8 holds image g (of size hw[g]) at its top left, its edges repeated to at
    least its whole 16x16 macroblocks, and H, W are multiples of 16. Each image's pixels come
    out as `jpeg_distortion` gives them; what lies past them is unspecified."""
    return _roundtrip(x.to(F32), quality, [(-(-h // 16) * 8, -(-w // 16) * 8) for h, w in hw])


def _clamp_to(c: torch.Tensor, axis: int, ends: list[int]) -> torch.Tensor:
    """c (G, H, W) with each sample's values past ends[g] along `axis` replaced by its last one."""
    n = int(c.shape[axis])
    idx = torch.minimum(torch.arange(n).reshape(1, -1), torch.tensor(ends).reshape(-1, 1) - 1).to(c.device)
    shape = [int(c.shape[0]), 1, 1]
    shape[axis] = n
    return torch.gather(c, axis, idx.reshape(shape).expand(c.shape))


def _roundtrip(f: torch.Tensor, quality: torch.Tensor, chroma_hw: list[tuple[int, int]] | None) -> torch.Tensor:
    """f (N, H, W, 3) float32 RGB, H and W multiples of 16, through JPEG and back (uint8).
    `chroma_hw`: each sample's own chroma plane size in a padded group (its edges repeat there)."""
    n, h, w = int(f.shape[0]), int(f.shape[1]), int(f.shape[2])
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    y = 0.299 * r + 0.587 * g + 0.114 * b
    cb = -0.168736 * r - 0.331264 * g + 0.5 * b + 128
    cr = 0.5 * r - 0.418688 * g - 0.081312 * b + 128
    qy, qc = quant_tables(quality)
    y = _blocks_roundtrip(y - 128, qy) + 128
    chroma = []
    for c in (cb, cr):
        small = c.reshape(n, h // 2, 2, w // 2, 2).mean(dim=(2, 4))
        small = _blocks_roundtrip(small - 128, qc) + 128
        if chroma_hw is not None:
            small = _clamp_to(small, 1, [e[0] for e in chroma_hw])
        up = _upsample2(small, 1)
        if chroma_hw is not None:
            up = _clamp_to(up, 2, [e[1] for e in chroma_hw])
        chroma.append(_upsample2(up, 2))
    cb, cr = chroma[0] - 128, chroma[1] - 128
    rgb = torch.stack([y + 1.402 * cr, y - 0.344136 * cb - 0.714136 * cr, y + 1.772 * cb], -1)
    return torch.round(rgb).clamp(0, 255).to(torch.uint8)
