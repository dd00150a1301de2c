"""Pure-torch resampling for the warp family (rotate, warp_affine, warp_perspective, remap).

Conventions (DALI 2.4's, checked against its CPU backend):
- coordinates are (x, y[, z]) with the origin at the corner of the first pixel: pixel i spans
  [i, i + 1) and its centre is i + 0.5; an output pixel's centre is mapped to the source;
- "nn" takes the pixel that contains the source point (floor);
- "linear" interpolates the 2 (4, 8) pixels around it in float32: along x, then y, then z;
- a tap outside the image takes `fill` (converted to the input type, saturating) or, without a
  fill, the nearest border pixel (coordinates clamped);
- the result is converted to the output type rounding half away from zero and saturating.

Everything is batched: images (N, *spatial, C) and per-sample coordinates (N, *out, ndim) run as
a few gathers, one launch sequence for the whole batch on the GPU.
"""
from __future__ import annotations

from typing import Sequence

import torch

from .crop import convert

INTERPS = ("nn", "linear", "cubic")


def fill_values(fill: float | Sequence[float] | None, channels: int, dtype: torch.dtype,
                device: torch.device, out_dtype: torch.dtype | None = None) -> torch.Tensor | None:
    """The fill per channel in the input's type `dtype`; DALI keeps the fill in the output type
    (`out_dtype`) first, so both conversions saturate and round (a fill of 300 is 255 for a float
    image warped to uint8)."""
    if fill is None:
        return None
    vals = [float(fill)] if isinstance(fill, (int, float)) else [float(v) for v in fill]
    if not vals:
        return None
    if len(vals) == 1:
        vals = vals * channels
    if len(vals) != channels:
        raise ValueError(f"`fill_value` must have 1 or {channels} values, got {len(vals)}")
    t = torch.tensor(vals, dtype=torch.float64, device=device)
    if out_dtype is not None:
        t = convert(t, out_dtype)
    return convert(t, dtype)


def nn_source(images: torch.Tensor, interp: str, fill: object, out_dtype: torch.dtype | None) -> torch.Tensor:
    """The image a warp reads: for nearest-neighbour sampling into another type (integers into
    float32) with a fill, already in that type, so that the fill enters the output as it is (DALI:
    a fill of 105.556 stays 105.556 in a float warp of an int16 image; linear sampling blends the
    fill in the input's type, 106 there)."""
    if interp == "nn" and fill is not None and out_dtype is not None and out_dtype != images.dtype:
        return convert(images, out_dtype)
    return images


def border_index(i: torch.Tensor, size: int | torch.Tensor, border: str) -> torch.Tensor:
    """Integer coordinates mapped into [0, size) by a border mode (OpenCV's names, as DALI's
    warp_perspective): replicate (clamp), reflect (..1 0 | 0 1..), reflect_101 (..2 1 | 0 1..),
    wrap (periodic). "constant" clamps here; the caller masks those taps. `size` may be a tensor
    of per-point extents (a flat batch of variable-size images)."""
    if isinstance(size, torch.Tensor):
        return _border_index_per_point(i, size, border)
    if border in ("constant", "replicate"):
        return i.clamp(0, size - 1)
    if border == "reflect":
        m = torch.remainder(i, 2 * size)
        return torch.where(m < size, m, 2 * size - 1 - m)
    if border == "reflect_101":
        if size == 1:
            return torch.zeros_like(i)
        m = torch.remainder(i, 2 * size - 2)
        return torch.where(m < size, m, 2 * size - 2 - m)
    if border == "wrap":
        return torch.remainder(i, size)
    raise ValueError(f"unknown border mode {border!r}")


def _border_index_per_point(i: torch.Tensor, size: torch.Tensor, border: str) -> torch.Tensor:
    """`border_index` with an extent per point: the same integers."""
    if border in ("constant", "replicate"):
        return torch.minimum(i.clamp(min=0), size - 1)
    if border == "reflect":
        m = torch.remainder(i, 2 * size)
        return torch.where(m < size, m, 2 * size - 1 - m)
    if border == "reflect_101":
        period = (2 * size - 2).clamp(min=1)
        m = torch.remainder(i, period)
        return torch.where(size == 1, torch.zeros_like(m), torch.where(m < size, m, period - m))
    if border == "wrap":
        return torch.remainder(i, size)
    raise ValueError(f"unknown border mode {border!r}")


