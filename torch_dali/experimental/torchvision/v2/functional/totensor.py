"""PIL image <-> tensor conversions (NumPy and torch only, no operators), as torchvision's."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
from PIL import Image

# PIL modes whose pixels are not uint8
_MODE_DTYPES = {"I": np.int32, "I;16": np.int16, "I:16": np.int16, "F": np.float32}
_MODES_BY_CHANNELS = {1: "L", 3: "RGB", 4: "RGBA"}


def _pil_array(img: Image.Image) -> tuple[np.ndarray, bool]:
    """The image as HWC, and whether its values are uint8 (mode "1" as 0 / 255)."""
    dtype = _MODE_DTYPES.get(img.mode, np.uint8)
    arr = np.array(img, dtype=dtype, copy=True)
    if img.mode == "1":
        arr = arr * 255
    return (arr[..., None] if arr.ndim == 2 else arr), dtype is np.uint8


def pil_to_tensor(inpt: Image.Image) -> torch.Tensor:
    """A CHW tensor of the image's values (uint8 for 8-bit modes), not scaled."""
    if not isinstance(inpt, Image.Image):
        raise TypeError(f"pil_to_tensor takes a PIL image, got {type(inpt).__name__}")
    arr, _ = _pil_array(inpt)
    return torch.from_numpy(arr).permute(2, 0, 1).contiguous()


def to_tensor(inpt: Image.Image | np.ndarray) -> torch.Tensor:
    """A CHW tensor; uint8 data becomes float32 in [0, 1], other types keep their values."""
    if isinstance(inpt, np.ndarray):
        arr, is_uint8 = (inpt[..., None] if inpt.ndim == 2 else inpt), inpt.dtype == np.uint8
    elif isinstance(inpt, Image.Image):
        arr, is_uint8 = _pil_array(inpt)
    else:
        raise TypeError(f"to_tensor takes a PIL image or a NumPy array, got {type(inpt).__name__}")
    chw = torch.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
    return chw.to(torch.float32).div(255.0) if is_uint8 else chw


def to_pil_image(inpt: torch.Tensor, mode: str | None = None, input_layout: str = "CHW") -> Image.Image:
    """A PIL image from a CHW (or, with `input_layout="HWC"`, HWC) tensor; the mode follows the
    channel count (1: L, 3: RGB, 4: RGBA) unless given; floats are scaled by 255 and truncated."""
    if not isinstance(inpt, torch.Tensor):
        raise TypeError(f"to_pil_image takes a torch.Tensor, got {type(inpt).__name__}")
    if inpt.ndim != 3:
        raise ValueError(f"to_pil_image takes a 3-dimensional tensor, got shape {tuple(inpt.shape)}")
    if inpt.dtype not in (torch.uint8, torch.int8, torch.uint16, torch.int16, torch.float32):
        raise TypeError(f"to_pil_image does not take {inpt.dtype} data")
    hwc = inpt if input_layout == "HWC" else inpt.permute(1, 2, 0)
    arr = hwc.cpu().numpy()
    if mode is None:
        if arr.shape[-1] not in _MODES_BY_CHANNELS:
            raise ValueError(f"no PIL mode for {arr.shape[-1]} channels; pass `mode`")
        mode = _MODES_BY_CHANNELS[arr.shape[-1]]
    if np.issubdtype(arr.dtype, np.floating) and mode != "F":
        arr = (arr * 255).clip(0, 255).astype(np.uint8)
    if mode == "L":
        arr = arr[..., 0]
    return Image.fromarray(arr, mode=mode)
