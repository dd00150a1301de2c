"""The functional geometric transforms: center_crop, resize, pad, horizontal_flip, vertical_flip
(one dynamic-mode call each; `adjust_input` converts PIL images and tensors in and out)."""
from __future__ import annotations

from typing import Any, List, Literal, Optional

import torch
from PIL import Image

from .... import dynamic as ndd
from .._enums import InterpolationMode
from ..centercrop import CenterCrop
from ..operator import ValidateIfNonNegative, adjust_input, get_HWC_from_layout_dynamic
from ..pad import PADDING_CLASS, PadBase, ValidatePaddingMode
from ..resize import Resize


def _centered_fraction(slack: int) -> float:
    """fn.crop's relative position for torchvision's offset round(slack / 2); 0.5 when padding."""
    return int(round(slack / 2.0)) / slack if slack > 0 else 0.5


@adjust_input
def center_crop(inpt: Any, output_size: int | List[int], device: Any = "cpu") -> Any:
    CenterCrop.verify_args(size=output_size)
    crop_h, crop_w = CenterCrop.adjust_size(output_size)
    in_h, in_w, _ = get_HWC_from_layout_dynamic(inpt)
    return ndd.crop(inpt, device=device, crop=(crop_h, crop_w), crop_pos_y=_centered_fraction(in_h - crop_h),
                    crop_pos_x=_centered_fraction(in_w - crop_w), out_of_bounds_policy="pad", fill_values=0)


@adjust_input
def resize(inpt: Any, size: List[int], interpolation: Any = InterpolationMode.BILINEAR,
           max_size: Optional[int] = None, antialias: Optional[bool] = True, device: Any = "cpu") -> Any:
    mode = Resize.normalize_interpolation(interpolation)
    Resize.verify_args(size=size, max_size=max_size, interpolation=mode, antialias=antialias)
    in_h, in_w, _ = get_HWC_from_layout_dynamic(inpt)
    out_hw = Resize.calculate_target_size_dynamic_mode((in_h, in_w), Resize.infer_effective_size(size), max_size)
    return ndd.resize(inpt, device=device, size=out_hw, interp_type=Resize.interpolation_modes[mode],
                      antialias=antialias)


@adjust_input
def pad_image(inpt: Any, padding: Any, fill: Any = 0, axes: Any = (-3, -2), padding_mode: str = "constant",
         device: Any = "cpu") -> Any:
    left, top, right, bottom = PadBase.get_padding(padding)
    in_h, in_w, _ = get_HWC_from_layout_dynamic(inpt)
    return ndd.slice(inpt, (-top, -left), (in_h + top + bottom, in_w + left + right),
                     out_of_bounds_policy=PADDING_CLASS[padding_mode].border_type, fill_values=fill,
                     axes=list(axes), device=device)


def pad(inpt: Any, padding: List[int], fill: Any = 0,
        padding_mode: Literal["constant", "edge", "reflect", "symmetric"] = "constant", device: Any = "cpu") -> Any:
    """Pads the borders (see `Pad`)."""
    if isinstance(inpt, Image.Image):
        axes = (-3, -2)
    elif isinstance(inpt, torch.Tensor):
        axes = (-2, -1)
    else:
        raise TypeError(f"pad does not take {type(inpt).__name__}")
    ValidatePaddingMode.verify(padding_mode=padding_mode)
    ValidateIfNonNegative.verify(values=padding, name="padding")
    return pad_image(inpt, padding=padding, fill=fill, axes=axes, padding_mode=padding_mode, device=device)


@adjust_input
def horizontal_flip(inpt: Any, device: Any = "cpu") -> Any:
    return ndd.flip(inpt, horizontal=1, vertical=0, device=device)


@adjust_input
def vertical_flip(inpt: Any, device: Any = "cpu") -> Any:
    return ndd.flip(inpt, horizontal=0, vertical=1, device=device)