def _gather(flat: torch.Tensor, idx: list[torch.Tensor], spatial: Sequence[int | torch.Tensor],
            fill: torch.Tensor | None, border: str = "constant", base: torch.Tensor | None = None) -> torch.Tensor:
    """flat (N*P, C) sampled at integer coords idx (x, y[, z]), each (N, M): -> (N, M, C).
    Outside the image: `fill` with the "constant" border (or the clamped pixel without a fill),
    else the pixel the border mode points at. With `base` (rows where each point's image starts,
    broadcasting with idx), `spatial` may hold per-point extents: images of different sizes."""
    n, m = idx[0].shape
    inside = None
    lin = torch.zeros_like(idx[0])
    stride: int | torch.Tensor = 1
    masked = fill is not None and border == "constant"
    # spatial is (.., H, W): x indexes the last spatial dim
    for d, i in enumerate(idx):
        size = spatial[len(spatial) - 1 - d]
        size = size if isinstance(size, torch.Tensor) else int(size)
        if masked:
            ok = (i >= 0) & (i < size)
            inside = ok if inside is None else inside & ok
        i = border_index(i, size, border)
        lin = lin + i * stride
        stride = stride * size
    if base is None:
        base = torch.arange(n, device=lin.device, dtype=lin.dtype).unsqueeze(1) * stride
    out = flat.index_select(0, (lin + base).reshape(-1)).reshape(n, m, -1)
    if inside is not None:
        if out.dtype in (torch.uint16, torch.uint32):  # no `where` for these on some torch builds
            return torch.where(inside.unsqueeze(-1), out.to(torch.int64), fill.to(torch.int64)).to(out.dtype)
        out = torch.where(inside.unsqueeze(-1), out, fill.to(out.dtype))
    return out


def _cubic_weights(t: torch.Tensor, a: float = -0.75) -> list[torch.Tensor]:
    """Weights of the taps at -1, 0, 1, 2 around a point t in [0, 1) past tap 0 (Keys' cubic
    with OpenCV's a = -0.75, the last weight making the sum 1)."""
    x0 = t + 1
    w0 = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a
    w1 = ((a + 2) * t - (a + 3)) * t * t + 1
    u = 1 - t
    w2 = ((a + 2) * u - (a + 3)) * u * u + 1
    return [w0, w1, w2, 1 - w0 - w1 - w2]


def sample(images: torch.Tensor, coords: torch.Tensor, interp: str = "linear",
           fill: torch.Tensor | None = None, out_dtype: torch.dtype | None = None,
           border: str = "constant", centred: bool = False, weight_bits: int | None = None) -> torch.Tensor:
    """Samples images (N, *spatial, C) at coords (N, *out, ndim) given as (x, y[, z]), with the
    origin at the first pixel's corner, or at its centre with `centred` (pixel i at i: OpenCV's).

    `fill`: per-channel values in the input's type (`fill_values`) for the "constant" border, or
    None to clamp there; other borders: `border_index`. "cubic" is 2D only. Returns
    (N, *out, C) in `out_dtype` (default: the input's). `weight_bits` rounds the linear weights
    to multiples of 2**-bits (OpenCV's fixed-point tables: DALI's warp_perspective does it for
    int16)."""
    if interp not in INTERPS:
        raise ValueError(f"interpolation must be one of {INTERPS}, got {interp!r}")
    n = int(images.shape[0])
    spatial = tuple(int(s) for s in images.shape[1:-1])
    c = int(images.shape[-1])
    ndim = len(spatial)
    out_spatial = tuple(coords.shape[1:-1])
    out_dtype = images.dtype if out_dtype is None else out_dtype
    if images.numel() == 0 or coords[..., 0].numel() == 0:
        shape = (n, *out_spatial, c)  # an empty image: the fill, or zeros without one (DALI 2.4)
        if fill is not None and coords[..., 0].numel():
            return convert(fill.to(torch.float32), out_dtype).expand(shape).clone()
        return torch.zeros(shape, dtype=out_dtype, device=images.device)
    flat = images.reshape(n * int(torch.tensor(spatial).prod()), c)
    pts = coords.reshape(n, -1, ndim).to(torch.float32)
    out = _sample_points(flat, pts, spatial, None, interp, fill, out_dtype, border, centred, weight_bits)
    return out.reshape(n, *out_spatial, c)


