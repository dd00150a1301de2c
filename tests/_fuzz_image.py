"""Fuzz targets for the CPU image kernels (registered in tests/_fuzz.py's TARGETS): the warp
family's resampling (cpu_warp.c, at remap's untrusted maps), the CPU resize (cpu_resize.c, every
filter it takes), crop_mirror_normalize and the colour / table / filter / conversion kernels
(cpu_image.c), each against its spec, bit for bit, at images of any size."""
from __future__ import annotations

import random

import torch

from torch_dali._native import helpers
from torch_dali.functional import color as K
from torch_dali.functional import color_adjust as KA
from torch_dali.functional import distort as DS
from torch_dali.functional import filters as FK
from torch_dali.functional import histogram as HG
from torch_dali.functional import warp as W
from torch_dali.functional.crop import convert
from torch_dali.functional.normalize import crop_mirror_normalize
from torch_dali.functional.resize import filter_table, resize
from torch_dali.ops.fast import cpu_color, cpu_convert, cpu_filters, cpu_tables, cpu_warp

try:
    from tests._fuzz_inputs import ODD_POINTS, WARP_TYPES, warp_args, warp_image, warp_matrices, warp_points
except ImportError:
    from _fuzz_inputs import (ODD_POINTS, WARP_TYPES, warp_args, warp_image,  # type: ignore[no-redef]
                              warp_matrices, warp_points)

INT_MAX = 2**31 - 1


class Fail(AssertionError):
    """An oracle violation (the input is reported)."""


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise Fail(what)


def target_warp(data: bytes, rnd: random.Random) -> None:
    """cpu_warp.c == the spec (functional.warp) bit for bit, at any points (remap's maps are data:
    NaN, infinities, huge and tiny values) and for any affine or perspective matrix, on small and
    1-pixel images where every border mode's index arithmetic is at its edge."""
    if helpers.CPU_WARP.load() is None:
        return
    # bits, every NaN made one: a NaN's sign depends on the order of the operations that made it
    bits = (lambda t: t.reshape(-1).view(torch.int32).masked_fill(t.reshape(-1).isnan(), 0x7FC00000)  # noqa: E731
            if t.dtype == torch.float32 else t)
    dtype = rnd.choice(WARP_TYPES)
    n = rnd.randint(1, 2)
    img = warp_image(rnd, n, dtype, most=rnd.choice([1, 2, 3, 24]))
    a = warp_args(rnd, dtype, int(img.shape[-1]))
    if dtype in (torch.uint8, torch.float32) and rnd.random() < 0.2:  # water / sphere / jitter's sampling
        pts = warp_points(rnd, rnd.choice([1, n]), odd=0.6, spread=rnd.choice([4.0, 40.0, 1e6]))
        px, py, linear = pts[..., 0].contiguous(), pts[..., 1].contiguous(), rnd.random() < 0.6
        fill = rnd.choice([0.0, rnd.uniform(-50, 300)])
        want, got = DS.sample(img, px, py, linear, fill), cpu_warp.distort_sample(img, px, py, linear, fill)
        _check(got is not None and bits(got).equal(bits(want)), f"distort C != spec for {dtype} {tuple(img.shape)}")
        return
    if rnd.random() < 0.6:
        pts = warp_points(rnd, n, odd=0.6, spread=rnd.choice([4.0, 40.0, 1e6]))
        f = W.fill_values(a["fill"], int(img.shape[-1]), dtype, img.device, a["out_dtype"]) if a["fill"] else None
        args = (img, pts, a["interp"], f, a["out_dtype"], a["border"], a["centred"], a["weight_bits"])
        want, got = W.sample(*args), cpu_warp.sample(*args)
    else:
        perspective = rnd.random() < 0.5
        mats = warp_matrices(rnd, rnd.choice([1, n]), perspective)
        if rnd.random() < 0.3:
            mats.view(-1)[rnd.randrange(mats.numel())] = rnd.choice(ODD_POINTS)
        a["centred"] = a["centred"] and perspective  # affine matrices map corner-origin coordinates only
        args = (img, mats, (rnd.randint(1, 12), rnd.randint(1, 12)), a["interp"], a["fill"], a["out_dtype"],
                a["border"], a["centred"], a["weight_bits"])
        want, got = W.warp_matrix(*args), cpu_warp.warp_matrix(*args)
    _check(got is not None, f"the helper declined {dtype} {a}")
    _check(got.dtype == want.dtype and got.shape == want.shape and torch.equal(bits(got), bits(want)),
           f"C != spec for {dtype} {tuple(img.shape)} {a}")


