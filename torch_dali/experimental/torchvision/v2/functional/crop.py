"""`crop` and `resized_crop`: a window at (top, left) of (height, width), zero-padded where it
leaves the image; `resized_crop` then resizes it. PIL images take real coordinates (rounded as
PIL's crop box is), tensors integers only, as torchvision."""
from __future__ import annotations

import operator
from typing import Any, List

from .... import dynamic as ndd
from .._enums import InterpolationMode
from ..operator import adjust_input
from ..randomcrop import RandomCrop
from ..resize import Resize


def _integer(value: Any, name: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None


def _pil_box(top: Any, left: Any, height: Any, width: Any) -> tuple[int, int, int, int]:
    try:
        t, l_, b, r = (int(round(v)) for v in (top, left, top + height, left + width))
    except TypeError:
        raise TypeError("for a PIL image, top, left, height and width must be real numbers") from None
    return t, l_, b - t, r - l_


def _window(inpt: Any, top: Any, left: Any, height: Any, width: Any) -> tuple[int, int, int, int]:
    if (inpt.layout or "").endswith("HWC"):  # a PIL image
        return _pil_box(top, left, height, width)
    return tuple(_integer(v, n) for v, n in ((top, "top"), (left, "left"), (height, "height"),  # type: ignore
                                             (width, "width")))


def _check_window(height: int, width: int) -> None:
    RandomCrop.verify_args(size=(height, width), padding=None, pad_if_needed=False, padding_mode="constant", fill=0)


def _crop(inpt: Any, top: int, left: int, height: int, width: int, device: Any = "cpu") -> Any:
    axes = [-3, -2] if (inpt.layout or "").endswith("HWC") else [-2, -1]
    return ndd.slice(inpt, (top, left), (height, width), axes=axes, out_of_bounds_policy="pad", fill_values=0,
                     device=device)


@adjust_input
def crop(inpt: Any, top: Any, left: Any, height: Any, width: Any, device: Any = "cpu") -> Any:
    top, left, height, width = _window(inpt, top, left, height, width)
    _check_window(height, width)
    return _crop(inpt, top, left, height, width, device=device)


@adjust_input
def resized_crop(inpt: Any, top: int, left: int, height: int, width: int, size: int | List[int],
                 interpolation: Any = InterpolationMode.BILINEAR, antialias: bool = True, device: Any = "cpu") -> Any:
    top, left, height, width = _window(inpt, top, left, height, width)
    _check_window(height, width)
    mode = Resize.normalize_interpolation(interpolation)
    Resize.verify_args(size=size, max_size=None, interpolation=mode, antialias=antialias)
    window = _crop(inpt, top, left, height, width, device=device)
    out_hw = Resize.calculate_target_size_dynamic_mode((height, width), Resize.infer_effective_size(size), None)
    return ndd.resize(window, device=device, size=out_hw, interp_type=Resize.interpolation_modes[mode],
                      antialias=antialias)