def sample_flat(items: torch.Tensor, coords: torch.Tensor, sizes: Sequence[torch.Tensor], base: torch.Tensor,
                interp: str = "linear", fill: torch.Tensor | None = None, out_dtype: torch.dtype | None = None,
                border: str = "constant", centred: bool = False, weight_bits: int | None = None) -> torch.Tensor:
    """`sample` for images of different sizes held flat (`functional.ragged`): items (rows, C)
    holds every image's pixels; each point (coords (M, ndim)) reads the image whose first pixel is
    row base[p] and whose extents (outermost first, like `spatial`) are sizes[d][p]. -> (M, C),
    each value computed as `sample` computes it."""
    if interp not in INTERPS:
        raise ValueError(f"interpolation must be one of {INTERPS}, got {interp!r}")
    out_dtype = items.dtype if out_dtype is None else out_dtype
    pts = coords.to(torch.float32).unsqueeze(0)
    out = _sample_points(items, pts, [s.unsqueeze(0) for s in sizes], base.unsqueeze(0), interp, fill, out_dtype,
                         border, centred, weight_bits)
    return out[0]


def _sample_points(flat: torch.Tensor, pts: torch.Tensor, spatial: Sequence[int | torch.Tensor],
                   base: torch.Tensor | None, interp: str, fill: torch.Tensor | None, out_dtype: torch.dtype,
                   border: str, centred: bool, weight_bits: int | None) -> torch.Tensor:
    """flat (rows, C) read at float32 points pts (N, M, ndim) -> (N, M, C) (see `_gather`)."""
    ndim = int(pts.shape[-1])
    if interp == "nn":
        idx = [torch.floor(pts[..., d] + 0.5 if centred else pts[..., d]).to(torch.int64) for d in range(ndim)]
        out = _gather(flat, idx, spatial, fill, border, base)
        return convert(out, out_dtype) if out.dtype != out_dtype else out
    if not centred:
        pts = pts - 0.5
    floor = torch.floor(pts)
    q = pts - floor  # weight of the upper tap, per axis
    if weight_bits is not None and interp == "linear":
        q = torch.round(q * float(2 ** weight_bits)) / float(2 ** weight_bits)
    i0 = floor.to(torch.int64)
    if interp == "cubic":
        if ndim != 2:
            raise ValueError("cubic interpolation is 2D only")
        wx, wy = _cubic_weights(q[..., 0].unsqueeze(-1)), _cubic_weights(q[..., 1].unsqueeze(-1))
        rows = []
        for j in range(4):
            acc = None
            for k in range(4):
                tap = _gather(flat, [i0[..., 0] + (k - 1), i0[..., 1] + (j - 1)], spatial, fill,
                              border, base).to(torch.float32) * wx[k]
                acc = tap if acc is None else acc + tap
            rows.append(acc)
        out = rows[0] * wy[0] + rows[1] * wy[1] + rows[2] * wy[2] + rows[3] * wy[3]
        return convert(out, out_dtype)
    # the 2**ndim taps, x fastest: (x0,y0), (x1,y0), (x0,y1), (x1,y1), then z+1
    taps = []
    for k in range(2 ** ndim):
        idx = [i0[..., d] + ((k >> d) & 1) for d in range(ndim)]
        taps.append(_gather(flat, idx, spatial, fill, border, base).to(torch.float32))
    for d in range(ndim):  # lerp along x, then y, then z
        w = q[..., d].unsqueeze(-1)
        if d == 0 or d < ndim - 1:  # DALI: s0 = s00 * px + s01 * qx (3D: y too, s0 = s00 * py + s01 * qy)
            taps = [taps[j] * (1 - w) + taps[j + 1] * w for j in range(0, len(taps), 2)]
        else:  # the outermost axis: s = s0 + (s1 - s0) * q
            taps = [taps[j] + (taps[j + 1] - taps[j]) * w for j in range(0, len(taps), 2)]
    return convert(taps[0], out_dtype)


def pixel_centres(out_spatial: Sequence[int], device: torch.device) -> torch.Tensor:
    """(*out, ndim + 1) homogeneous (x, y[, z], 1) coordinates of the output pixel centres."""
    axes = [torch.arange(int(s), device=device, dtype=torch.float32) + 0.5 for s in out_spatial]
    grids = torch.meshgrid(*axes, indexing="ij") if axes else []
    xyz = list(reversed(grids))  # last spatial dim is x
    return torch.stack(xyz + [torch.ones_like(xyz[0])], dim=-1)


