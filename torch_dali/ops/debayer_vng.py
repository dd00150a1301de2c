"""debayer's `vng_ocv` (uint8 only): Variable Number of Gradients demosaicing, bit for bit DALI
2.4's CPU output (OpenCV 5's cvtColor(..., COLOR_Bayer*2RGB_VNG)).

Each pixel looks at 8 directions (N, S, W, E and the diagonals), each with a gradient summed from
absolute differences of its neighbourhood. The directions whose gradient is under
T = min + max(max // 2, 1) vote: each adds its samples of the three colours, and the missing colours
are the centre plus the rounded mean difference of the voted sums. The mosaic is extended by 2
mirrored samples on each side (about the edge samples), so border pixels are computed as the rest.
Images under 8 pixels high or wide fall back to bilinear, as in OpenCV.

The mean difference is (sum difference) * scale in float32, rounded half to even. OpenCV computes
runs of 8 pixels with SIMD code whose scale is 0.5f / votes and the others (the first pixel of rows
that start on green, the tail) with a table whose 7-vote entry is 0.0714286f, a different float than
0.5f / 7: both are reproduced, per pixel, from the same column rule."""
from __future__ import annotations

import torch
import torch.nn.functional as F

# OpenCV's per-pixel table and its SIMD lanes' 0.5f / votes (equal except for 7 votes)
_TABLE = (0.0, 0.5, 0.25, 0.1666666666667, 0.125, 0.1, 0.08333333333, 0.0714286, 0.0625)
_LANES = 8


