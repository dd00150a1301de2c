"""debayer (and its legacy name experimental.debayer): single-channel Bayer mosaics (HW, HWC with
one channel, FHW, FHWC) to RGB (HWC / FHWC), uint8 or uint16.

`blue_position` (y, x) is where blue sits in the 2x2 tile that starts at the sensor's second row
and column (OpenCV's naming: (0, 0) BG, (0, 1) GB, (1, 0) GR, (1, 1) RG). Algorithms:
- bilinear_ocv (the CPU default): each missing colour is the rounded mean of its 2 or 4 nearest
  samples of that colour; the outer rows and columns repeat their inner neighbours; images under
  3 pixels high or wide come out black. Bit for bit DALI 2.4's CPU output (OpenCV's).
- gray_ocv: the luma (0.299 R + 0.587 G + 0.114 B, OpenCV's 14-bit weights) of the same
  interpolation, one channel out.
- default_npp (the GPU's only algorithm, as in DALI): NPP's bilinear demosaic (floored means, green
  at red and blue sites from the axis along which that colour changes less, mirrored borders),
  bit for bit the values DALI's test of its GPU operator expects (`demosaic_npp`).
- edgeaware_ocv: bilinear, except green at red and blue sites, taken from the axis whose two greens
  differ less (OpenCV's edge-aware demosaic, bit for bit DALI's CPU output).
- vng_ocv (uint8): Variable Number of Gradients (debayer_vng.py), bit for bit DALI's CPU output;
  images under 8 pixels high or wide get bilinear, as in OpenCV.
`default` names each device's default. Each kernel is one batched set of torch calls (integer
arithmetic; VNG's one rounding in float32) over every frame of a dense batch, on the batch's device.
"""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ..errors import ArgumentError, ArgumentTypeError
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema
from .layout_op import resolve_layout
from .debayer_vng import demosaic_vng
from .layouts import refuse_input

LAYOUTS = ("HW", "HWC", "FHW", "FHWC")
_CPU_ALGS = ("bilinear_ocv", "edgeaware_ocv", "vng_ocv", "gray_ocv")
_R2Y, _G2Y, _B2Y = 4899, 9617, 1868  # 0.299, 0.587, 0.114 in 1/16384