def _apply(matrices: torch.Tensor, p: torch.Tensor, rows: int) -> list[torch.Tensor]:
    """Rows of M @ p for (N, r, k) matrices and (*out, k) points, as elementwise float32 products
    summed left to right: the same bits on the CPU and on CUDA (no matmul reduction order, no
    TF32), and DALI's order."""
    n, k = matrices.shape[0], matrices.shape[-1]
    m = matrices.to(torch.float32).reshape(n, rows, k, *([1] * (p.dim() - 1)))
    out = []
    for j in range(rows):
        acc = m[:, j, 0] * p[..., 0]
        for i in range(1, k):
            acc = acc + m[:, j, i] * p[..., i]
        out.append(acc)
    return out


def affine_coords(matrices: torch.Tensor, out_spatial: Sequence[int], stepped: bool = False) -> torch.Tensor:
    """Source coordinates M @ (p + 0.5, 1) of each output pixel: matrices (N, nd, nd + 1)
    -> (N, *out, nd); `stepped`: as DALI's CPU backend computes them (`stepped_rows`)."""
    if stepped and out_spatial:
        return torch.stack(stepped_rows(matrices, out_spatial), dim=-1)
    p = pixel_centres(out_spatial, matrices.device)
    return torch.stack(_apply(matrices, p, matrices.shape[1]), dim=-1)


#: DALI's CPU backend walks an affine row in tiles of this many pixels (`stepped_rows`)
STEP_TILE = 256


