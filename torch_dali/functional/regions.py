"""Pure-torch region kernels: erase, pad, slice (with DALI's out-of-bounds policies) and paste.

Any layout, any device: tensors are indexed per axis, no per-element Python. Fill values follow
DALI 2.4's conversions, which differ by op (documented where used).
"""
from __future__ import annotations

import math
from typing import Sequence

import torch

from .crop import convert
from .half import to_half

SLICE_POLICIES = ("error", "pad", "constant", "edge", "clamp", "reflect", "reflect_1001",
                  "reflect_101", "wrap", "trim_to_shape")
#: the out-of-bounds policy names DALI 2.4's slice and crop take (measured), each to the policy it
#: names here: "error" and "trim_to_shape" only as written, the border names in any letter case
_POLICY_NAMES = {"pad": "pad", "constant": "constant", "const": "constant", "edge": "edge", "clamp": "clamp",
                 "reflect": "reflect", "reflect_1001": "reflect_1001", "reflect1001": "reflect_1001",
                 "1001": "reflect_1001", "reflect_101": "reflect_101", "reflect101": "reflect_101",
                 "101": "reflect_101", "wrap": "wrap"}
#: the policies that take pixels from inside the image (the rest fail, trim or fill)
BORDER_POLICIES = ("edge", "clamp", "reflect", "reflect_1001", "reflect_101", "wrap")


def oob_policy(name: object) -> str | None:
    """The policy an `out_of_bounds_policy` name means (one of SLICE_POLICIES); None if DALI refuses it."""
    if name in ("error", "trim_to_shape"):
        return name  # type: ignore[return-value]
    return _POLICY_NAMES.get(name.lower()) if isinstance(name, str) else None


def oob_policy_check(v: object) -> str | None:
    """An Arg check: None for a name `oob_policy` takes, else what is expected."""
    return None if oob_policy(v) else ("one of 'error', 'trim_to_shape', or (any letter case) " +
                                       ", ".join(repr(k) for k in _POLICY_NAMES))


def c_cast(values: Sequence[float], dtype: torch.dtype, device: torch.device | str = "cpu") -> torch.Tensor:
    """float -> `dtype` as C's static_cast does on x86 (what DALI 2.4's erase, pad and slice do
    with fill values): truncate toward zero, then keep the low bits (300 -> 44 for uint8, -1 -> 255);
    a value outside int32 becomes INT32_MIN first (the x86 "integer indefinite")."""
    t = torch.tensor([float(v) for v in values], dtype=torch.float64)
    if dtype == torch.float16:
        return to_half(t).to(device)  # through float32, halfway cases away from zero (DALI's CPU)
    if dtype.is_floating_point:
        return t.to(dtype).to(device)
    if dtype == torch.bool:
        return (t != 0).to(device)
    bits = torch.iinfo(dtype).bits
    lim = 2.0 ** 63 if bits == 64 else 2.0 ** 31
    whole = torch.where((t >= -lim) & (t < lim) & ~torch.isnan(t), t.trunc(), torch.full_like(t, -lim))
    return whole.to(torch.int64).to(dtype).to(device)  # int64 -> narrower wraps (two's complement)


def channel_fill(fill: torch.Tensor, ndim: int, channel_dim: int) -> torch.Tensor:
    """A fill vector shaped to broadcast over a tensor of `ndim` dims along `channel_dim`
    (one value broadcasts everywhere)."""
    if fill.numel() == 1 or channel_dim < 0:
        return fill.reshape(())
    shape = [1] * ndim
    shape[channel_dim] = fill.numel()
    return fill.reshape(shape)


def erase(x: torch.Tensor, regions: Sequence[tuple[Sequence[int], Sequence[int]]],
          fill: torch.Tensor, channel_dim: int) -> torch.Tensor:
    """x with each region [start, end) (per dim, clipped to the tensor) set to `fill`."""
    out = x.clone()
    f = channel_fill(fill.to(x.device), x.dim(), channel_dim)
    for start, end in regions:
        idx = tuple(slice(max(0, int(s)), min(int(n), max(0, int(e)))) for s, e, n in zip(start, end, x.shape))
        view = out[idx]
        if view.numel():
            if f.dim():
                fi = [slice(None)] * x.dim()
                fi[channel_dim] = idx[channel_dim]
                view.copy_(f[tuple(fi)].expand_as(view))
            else:
                view.fill_(f)
    return out


def pad(x: torch.Tensor, out_shape: Sequence[int], fill: torch.Tensor) -> torch.Tensor:
    """x at the origin of a canvas of `out_shape` (each extent >= x's) filled with `fill`."""
    if tuple(out_shape) == tuple(x.shape):
        return x
    out = fill.to(device=x.device, dtype=x.dtype).reshape(()).expand(tuple(out_shape)).clone()
    out[tuple(slice(0, int(n)) for n in x.shape)] = x
    return out