def _neighbour_sums(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Over the interior of (N, H, W) int32 planes: the centre, left + right, up + down, the sum of
    the 4 edge neighbours and of the 4 diagonal ones."""
    c = x[:, 1:-1, 1:-1]
    hs = x[:, 1:-1, :-2] + x[:, 1:-1, 2:]
    vs = x[:, :-2, 1:-1] + x[:, 2:, 1:-1]
    ds = x[:, :-2, :-2] + x[:, :-2, 2:] + x[:, 2:, :-2] + x[:, 2:, 2:]
    return c, hs, vs, hs + vs, ds


def _sites(h: int, w: int, by: int, bx: int, device: torch.device) -> tuple[torch.Tensor, ...]:
    """Masks over the interior (rows and columns 1..-2): red sites, blue sites, greens in a red
    row, greens in a blue row."""
    ys = torch.arange(1, h - 1, device=device)[:, None] % 2
    xs = torch.arange(1, w - 1, device=device)[None, :] % 2
    red_row, red_col = ys == by, xs == bx  # red at (by, bx) mod 2, blue at (by + 1, bx + 1)
    red = red_row & red_col
    blue = ~red_row & ~red_col
    return red, blue, red_row & ~red_col, ~red_row & red_col


def demosaic(x: torch.Tensor, by: int, bx: int, gray: bool = False, edge: bool = False) -> torch.Tensor:
    """(N, H, W) uint8/uint16 planes, all with one Bayer pattern -> (N, H, W, 3) RGB, or (N, H, W, 1)
    luma with `gray`, of the input's dtype. `edge` (edgeaware_ocv): green at a red or blue site is
    the mean of the 2 vertical greens where the horizontal pair differs more, else of the 2
    horizontal ones; everything else as bilinear."""
    n, h, w = (int(s) for s in x.shape)
    out_c = 1 if gray else 3
    if h < 3 or w < 3:
        return torch.zeros((n, h, w, out_c), dtype=x.dtype, device=x.device)
    c, hs, vs, n4, d4 = _neighbour_sums(x.to(torch.int32))
    red, blue, g_red_row, g_blue_row = _sites(h, w, by, bx, x.device)
    green = g_red_row | g_blue_row
    if gray:
        # red/blue site: 4 diagonals of the other colour, 4 greens; green site: 2 of each colour
        rb_site = torch.where(red, d4 * _B2Y + c * (4 * _R2Y), d4 * _R2Y + c * (4 * _B2Y))
        rb_site = (rb_site + n4 * _G2Y + (1 << 15)) >> 16
        g_site = torch.where(g_red_row, hs * _R2Y + vs * _B2Y, hs * _B2Y + vs * _R2Y)
        g_site = (g_site + c * (2 * _G2Y) + (1 << 14)) >> 15
        planes = [torch.where(green, g_site, rb_site)]
    else:
        if edge:
            xi = x.to(torch.int32)
            dh = (xi[:, 1:-1, :-2] - xi[:, 1:-1, 2:]).abs()
            dv = (xi[:, :-2, 1:-1] - xi[:, 2:, 1:-1]).abs()
            g_rb = torch.where(dh > dv, (vs + 1) >> 1, (hs + 1) >> 1)
        else:
            g_rb = (n4 + 2) >> 2
        g = torch.where(green, c, g_rb)
        diag = (d4 + 2) >> 2
        horiz, vert = (hs + 1) >> 1, (vs + 1) >> 1
        r = torch.where(red, c, torch.where(blue, diag, torch.where(g_red_row, horiz, vert)))
        b = torch.where(blue, c, torch.where(red, diag, torch.where(g_red_row, vert, horiz)))
        planes = [r, g, b]
    inner = torch.stack(planes, 1).to(torch.float32)  # replicate-padding wants floats on every device
    full = F.pad(inner, (1, 1, 1, 1), mode="replicate")
    return full.to(x.dtype).permute(0, 2, 3, 1).contiguous()


def _reflect101(n: int, pad: int, device: torch.device) -> torch.Tensor:
    """Indices of 0..n-1 extended by `pad` on each side, mirrored about the edge samples (n >= 2)."""
    period = 2 * (n - 1)
    m = torch.arange(-pad, n + pad, device=device) % period
    return torch.where(m >= n, period - m, m)


def demosaic_npp(x: torch.Tensor, by: int, bx: int) -> torch.Tensor:
    """(N, H, W) uint8/uint16 planes, all with one Bayer pattern -> (N, H, W, 3) RGB of the input's
    dtype, as NPP's bilinear demosaic with chroma-guided green (DALI's GPU `default_npp`).

    Outside the image the mosaic mirrors about its edge samples (so sites keep their colour). A
    missing red or blue is the floored mean of its 2 or 4 nearest samples of that colour. Green at
    a green site is kept; at a red or blue site it is the floored mean of the 2 horizontal greens
    where that site's colour changes less horizontally than vertically (|c - (c[x-2] + c[x+2]) // 2|
    against the same vertically), of the 2 vertical greens where it changes less vertically, and
    of all 4 on a tie."""
    n, h, w = (int(s) for s in x.shape)
    dev = x.device
    iy, ix = _reflect101(h, 2, dev), _reflect101(w, 2, dev)
    p = x.to(torch.int32)[:, iy][:, :, ix]  # (N, H + 4, W + 4)
    ys = (torch.arange(-2, h + 2, device=dev) % 2)[:, None]
    xs = (torch.arange(-2, w + 2, device=dev) % 2)[None, :]
    red_row, red_col = ys == by, xs == bx  # red at (by, bx) mod 2, blue at (by + 1, bx + 1)
    red_m, blue_m = red_row & red_col, ~red_row & ~red_col
    green_m = ~(red_m | blue_m)
    rs, gs, bs = p * red_m, p * green_m, p * blue_m

    def at(t: torch.Tensor, dy: int, dx: int) -> torch.Tensor:
        return t[:, 2 + dy:2 + dy + h, 2 + dx:2 + dx + w]

    def spread(t: torch.Tensor) -> torch.Tensor:  # 1 2 1 / 2 4 2 / 1 2 1, floored by 4
        edges = at(t, 0, -1) + at(t, 0, 1) + at(t, -1, 0) + at(t, 1, 0)
        diag = at(t, -1, -1) + at(t, -1, 1) + at(t, 1, -1) + at(t, 1, 1)
        return (4 * at(t, 0, 0) + 2 * edges + diag) >> 2

    g_h = at(gs, 0, -1) + at(gs, 0, 1)
    g_v = at(gs, -1, 0) + at(gs, 1, 0)
    g_all = (4 * at(gs, 0, 0) + g_h + g_v) >> 2

    def changes(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        c = at(t, 0, 0)
        dh = (c - ((at(t, 0, -2) + at(t, 0, 2)) >> 1)).abs()
        dv = (c - ((at(t, -2, 0) + at(t, 2, 0)) >> 1)).abs()
        return dh < dv, dh > dv

    h_r, v_r = changes(rs)
    h_b, v_b = changes(bs)
    g = torch.where(h_r | h_b, g_h >> 1, torch.where(v_r | v_b, g_v >> 1, g_all))
    return torch.stack([spread(rs), g, spread(bs)], -1).to(x.dtype)


def _position(op: str, v: Any) -> tuple[int, int]:
    vals = v if isinstance(v, (list, tuple)) else [v]
    if len(vals) == 1:
        vals = [vals[0], vals[0]]
    if len(vals) != 2:
        raise ArgumentError(f"{op}: `blue_position` must be one value or two (y, x), got {v!r}")
    y, x = (int(t) for t in vals)
    if not (0 <= y <= 1 and 0 <= x <= 1):
        raise ArgumentError(f"{op}: `blue_position` must lie in the 2x2 tile (0 or 1 each), got ({y}, {x})")
    return y, x


class Debayer(Operator):
    sample_wise = False
    per_frame_ok = True  # frames are demosaiced independently: takes fn.per_frame blue positions

    def setup(self) -> None:
        alg = self.args["algorithm"]
        gpu = self.node.device == "gpu"
        if alg is None or alg == "default":  # DALI takes "default" for each device's default
            alg = "default_npp" if gpu else "bilinear_ocv"
        if alg not in (*_CPU_ALGS, "default_npp"):
            raise ArgumentError(f"{self.name}: unknown `algorithm` {alg!r}; the CPU has "
                                f"{', '.join(_CPU_ALGS)}, the GPU default_npp")
        if gpu and alg != "default_npp":
            raise ArgumentError(f"{self.name}: the GPU runs only algorithm 'default_npp', got {alg!r}")
        if not gpu and alg == "default_npp":
            raise ArgumentError(f"{self.name}: 'default_npp' runs on the GPU only; the CPU has {', '.join(_CPU_ALGS)}")
        self.alg = alg
        if "blue_position" not in self.node.arg_inputs:
            self.position = _position(self.name, self.args["blue_position"])

    def output_layout(self, index: int) -> str | None:
        return None  # worked out per batch

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        samples = list(tl)
        if not samples:
            return [TensorList([], "HWC")]
        ranks = {int(t.dim()) for t in samples}
        if len(ranks) != 1:
            raise ArgumentError(f"{self.name}: the samples of a batch must have the same number of dimensions, "
                                f"got {sorted(ranks)}")
        try:
            layout = resolve_layout(self.name, tl.layout(), ranks.pop(), LAYOUTS)
        except ArgumentError as e:
            raise refuse_input(self.node, e) from None
        seq = layout.startswith("F")
        planes = []
        for i, t in enumerate(samples):
            if t.dtype not in (torch.uint8, torch.uint16):
                raise ArgumentTypeError(f"{self.name}: the input must be uint8 or uint16, got {t.dtype} (sample {i})")
            if self.alg == "vng_ocv" and t.dtype != torch.uint8:
                raise ArgumentTypeError(f"{self.name}: vng_ocv takes uint8 input only, got {t.dtype} (sample {i})")
            if layout.endswith("C"):
                if int(t.shape[-1]) != 1:
                    raise ArgumentError(f"{self.name}: the mosaic must have one channel, got shape "
                                        f"{tuple(t.shape)} ({layout}, sample {i})")
                t = t[..., 0]
            h, w = int(t.shape[-2]), int(t.shape[-1])
            if h % 2 or w % 2:
                raise ArgumentError(f"{self.name}: the height and width must be even, got {h} x {w} (sample {i})")
            planes.append(t if seq else t.unsqueeze(0))
        positions = ([_position(self.name, v) for v in args["blue_position"]] if "blue_position" in args
                     else [self.position] * len(samples))
        gray = self.alg == "gray_ocv"
        npp = self.alg == "default_npp"
        edge = self.alg == "edgeaware_ocv"
        vng = self.alg == "vng_ocv"

        def kernel(planes: torch.Tensor, pos: tuple[int, int]) -> torch.Tensor:
            if vng and min(planes.shape[-2:]) >= 8:
                return demosaic_vng(planes, *pos)
            return demosaic_npp(planes, *pos) if npp else demosaic(planes, *pos, gray, edge)

        same = len({tuple(p.shape) for p in planes}) == 1 and len(set(positions)) == 1
        if same:  # one call for the whole batch
            out = kernel(torch.cat(planes) if len(planes) > 1 else planes[0], positions[0])
            outs = list(out.split([int(p.shape[0]) for p in planes]))
        else:
            outs = [kernel(p, pos) for p, pos in zip(planes, positions)]
        outs = outs if seq else [o[0] for o in outs]
        return [TensorList(outs, "FHWC" if seq else "HWC")]


for _name in ("debayer", "experimental.debayer"):
    register(OpSchema(
        name=_name, impl=Debayer, devices=("cpu", "gpu"),
        doc="Demosaics single-channel uint8/uint16 Bayer images (HW, HWC, FHW, FHWC; even height and width) "
            "to RGB HWC (FHWC); bilinear, edge-aware, VNG (bit for bit DALI's CPU output) or bilinear luma "
            "(gray_ocv) on the CPU, NPP's bilinear (default_npp) on the GPU.",
        args=(
            Arg("blue_position", "ints", doc="(y, x) of blue in the 2x2 tile at the second row and column: "
                "(0, 0) BG, (0, 1) GB, (1, 0) GR, (1, 1) RG", tensor=True),
            Arg("algorithm", "str", None, "CPU: bilinear_ocv (default), edgeaware_ocv, vng_ocv (uint8) or "
                "gray_ocv; GPU: default_npp (NPP's bilinear with chroma-guided green); `default`: the "
                "device's default"),
        ),
    ))
