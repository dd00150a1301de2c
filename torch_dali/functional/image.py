"""Pixel helpers of the image decoders (pure torch, CPU and CUDA tensors): EXIF orientation, BT.601
YCbCr, range scaling to the output type, and CHW -> cropped, colour-converted HWC. The CPU and GPU
decode paths (`io.decode`, `io.nvjpeg`) finish every image with these, so both give the same pixels
for the same decoded image.
"""
from __future__ import annotations

import numpy as np
import torch

from .. import types

RGB, BGR, GRAY, YCBCR, ANY = (types.DALIImageType.RGB, types.DALIImageType.BGR,
                              types.DALIImageType.GRAY, types.DALIImageType.YCbCr,
                              types.DALIImageType.ANY_DATA)


def apply_orientation(chw: torch.Tensor, orientation: int) -> torch.Tensor:
    """Rectifies a CHW image stored with EXIF `orientation` (1..8)."""
    if orientation == 2:
        return chw.flip(2)
    if orientation == 3:
        return chw.flip(1, 2)
    if orientation == 4:
        return chw.flip(1)
    if orientation == 5:
        return chw.transpose(1, 2)
    if orientation == 6:
        return chw.transpose(1, 2).flip(2)
    if orientation == 7:
        return chw.transpose(1, 2).flip(1, 2)
    if orientation == 8:
        return chw.transpose(1, 2).flip(1)
    return chw


#: DALI 2.4's 8-bit YCbCr rows: full-range BT.601 scaled to studio swing (219/255 for Y, 224/255
#: for Cb and Cr), rounded to float32 once
_YCBCR8 = (np.array([[0.299, 0.587, 0.114], [-0.16873589, -0.33126411, 0.5], [0.5, -0.41868759, -0.08131241]])
           * np.array([[219 / 255], [224 / 255], [224 / 255]])).astype(np.float32).tolist()


def _ycbcr8(chw: torch.Tensor) -> torch.Tensor:
    """uint8 YCbCr as DALI 2.4's decoders make it, bit for bit (every pixel of 120,000 colours of
    BMP, PNM, PNG, TIFF, WebP and JPEG 2000 files): float32 products on the 0..255 values summed
    left to right, plus 16 or 128, rounded half up. The float64 studio-swing matrix was 1 off on
    ~1 in 10,000 pixels."""
    x = chw.float()
    rows = []
    for (a, b, c), off in zip(_YCBCR8, (16.0, 128.0, 128.0)):
        rows.append(x[0] * a + x[1] * b + x[2] * c + off)
    return torch.stack(rows).add_(0.5).floor_().clamp_(0, 255).to(torch.uint8)


def rgb_to_ycbcr(chw: torch.Tensor) -> torch.Tensor:
    """ITU-R BT.601 studio-swing YCbCr (Y in 16..235), as DALI; keeps the element type's range."""
    if chw.dtype == torch.uint8:
        return _ycbcr8(chw)
    if chw.dtype.is_floating_point:  # float samples (0..1): the 8-bit rows on 255 x, as uint8 (DALI
        # 2.4: equal on 2219 of 2220 values of -0.5..1.5; only decoders' uint8 YCbCr comes here)
        return _ycbcr8(chw.float() * 255)
    peak = 65535.0 if chw.dtype == torch.uint16 else 255.0
    x = chw.float() * (1.0 / peak)
    r, g, b = x[0], x[1], x[2]
    y = 16 / 255 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
    cb = 128 / 255 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
    cr = 128 / 255 + (112.0 * r - 93.786 * g - 18.214 * b) / 255
    out = torch.stack((y, cb, cr)).mul_(peak).round_().clamp_(0, peak)
    return out.to(chw.dtype)