def _scales(device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    table = torch.tensor(_TABLE, dtype=torch.float32, device=device)
    votes = torch.arange(len(_TABLE), dtype=torch.float32, device=device).clamp(min=1)
    return table, torch.tensor(0.5, dtype=torch.float32, device=device) / votes


def _simd_columns(h: int, w: int, by: int, bx: int, device: torch.device) -> torch.Tensor:
    """(h, w) bool: pixels OpenCV's SIMD loop computes. In the padded row (w + 4 wide) it starts at
    column 2, or 3 when column 2 is green (that one goes per pixel), and takes blocks of 8 while the
    block starts at or before w - 6."""
    green0 = (torch.arange(h, device=device) % 2 == by) != (bx == 0)  # is column 0 green, per row
    start = torch.where(green0, 3, 2)[:, None]
    blocks = torch.clamp((w - 6 - start) // _LANES + 1, min=0)
    cols = torch.arange(w, device=device)[None, :] + 2
    return (cols >= start) & (cols < start + blocks * _LANES)


def demosaic_vng(x: torch.Tensor, by: int, bx: int) -> torch.Tensor:
    """(N, H, W) uint8 planes (H, W >= 8), all with red at (by, bx) mod 2 -> (N, H, W, 3) uint8 RGB."""
    n, h, w = (int(s) for s in x.shape)
    dev = x.device
    # reflect = mirrored about the edge samples (OpenCV's BORDER_REFLECT_101)
    # int16 holds every sum here (at most 8 x 510) at half int32's memory traffic
    a = F.pad(x.to(torch.float32)[:, None], (2, 2, 2, 2), mode="reflect")[:, 0].to(torch.int16)

    def at(dy: int, dx: int) -> torch.Tensor:  # the padded mosaic around every pixel of the image
        return a[:, 2 + dy:2 + dy + h, 2 + dx:2 + dx + w]

    # the 7 gradient planes, once, over the image and a 1-pixel ring (each from its 3x3 neighbourhood)
    def nb(i: int, j: int) -> torch.Tensor:
        return a[:, 1 + i:3 + h + i, 1 + j:3 + w + j]

    def d(p: tuple[int, int], q: tuple[int, int]) -> torch.Tensor:
        return (nb(*p) - nb(*q)).abs()

    vert = 2 * d((-1, 0), (1, 0)) + d((-1, -1), (1, -1)) + d((-1, 1), (1, 1))
    horiz = 2 * d((0, -1), (0, 1)) + d((-1, -1), (-1, 1)) + d((1, -1), (1, 1))
    anti, diag = 2 * d((-1, 1), (1, -1)), 2 * d((-1, -1), (1, 1))
    anti_x = anti + d((-1, 0), (0, -1)) + d((1, 0), (0, 1))
    diag_x = diag + d((-1, 0), (0, 1)) + d((1, 0), (0, -1))
    cross = (nb(-1, 0) + nb(0, -1) + nb(0, 1) + nb(1, 0)) >> 1
    pl = (vert, horiz, anti, diag, anti_x, diag_x, cross)

    ys = (torch.arange(h, device=dev) % 2)[:, None]
    xs = (torch.arange(w, device=dev) % 2)[None, :]
    red_row, red_col = ys == by, xs == bx
    red, blue = red_row & red_col, ~red_row & ~red_col
    green = ~(red | blue)
    c = at(0, 0)
    v = lambda dy, dx: at(dy, dx)  # noqa: E731
    P = lambda k, dy, dx: pl[k][:, 1 + dy:1 + dy + h, 1 + dx:1 + dx + w]  # noqa: E731
    sel = lambda g, other: torch.where(green, g, other)  # noqa: E731
    grads = [
        P(0, -1, 0) + P(0, 0, 0), P(0, 0, 0) + P(0, 1, 0),  # N, S
        P(1, 0, -1) + P(1, 0, 0), P(1, 0, 0) + P(1, 0, 1),  # W, E
        sel(P(2, -1, 0) + P(2, -1, 1) + P(2, 0, 0) + P(2, 0, 1), P(4, -1, 1) + P(4, 0, 0)),  # NE
        sel(P(2, 0, 0) + P(2, 0, -1) + P(2, 1, 0) + P(2, 1, -1), P(4, 0, 0) + P(4, 1, -1)),  # SW
        sel(P(3, -1, 0) + P(3, -1, -1) + P(3, 0, 0) + P(3, 0, -1), P(5, -1, -1) + P(5, 0, 0)),  # NW
        sel(P(3, 0, 0) + P(3, 0, 1) + P(3, 1, 0) + P(3, 1, 1), P(5, 0, 0) + P(5, 1, 1)),  # SE
    ]
    lo, hi = grads[0], grads[0]
    for g in grads[1:]:
        lo, hi = torch.minimum(lo, g), torch.maximum(hi, g)
    thresh = lo + torch.clamp(hi // 2, min=1)
    # per direction (this row's colour, green, the other colour) at green sites, and
    # (the centre's colour, green, the other colour) at red and blue sites
    g_terms = [
        (v(-2, -1) + v(-2, 1), v(-2, 0) + c, 2 * v(-1, 0)), (v(2, -1) + v(2, 1), v(2, 0) + c, 2 * v(1, 0)),
        (2 * v(0, -1), v(0, -2) + c, v(-1, -2) + v(1, -2)), (2 * v(0, 1), v(0, 2) + c, v(-1, 2) + v(1, 2)),
        (v(-2, 1) + v(0, 1), 2 * v(-1, 1), v(-1, 0) + v(-1, 2)), (v(2, -1) + v(0, -1), 2 * v(1, -1), v(1, 0) + v(1, -2)),
        (v(-2, -1) + v(0, -1), 2 * v(-1, -1), v(-1, -2) + v(-1, 0)), (v(2, 1) + v(0, 1), 2 * v(1, 1), v(1, 2) + v(1, 0)),
    ]
    rb_terms = [
        (v(-2, 0) + c, 2 * v(-1, 0), v(-1, -1) + v(-1, 1)), (v(2, 0) + c, 2 * v(1, 0), v(1, -1) + v(1, 1)),
        (v(0, -2) + c, 2 * v(0, -1), v(-1, -1) + v(1, -1)), (v(0, 2) + c, 2 * v(0, 1), v(-1, 1) + v(1, 1)),
        (v(-2, 2) + c, P(6, -1, 1), 2 * v(-1, 1)), (v(2, -2) + c, P(6, 1, -1), 2 * v(1, -1)),
        (v(-2, -2) + c, P(6, -1, -1), 2 * v(-1, -1)), (v(2, 2) + c, P(6, 1, 1), 2 * v(1, 1)),
    ]
    own, grn, other = torch.zeros_like(c), torch.zeros_like(c), torch.zeros_like(c)
    votes = torch.zeros_like(c)
    for g, tg, trb in zip(grads, g_terms, rb_terms):
        m = (g < thresh).to(torch.int16)
        own += m * sel(tg[0], trb[0])
        grn += m * sel(tg[1], trb[1])
        other += m * sel(tg[2], trb[2])
        votes += m
    table, simd = _scales(dev)
    idx = votes.long()
    scale = torch.where(_simd_columns(h, w, by, bx, dev), simd[idx], table[idx])
    ref = sel(grn, own)  # the centre's own colour sum
    d1 = sel(own, grn) - ref  # green sites: the row's colour; others: green
    d2 = other - ref

    def step(d: torch.Tensor) -> torch.Tensor:
        return (c + torch.round(d.to(torch.float32) * scale).to(torch.int16)).clamp(0, 255)

    v1, v2 = step(d1), step(d2)
    r = torch.where(green, torch.where(red_row, v1, v2), torch.where(red, c, v2))
    g = torch.where(green, c, v1)
    b = torch.where(green, torch.where(red_row, v2, v1), torch.where(blue, c, v2))
    return torch.stack([r, g, b], -1).to(torch.uint8)