def _fuzz_image(rnd: random.Random) -> torch.Tensor:
    """uint8 HWC, sometimes 1 pixel wide or tall, sometimes long and thin, rows sometimes strided."""
    side = lambda: rnd.choice([1, 2, 3, rnd.randint(1, 40), rnd.randint(1, 700)])  # noqa: E731
    h, w, c = side(), side(), rnd.choice([1, 2, 3, 4])
    if h * w > 120_000:
        h = max(1, 120_000 // w)
    pad = rnd.choice([0, 0, 0, 5])
    g = torch.Generator().manual_seed(rnd.randrange(1 << 30))
    return torch.randint(0, 256, (h, w + pad, c), dtype=torch.uint8, generator=g)[:, :w]


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal values (float32: equal bits, every NaN one NaN)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype != torch.float32:
        return torch.equal(a, b)
    bits = lambda t: t.reshape(-1).view(torch.int32).masked_fill(t.reshape(-1).isnan(), 0x7FC00000)  # noqa: E731
    return torch.equal(bits(a), bits(b))


_RESIZE_KINDS = ["linear", "triangular", "cubic", "lanczos3", "gaussian"]  # the filters cpu_resize.c takes


def target_cpu_image(data: bytes, rnd: random.Random) -> None:
    """cpu_image.c == the spec: a resize of any region (fractional, past the edges, tiny or huge
    scale) of images of any size gives the spec's bits or declines; crop_mirror_normalize of a
    window gives the spec's bits inside the image and declines one leaving it; per-value tables,
    float -> integer conversion, color matrices (huge and overflowing ones too), filters (any
    kernel size, border and fill), gaussian_blur and laplacian give the spec's bits or decline."""
    if helpers.CPU_IMAGE.load() is None or helpers.CPU_RESIZE.load() is None:
        return
    img = _fuzz_image(rnd)
    h, w, c = (int(v) for v in img.shape)
    if rnd.random() < 0.15:  # per-value tables: equalize (HWC or CHW planes), brightness_contrast
        if rnd.random() < 0.3:
            img = img // rnd.randint(1, 255) * rnd.randint(1, 255)  # few values: odd histograms
        chw = rnd.random() < 0.5
        x = img.permute(2, 0, 1)[None].contiguous() if chw else img[None]
        hw = 2 if chw else 1
        want, got = HG.equalize(x, hw, hw + 1), cpu_tables.equalize(x, hw, hw + 1)
        _check(got is None or torch.equal(got, want), f"equalize C != spec: {tuple(x.shape)}")
        args = (rnd.uniform(0, 3) * rnd.choice([1.0, 1.0, 1.0, 1e37, 1e39]), rnd.uniform(-1, 1), rnd.uniform(-2, 4),
                rnd.choice([None, rnd.uniform(-9, 300)]), rnd.choice([None, torch.int16, torch.float32, torch.int32]))
        want, got = K.brightness_contrast(img, *args), cpu_tables.brightness_contrast(img, *args)
        _check(got is None or _same_bits(got, want), f"brightness_contrast C != spec: {tuple(img.shape)} {args}")
        f = img.to(torch.float32) * rnd.choice([1.0, -1.0, 0.37, 300.0, 1e7]) + rnd.uniform(-200, 200)
        f.view(-1)[:: rnd.randint(1, 500)] = rnd.choice([float("nan"), float("inf"), -float("inf"), 0.5, -0.5, 2.5])
        dt = rnd.choice([torch.uint8, torch.int8, torch.int16, torch.uint16, torch.int32])
        got = cpu_convert.convert(f, dt)
        _check(got is None or torch.equal(got, convert(f, dt)), f"convert C != spec: {tuple(f.shape)} -> {dt}")
        per = lambda f: torch.tensor([f()], dtype=torch.float64)  # noqa: E731  (grid_mask: one sample)
        gargs = (per(lambda: float(rnd.choice([1, 2, rnd.randint(1, 500)]))), per(lambda: rnd.uniform(-1, 2)),
                 per(lambda: rnd.choice([0.0, rnd.uniform(-7, 7), 1e30])), per(lambda: rnd.uniform(-1e4, 1e4)),
                 per(lambda: rnd.uniform(-1e4, 1e4)))
        for x in (img[None], f[None] if f.dim() == 3 else None):
            if x is not None:
                got = helpers.grid_mask(x.contiguous(), DS.grid_mask_coefficients(*gargs))
                _check(got is None or _same_bits(got, DS.grid_mask(x, *gargs)), f"grid_mask C != spec: {tuple(x.shape)}")
        for x in (img, f):  # filter: kernels past the image's size, every border, float or own type out
            kh, kw = rnd.randint(1, min(2 * h + 3, 9)), rnd.randint(1, min(2 * w + 3, 9))  # wider than tiny images
            fargs = ([0, 1], torch.randn((kh, kw)) * rnd.choice([1.0, 1e-3, 1e30]), [rnd.randrange(kh), rnd.randrange(kw)],
                     rnd.choice(FK.BORDERS), rnd.uniform(-1e6, 1e6), kh <= h and kw <= w and rnd.random() < 0.3,
                     rnd.choice([None, torch.float32]))
            got = cpu_filters.filter_sample(x, *fargs)
            _check(got is None or _same_bits(got, FK.filter_sample(x, *fargs)),
                   f"filter C != spec: {tuple(x.shape)} {(kh, kw)} {fargs[2:4]}")
        sizes = [2 * rnd.randint(0, 6) + 1 for _ in range(2)]  # separable windows: gaussian_blur, laplacian
        sigmas = [rnd.choice([FK.diameter_to_sigma(d), rnd.uniform(0.05, 9.0)]) for d in sizes]
        xf = f[None] if f.dim() == 3 else f[None, ..., None]
        got = cpu_filters.gaussian_blur(xf, [1, 2], sigmas, sizes)
        _check(got is None or _same_bits(got, FK.gaussian_blur(xf, [1, 2], sigmas, sizes)),
               f"gaussian_blur C != spec: {tuple(xf.shape)} {sizes} {sigmas}")
        lsizes = [[2 * rnd.randint(1, 4) + 1, rnd.choice([1, 3, 5])], [rnd.choice([1, 3, 5]), 2 * rnd.randint(1, 4) + 1]]
        scales = [rnd.uniform(-3, 3), rnd.choice([1.0, 1e30])]
        got = cpu_filters.laplacian(xf, [1, 2], lsizes, scales)
        _check(got is None or _same_bits(got, FK.laplacian(xf, [1, 2], lsizes, scales)),
               f"laplacian C != spec: {tuple(xf.shape)} {lsizes} {scales}")
        if c == 3:  # color matrices: hsv, color_twist, to YCbCr
            big = rnd.choice([1.0, 1.0, 1e3, 1e30, 1e39])  # saturating, huge, overflowing to inf in float32
            args = (rnd.uniform(-720, 720), rnd.uniform(-3, 5) * big, rnd.uniform(-2, 3),
                    rnd.choice([None, torch.uint8, torch.int16, torch.float32]))
            got = cpu_color.hsv(img, *args)
            _check(got is None or _same_bits(got, K.hsv(img, *args)), f"hsv C != spec: {tuple(img.shape)} {args}")
            args = (rnd.uniform(0, 3) * big, rnd.uniform(-2, 3), rnd.uniform(-360, 360), rnd.uniform(-1, 4), args[3])
            got = cpu_color.color_twist(img, *args)
            _check(got is None or _same_bits(got, K.color_twist(img, *args)),
                   f"color_twist C != spec: {tuple(img.shape)} {args}")
            src = rnd.choice(["RGB", "BGR"])
            got = cpu_color.color_space_conversion(img, src, "YCbCr")
            _check(got is None or torch.equal(got, KA.color_space_conversion(img, src, "YCbCr")),
                   f"{src} -> YCbCr C != spec: {tuple(img.shape)}")
        return
    if rnd.random() < 0.6:
        def span(n: int) -> tuple[float, float]:
            if rnd.random() < 0.3:
                return 0.0, float(n)
            a = rnd.choice([0.0, rnd.uniform(-3, n), float(rnd.randrange(n)), rnd.uniform(-50, n + 50)])
            return a, rnd.choice([rnd.uniform(1e-3, 2), rnd.uniform(0.5, n + 5), float(n) - a, rnd.uniform(1, 3 * n + 9)])
        (y0, hh), (x0, ww) = span(h), span(w)
        size = (rnd.choice([1, 2, rnd.randint(1, 60), rnd.randint(1, 400)]), rnd.choice([1, 2, rnd.randint(1, 60), rnd.randint(1, 400)]))
        src = rnd.choice([torch.uint8, torch.uint8, torch.int16, torch.uint16, torch.float32])
        if src != torch.uint8:  # spread over the type's range; floats with infinities and NaNs
            img = img.to(torch.int32) * {torch.int16: 257, torch.uint16: 257, torch.float32: 1}[src] \
                - (32768 if src == torch.int16 else 0)
            img = img.to(src) if src != torch.float32 else img.to(src) * rnd.choice([1.0, -1e3, 1e37])
            if src == torch.float32:
                img.view(-1)[::rnd.randint(1, 900)] = rnd.choice([float("nan"), float("inf"), -float("inf"), 0.5])
        aa, dtype = rnd.random() < 0.7, rnd.choice([src, torch.float32])
        roi = (y0, x0, hh, ww)
        as_window = rnd.random() < 0.4  # ((y0, y1), (x0, x1)), as resize's subpixel windows are given
        window = ((y0, y0 + hh), (x0, x0 + ww))
        try:
            kw = dict(window=window) if as_window else dict(roi=roi)
            filters = (rnd.choice(_RESIZE_KINDS),) * 2 if rnd.random() < 0.7 else tuple(rnd.choices(_RESIZE_KINDS, k=2))
            want = resize(img, size, "nn", aa, *filters, dtype=dtype, **kw)
        except ValueError:
            want = None
        got = torch.full((size[0], size[1], c), 7, dtype=dtype)
        tables = helpers.FilterTables(filter_table)
        done = (helpers.resize_window(img, window, got, aa, filters, tables) if as_window
                else helpers.resize_roi(img, roi, got, aa, filters, tables))
        if want is not None and done:
            _check(_same_bits(got, want), f"resize C != spec: {(h, w, c)} {src} {'window ' + str(window) if as_window else 'roi ' + str(roi)} -> {size} aa={aa} {dtype} {filters}")
        if want is not None and not done:  # it takes forward regions only; an identity is the caller's copy
            _check(hh <= 0 or ww <= 0 or (size == (h, w) and roi == (0.0, 0.0, float(h), float(w))),
                   f"resize declined {(h, w, c)} roi {roi} -> {size}")
        return
    edge = [0, 1, h - 1, h, h + 1, -1, INT_MAX, -INT_MAX - 1, 2**62]
    pick = (lambda lo, hi: rnd.choice(edge) if rnd.random() < 0.2 else rnd.randint(lo, max(lo, hi)))  # noqa: E731
    wy, wx = pick(0, h - 1), pick(0, w - 1)
    wh, ww = pick(1, h - min(max(wy, 0), h - 1)), pick(1, w - min(max(wx, 0), w - 1))
    mean = torch.tensor([rnd.uniform(-300, 300) for _ in range(c)], dtype=torch.float32)
    std = torch.tensor([rnd.uniform(0.01, 90) for _ in range(c)], dtype=torch.float32)
    mirror, chw = rnd.random() < 0.5, rnd.random() < 0.5
    inside = 0 <= wy and 0 <= wx and 0 < wh and 0 < ww and wy + wh <= h and wx + ww <= w
    shape = (c, wh, ww) if chw else (wh, ww, c)
    if not inside and (wh > 4096 or ww > 4096 or wh < 1 or ww < 1):
        shape = (c, 1, 1) if chw else (1, 1, c)  # a wrong-shape output: must be declined too
    got = torch.empty(shape)
    done = helpers.crop_mirror_normalize(img, (wy, wx, wh, ww), mirror, mean, torch.reciprocal(std), got, chw)
    _check(done == inside, f"crop_mirror_normalize window {(wy, wx, wh, ww)} in {(h, w)}: done={done}")
    if inside:
        want = crop_mirror_normalize(img, (wy, wx, wh, ww), mirror, mean, std, layout="CHW" if chw else "HWC")
        _check(torch.equal(got, want), f"crop_mirror_normalize C != spec: {(h, w, c)} window {(wy, wx, wh, ww)}")


TARGETS = {
    "warp": (target_warp, lambda: [b""]),
    "cpu_image": (target_cpu_image, lambda: [b""]),
}