def convert_range(hwc: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Scales a uint8/uint16 image to `dtype`'s dynamic range (float: [0, 1]), as DALI's `dtype`."""
    if hwc.dtype == dtype:
        return hwc
    if hwc.dtype.is_floating_point:  # float samples (a float TIFF): 0..1 is the range; DALI 2.4
        # scales in float32 and rounds halves up, saturating (measured on -0.5..1.5 and every k/255)
        if dtype.is_floating_point:
            return hwc.to(dtype)
        top = float(torch.iinfo(dtype).max)
        return (hwc.float() * top).add_(0.5).floor_().clamp_(0, top).to(dtype)
    peak = 65535.0 if hwc.dtype == torch.uint16 else 255.0
    if dtype.is_floating_point:
        return hwc.to(dtype) * (1.0 / peak)  # DALI multiplies by the reciprocal (x / 255 differs in the last bit)
    if hwc.dtype == torch.uint8 and dtype == torch.uint16:
        return hwc.to(torch.int32).mul_(257).to(dtype)
    if dtype in (torch.int8, torch.int32, torch.uint32):
        # DALI 2.4 (measured, every value of 8- and 16-bit images): float32 x * (1/peak), times the
        # type's max as float32 (2**31 and 2**32 for the 32-bit types), rounded, saturated
        n = hwc.to(torch.float32) * torch.tensor(1.0 / peak, dtype=torch.float32)
        v = (n * torch.tensor(float(torch.iinfo(dtype).max), dtype=torch.float32)).to(torch.float64)
        return v.add_(0.5).floor_().clamp_(0, torch.iinfo(dtype).max).to(dtype)
    top = float(torch.iinfo(dtype).max)
    return (hwc.to(torch.float64) * (top / peak)).round_().to(dtype)


def to_hwc(chw: torch.Tensor, output_type: types.DALIImageType,
            window: tuple[int, int, int, int] | None) -> torch.Tensor:
    """CHW as decoded (RGB, gray, or as stored for ANY_DATA) -> cropped, color-converted HWC.

    torchvision's CHW output is a view of an HWC buffer, so the permute is free. On the CPU the one
    copy is NumPy's: torch's intra-op threads inside the executor's sample threads measured up to
    ~3x slower for this copy on 2 cores."""
    if window is not None:
        y, x, h, w = window
        chw = chw[:, y:y + h, x:x + w]
    if output_type == YCBCR:
        chw = rgb_to_ycbcr(chw)
    hwc = chw.permute(1, 2, 0)
    if hwc.device.type == "cpu" and hwc.dtype in (torch.uint8, torch.uint16):
        a = hwc.numpy()
        if output_type == BGR:
            a = a[..., ::-1]
        return hwc if hwc.is_contiguous() and output_type != BGR else torch.from_numpy(np.ascontiguousarray(a))
    if output_type == BGR:
        hwc = hwc.flip(2)
    return hwc.contiguous()


#: BT.601 studio-swing matrix (rows Y, Cb, Cr) on RGB in [0, 1]; offsets below
_YCBCR = torch.tensor([[65.481, 128.553, 24.966], [-37.797, -74.203, 112.0], [112.0, -93.786, -18.214]],
                      dtype=torch.float64) / 255


def ycbcr_as(chw: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """YCbCr of an RGB CHW image straight into a non-uint8 `dtype`, as DALI's decoders make it:
    float in [0, 1] with offsets 1/16 (Y) and 1/2 (Cb, Cr); an integer type with the 8-bit offsets
    16 and 128 scaled by 2**(bits - 8) and the matrix applied in the type's range, rounded half up
    (DALI 2.4 differs by one unit on a fraction of a percent of the values there)."""
    peak = 65535.0 if chw.dtype == torch.uint16 else 1.0 if chw.dtype.is_floating_point else 255.0
    x = chw[:3].to(torch.float64) / peak
    ycc = torch.einsum("ij,jhw->ihw", _YCBCR.to(x.device), x)
    if dtype.is_floating_point:
        return ycc.add_(torch.tensor([0.0625, 0.5, 0.5], dtype=torch.float64, device=x.device)[:, None, None]).to(dtype)
    top = float(torch.iinfo(dtype).max)
    off = torch.tensor([16.0, 128.0, 128.0], dtype=torch.float64, device=x.device) * ((top + 1) / 256)
    return ycc.mul_(top).add_(off[:, None, None]).add_(0.5).floor_().clamp_(0, top).to(dtype)


def to_output(chw: torch.Tensor, output_type: types.DALIImageType,
              window: tuple[int, int, int, int] | None, dtype: torch.dtype) -> torch.Tensor:
    """A decoder's output: `to_hwc` then the range scaling to `dtype`; YCbCr into any other type
    than uint8 is computed in that type (`ycbcr_as`), not scaled from 8-bit YCbCr."""
    if output_type == YCBCR and dtype != torch.uint8:
        if window is not None:
            y, x, h, w = window
            chw = chw[:, y:y + h, x:x + w]
        return ycbcr_as(chw, dtype).permute(1, 2, 0).contiguous()
    return convert_range(to_hwc(chw, output_type, window), dtype)