def _axis_index(start: int, length: int, n: int, policy: str) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Source indices along one axis for output positions start .. start + length - 1, and a mask
    of the in-bounds positions for "pad" (None when all are in bounds or none need a fill)."""
    i = torch.arange(start, start + length, dtype=torch.int64)
    inside = (i >= 0) & (i < n)
    if bool(inside.all()):
        return i, None
    if n == 0:
        raise ValueError("cannot sample outside an empty axis")
    if policy in ("pad", "constant"):
        return i.clamp(0, n - 1), inside
    if policy in ("edge", "clamp"):
        return i.clamp(0, n - 1), None
    if policy in ("reflect", "reflect_1001"):  # ... 1 0 | 0 1 2 .. n-1 | n-1 n-2 ...
        m = torch.remainder(i, 2 * n)
        return torch.where(m < n, m, 2 * n - 1 - m), None
    if policy == "reflect_101":  # ... 2 1 | 0 1 2 .. n-1 | n-2 ...
        if n == 1:
            return torch.zeros_like(i), None
        m = torch.remainder(i, 2 * n - 2)
        return torch.where(m < n, m, 2 * n - 2 - m), None
    if policy == "wrap":
        return torch.remainder(i, n), None
    raise ValueError(f"unknown out-of-bounds policy {policy!r}")


def slice_window(x: torch.Tensor, anchor: Sequence[int], shape: Sequence[int], policy: str,
                 fill: torch.Tensor | None = None, channel_dim: int = -1) -> torch.Tensor:
    """The window [anchor, anchor + shape) of x, per dim; parts outside x follow `policy`
    ("error" must have been checked by the caller; "trim_to_shape" too)."""
    if all(0 <= a and a + s <= n for a, s, n in zip(anchor, shape, x.shape)):
        return x[tuple(slice(int(a), int(a) + int(s)) for a, s in zip(anchor, shape))]
    if x.numel() == 0 and policy in ("pad", "constant"):  # nothing to read: all fill (DALI 2.4)
        f = channel_fill((fill if fill is not None else torch.zeros(1)).to(device=x.device, dtype=x.dtype),
                         x.dim(), channel_dim)
        return f.expand([int(s) for s in shape]).clone()
    out = x
    mask: torch.Tensor | None = None
    for d, (a, s, n) in enumerate(zip(anchor, shape, x.shape)):
        if 0 <= a and a + s <= n:
            out = out.narrow(d, int(a), int(s))
            continue
        idx, inside = _axis_index(int(a), int(s), int(n), policy)
        out = out.index_select(d, idx.to(x.device))
        if inside is not None:
            view = [1] * x.dim()
            view[d] = int(s)
            m = inside.to(x.device).reshape(view)
            mask = m if mask is None else mask & m
    if mask is not None:
        f = channel_fill((fill if fill is not None else torch.zeros(1)).to(device=x.device, dtype=out.dtype),
                         x.dim(), channel_dim)
        out = torch.where(mask, out, f)
    return out


def trim(anchor: Sequence[int], shape: Sequence[int], in_shape: Sequence[int]) -> tuple[list[int], list[int]]:
    """The part of the window inside the tensor (DALI's "trim_to_shape")."""
    a = [min(max(0, int(s0)), int(n)) for s0, n in zip(anchor, in_shape)]
    e = [min(max(0, int(s0) + int(k)), int(n)) for s0, k, n in zip(anchor, shape, in_shape)]
    return a, [max(0, hi - lo) for lo, hi in zip(a, e)]


def paste_geometry(in_h: int, in_w: int, ratio: float, min_canvas: float, paste_y: float,
                   paste_x: float) -> tuple[int, int, int, int]:
    """(out_h, out_w, y, x) as DALI's Paste: canvas = max(in * ratio, min_canvas_size) and the
    offset paste_* * (out - in), both computed in float32 and truncated."""
    f32 = torch.float32
    r, m = torch.tensor(ratio, dtype=f32), torch.tensor(min_canvas, dtype=f32)
    out_h = int(torch.maximum(torch.tensor(in_h, dtype=f32) * r, m))
    out_w = int(torch.maximum(torch.tensor(in_w, dtype=f32) * r, m))
    y = int(torch.tensor(paste_y, dtype=f32) * (out_h - in_h))
    x = int(torch.tensor(paste_x, dtype=f32) * (out_w - in_w))
    return out_h, out_w, y, x


def paste(x: torch.Tensor, out_h: int, out_w: int, y: int, x0: int, fill: torch.Tensor) -> torch.Tensor:
    """An HWC image placed at (y, x0) on an (out_h, out_w) canvas of the per-channel `fill`."""
    c = int(x.shape[2])
    out = fill.to(device=x.device, dtype=x.dtype).reshape(1, 1, c).expand(out_h, out_w, c).clone()
    out[y:y + x.shape[0], x0:x0 + x.shape[1]] = x
    return out


def to_type(x: torch.Tensor, dtype: torch.dtype | None) -> torch.Tensor:
    """DALI's ConvertSat: rounding half away from zero and saturating for integer outputs."""
    return x if dtype is None or x.dtype == dtype else convert(x, dtype)


def finite(*vals: float) -> bool:
    return all(math.isfinite(float(v)) for v in vals)