def stepped_rows(matrices: torch.Tensor, out_spatial: Sequence[int]) -> list[torch.Tensor]:
    """Source x, y[, z] (N, *out) of 2D or 3D affine matrices (N, nd, nd + 1) as DALI's CPU backend
    computes them: a row's first pixel centre mapped (translation, then the x, y and z terms, DALI's
    `affine` order), then dM/dx added pixel by pixel in float32, the walk restarting every
    STEP_TILE pixels from a point stepped by STEP_TILE * dM/dx. A point on a pixel edge then falls
    on DALI's side of it (DALI's GPU backend maps each pixel: the unstepped `affine_coords`). The C
    helper's `affine_row_points` gives the same bits (2D)."""
    m = matrices.to(torch.float32)
    n, nd = int(m.shape[0]), int(m.shape[1])
    outer, out_w = [int(s) for s in out_spatial[:-1]], int(out_spatial[-1])
    if out_w == 0 or 0 in outer:  # an empty output: no points
        return list(torch.zeros((n, nd, *outer, out_w), device=m.device).unbind(1))
    centres = [torch.arange(s, device=m.device, dtype=torch.float32) + 0.5 for s in outer]
    grids = list(reversed(torch.meshgrid(*centres, indexing="ij"))) if centres else []  # y[, z]: (*outer)
    dx = m[:, :, 0].reshape(n, nd, *([1] * len(outer)))
    start = m[:, :, nd].reshape(dx.shape) + dx * 0.5
    for axis, g in enumerate(grids, start=1):
        start = start + m[:, :, axis].reshape(dx.shape) * g  # (N, nd, *outer)
    tiles = [start]
    for _ in range(1, -(-out_w // STEP_TILE)):
        tiles.append(tiles[-1] + dx * float(STEP_TILE))
    cols = [torch.stack(tiles, dim=-1)]  # (N, nd, *outer, tiles)
    step = dx.unsqueeze(-1)
    for _ in range(1, min(out_w, STEP_TILE)):
        cols.append(cols[-1] + step)
    s = torch.stack(cols, dim=-1).reshape(n, nd, *outer, -1)[..., :out_w]
    return list(s.unbind(1))


def perspective_coords(matrices: torch.Tensor, out_spatial: Sequence[int],
                       centre_origin: bool = False) -> torch.Tensor:
    """Source coordinates of each output pixel under 3x3 homographies (N, 3, 3): the divided
    (x, y); with `centre_origin` the matrix maps centred coordinates (pixel i at i) and so do
    the results (sample them with centred=True)."""
    p = pixel_centres(out_spatial, matrices.device)
    if centre_origin:
        p = p - torch.tensor([0.5, 0.5, 0.0], device=p.device)
    x, y, z = _apply(matrices, p, 3)
    return torch.stack([x / z, y / z], dim=-1)


def flat_centres(y: torch.Tensor, x: torch.Tensor) -> list[torch.Tensor | None]:
    """Homogeneous (x, y, 1) centres of output pixels given by integer (y, x) (a flat batch), the
    values `pixel_centres` gives; None stands for the 1s (m * 1 is m: no product needed)."""
    return [x.to(torch.float32) + 0.5, y.to(torch.float32) + 0.5, None]


def _apply_flat(matrices: torch.Tensor, ids: torch.Tensor, p: list[torch.Tensor | None], rows: int) -> list[torch.Tensor]:
    """`_apply` with each point's matrix that of its sample, ids (M,), from (N, r, k) matrices."""
    m = matrices.to(torch.float32)
    k = int(m.shape[-1])
    coef = m.reshape(m.shape[0], rows * k).t().contiguous().to(ids.device, non_blocking=True)  # (r * k, N)
    out = []
    for j in range(rows):
        acc = _term(coef[j * k].index_select(0, ids), p[0])
        for i in range(1, k):
            acc = acc + _term(coef[j * k + i].index_select(0, ids), p[i])
        out.append(acc)
    return out


def _term(c: torch.Tensor, p: torch.Tensor | None) -> torch.Tensor:
    return c if p is None else c * p


def affine_coords_flat(matrices: torch.Tensor, ids: torch.Tensor, y: torch.Tensor, x: torch.Tensor,
                       stepped: bool = False) -> torch.Tensor:
    """`affine_coords` of a flat batch of 2D outputs: the pixel (y, x) of sample ids -> (M, 2);
    `stepped`: read from `stepped_rows` of the largest output."""
    if stepped and ids.numel():
        sx, sy = stepped_rows(matrices, (int(y.max()) + 1, int(x.max()) + 1))
        return torch.stack([sx[ids, y, x], sy[ids, y, x]], dim=-1)
    return torch.stack(_apply_flat(matrices, ids, flat_centres(y, x), 2), dim=-1)


def perspective_coords_flat(matrices: torch.Tensor, ids: torch.Tensor, y: torch.Tensor, x: torch.Tensor,
                            centre_origin: bool = False) -> torch.Tensor:
    """`perspective_coords` of a flat batch: the pixel (y, x) of sample ids -> (M, 2)."""
    p = flat_centres(y, x)
    if centre_origin:
        p = [p[0] - 0.5, p[1] - 0.5, None]  # (x + 0.5) - 0.5, as `perspective_coords`; 1 - 0 is 1
    xx, yy, zz = _apply_flat(matrices, ids, p, 3)
    return torch.stack([xx / zz, yy / zz], dim=-1)


def warp(images: torch.Tensor, coords: torch.Tensor, interp: str, fill: float | Sequence[float] | None,
         out_dtype: torch.dtype | None = None, border: str = "constant", centred: bool = False,
         weight_bits: int | None = None) -> torch.Tensor:
    """`sample` with the fill given as numbers (one, or one per channel)."""
    images = nn_source(images, interp, fill, out_dtype)
    f = fill_values(fill, int(images.shape[-1]), images.dtype, images.device, out_dtype)
    return sample(images, coords, interp, f, out_dtype, border, centred, weight_bits)


def warp_flat(items: torch.Tensor, coords: torch.Tensor, sizes: Sequence[torch.Tensor], base: torch.Tensor,
              interp: str, fill: float | Sequence[float] | None, out_dtype: torch.dtype | None = None,
              border: str = "constant", centred: bool = False, weight_bits: int | None = None) -> torch.Tensor:
    """`sample_flat` with the fill given as numbers (one, or one per channel)."""
    items = nn_source(items, interp, fill, out_dtype)
    f = fill_values(fill, int(items.shape[-1]), items.dtype, items.device, out_dtype)
    return sample_flat(items, coords, sizes, base, interp, f, out_dtype, border, centred, weight_bits)


def warp_matrix(images: torch.Tensor, matrices: torch.Tensor, out_spatial: Sequence[int], interp: str,
                fill: float | Sequence[float] | None, out_dtype: torch.dtype | None = None,
                border: str = "constant", centred: bool = False, weight_bits: int | None = None) -> torch.Tensor:
    """`warp` at the points that matrices map each output pixel to: (N or 1, nd, nd + 1) affine
    (`affine_coords`, stepped for CPU images as DALI's CPU backend steps them) or (N or 1, 3, 3)
    homographies (`perspective_coords`, with `centred` for both
    the coordinates and the sampling); one matrix serves every image."""
    if matrices.shape[-1] == matrices.shape[-2]:
        coords = perspective_coords(matrices, out_spatial, centre_origin=centred)
    else:
        if centred:
            raise ValueError("affine matrices map corner-origin coordinates only")
        coords = affine_coords(matrices, out_spatial, stepped=images.device.type == "cpu")
    if coords.shape[0] != images.shape[0]:
        coords = coords.expand(images.shape[0], *coords.shape[1:])
    return warp(images, coords, interp, fill, out_dtype, border, centred, weight_bits)
