"""Pure-torch image resizing (HWC tensors, any device) and DALI's output-size rules.

Resampling notes (how DALI's filters map onto torch):
- linear: `interpolate(mode="bilinear", align_corners=False)`; with `antialias` the downscaling
  filter widens to a triangle, which is also DALI's `INTERP_TRIANGULAR`.
- nn: gathers source index floor((i + 0.5) * in / out) (float32), as DALI picks columns.
- cubic: torch's antialiased bicubic (Keys a=-0.5, as DALI) when `antialias`, else torch's plain
  bicubic (a=-0.75).
- lanczos3 and gaussian have no torch kernel: lanczos3 uses antialiased bicubic (closest sharpness),
  gaussian uses antialiased bilinear (a smooth, non-ringing filter). Expect a few levels of
  difference from DALI on noisy images.
- `subpixel_scale` (DALI shifts the source window when a size is fractional) is not modelled: the
  scale used is out_size / in_size, which moves samples by under half an output pixel.
"""
from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F

from .crop import convert, f32, round_half_away

Size2 = tuple[int, int]

_TORCH_MODE = {"linear": "bilinear", "triangular": "bilinear", "gaussian": "bilinear",
               "cubic": "bicubic", "lanczos3": "bicubic", "nn": "nn"}


def _max_sizes(max_size: float | Sequence[float] | None) -> tuple[float, float] | None:
    if max_size is None:
        return None
    if isinstance(max_size, (int, float)):
        return (float(max_size), float(max_size))
    ms = [float(m) for m in max_size]
    return (ms[0], ms[0]) if len(ms) == 1 else (ms[0], ms[1])


def output_size(in_h: int, in_w: int, *, resize_x: float = 0.0, resize_y: float = 0.0,
                resize_shorter: float = 0.0, resize_longer: float = 0.0,
                size: Sequence[float] | None = None, max_size: float | Sequence[float] | None = None,
                mode: str = "default") -> Size2:
    """The (height, width) DALI's Resize produces for an (in_h, in_w) image.

    `size` and `max_size` are in (height, width) order; 0 leaves a dimension unspecified.
    `resize_shorter` acts as mode "not_smaller" and `resize_longer` as "not_larger" on both
    dimensions; max_size then caps the scale uniformly. In "default" mode an unspecified
    dimension keeps the aspect ratio and max_size caps each dimension on its own.
    """
    req: list[float] = [0.0, 0.0]
    if size is not None:
        s = [abs(f32(v)) for v in size]
        req = [s[0], s[0]] if len(s) == 1 else [s[0], s[1]]
    elif resize_shorter:
        req, mode = [abs(f32(resize_shorter))] * 2, "not_smaller"
    elif resize_longer:
        req, mode = [abs(f32(resize_longer))] * 2, "not_larger"
    else:
        req = [abs(f32(resize_y)), abs(f32(resize_x))]
    ins = (float(in_h), float(in_w))
    caps = _max_sizes(max_size)
    given = [k for k in range(2) if req[k] > 0]
    if not given:
        return in_h, in_w
    # scales are kept as (numerator, denominator): in * num / den rounds as DALI does at ties
    if mode in ("not_smaller", "not_larger"):
        cands = [(req[k], ins[k]) for k in given]
        pick = max if mode == "not_smaller" else min
        num, den = pick(cands, key=lambda c: c[0] / c[1])
        if caps is not None:
            num, den = min([(num, den)] + [(caps[k], ins[k]) for k in range(2) if caps[k] > 0],
                           key=lambda c: c[0] / c[1])
        out = [ins[k] * num / den for k in range(2)]
    else:
        out = list(req)
        for k in range(2):
            if out[k] <= 0:
                out[k] = ins[k] if mode == "stretch" else ins[k] * req[given[0]] / ins[given[0]]
        if caps is not None:
            out = [min(o, c) if c > 0 else o for o, c in zip(out, caps)]
    return max(1, round_half_away(out[0])), max(1, round_half_away(out[1]))


def _nn_index(n_in: int, n_out: int, device: torch.device) -> torch.Tensor:
    """Source index of each output pixel: floor((i + 0.5) * (n_in / n_out)) in float32, as DALI
    computes it (DALI's row positions can land one lower at exact ties)."""
    scale = torch.tensor(float(n_in), dtype=torch.float32) / float(n_out)
    i = torch.arange(n_out, device=device, dtype=torch.float32)
    return ((i + 0.5) * scale.to(device)).floor_().to(torch.int64).clamp_(0, n_in - 1)


def _interp(x: torch.Tensor, size: Size2, mode: str, antialias: bool) -> torch.Tensor:
    """x is (1, C, H, W); float unless it is uint8 bilinear on the CPU (torch's fast path)."""
    if mode == "nn":
        return x.index_select(2, _nn_index(x.shape[2], size[0], x.device)) \
                .index_select(3, _nn_index(x.shape[3], size[1], x.device))
    aa = antialias and (size[0] < x.shape[2] or size[1] < x.shape[3] or mode == "bicubic")
    return F.interpolate(x, size=size, mode=mode, align_corners=False, antialias=aa)


def resize(image: torch.Tensor, size: Size2, interp: str = "linear", antialias: bool = True,
           min_filter: str | None = None, mag_filter: str | None = None,
           dtype: torch.dtype | None = None) -> torch.Tensor:
    """Resizes one HWC (or HW) image to `size` = (height, width).

    `interp` names a DALI filter ("nn", "linear", "cubic", "lanczos3", "triangular", "gaussian");
    `min_filter` / `mag_filter` override it for dimensions that shrink / grow. The result has
    `dtype` (default: the input's); integer outputs are rounded half away from zero and saturated.
    """
    out_dtype = dtype or image.dtype
    squeeze = image.dim() == 2
    hwc = image.unsqueeze(-1) if squeeze else image
    in_h, in_w = int(hwc.shape[0]), int(hwc.shape[1])
    out_h, out_w = int(size[0]), int(size[1])
    if out_h <= 0 or out_w <= 0:
        raise ValueError(f"resize: output size must be positive, got {(out_h, out_w)}")
    modes = []
    for n_in, n_out in ((in_h, out_h), (in_w, out_w)):
        name = (min_filter if n_out < n_in else mag_filter) or interp
        modes.append(_TORCH_MODE[name] if n_in != n_out else None)
    x = hwc.permute(2, 0, 1).unsqueeze(0)  # (1, C, H, W), channels-last in memory
    keep_u8 = (x.dtype == torch.uint8 and out_dtype == torch.uint8 and x.device.type == "cpu"
               and set(modes) <= {"bilinear", "nn", None})  # torch's exact, fast uint8 kernels
    filtering = any(m not in (None, "nn") for m in modes)  # nn only gathers: any dtype works
    if not keep_u8 and filtering and x.dtype not in (torch.float32, torch.float64):
        x = x.float()
    if modes[0] is None and modes[1] is None:
        y = x
    elif modes[0] == modes[1] or None in modes:
        y = _interp(x, (out_h, out_w), modes[0] or modes[1], antialias)
    else:  # different filters per axis: one axis at a time
        y = _interp(x, (out_h, in_w), modes[0], antialias)
        y = _interp(y, (out_h, out_w), modes[1], antialias)
    out = convert(y[0].permute(1, 2, 0), out_dtype).contiguous()
    return out.squeeze(-1) if squeeze else out
