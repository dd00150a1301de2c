"""The functional pixel transforms: gaussian_blur, normalize, to_grayscale / rgb_to_grayscale."""
from __future__ import annotations

from typing import Any, List, Sequence

from .... import dynamic as ndd
from ..color import Grayscale, to_gray
from ..gaussian_blur import GaussianBlur
from ..normalize import Normalize, per_channel
from ..operator import ValidateIsTensor, adjust_input, get_HWC_from_layout_dynamic


@adjust_input
def gaussian_blur(inpt: Any, kernel_size: int | Sequence[int], sigma: Any = (0.1, 2.0), device: Any = "cpu") -> Any:
    GaussianBlur.verify_args(kernel_size=kernel_size, sigma=sigma)
    lo, hi = (sigma, sigma) if isinstance(sigma, (int, float)) else sigma
    drawn = lo if lo == hi else ndd.random.uniform(range=(lo, hi))
    return ndd.gaussian_blur(inpt, window_size=kernel_size, sigma=drawn, device=device)


@adjust_input
def _normalize(inpt: Any, mean: Any, std: Any, device: Any = "cpu") -> Any:
    # torchvision normalizes CHW only; an HWC input (not reachable from a tensor) would be channel-last
    channel_last = not (inpt.layout or "").endswith("CHW")
    return ndd.normalize(inpt, mean=per_channel(mean, channel_last), stddev=per_channel(std, channel_last),
                         device=device)


def normalize(input_data: Any, mean: List[float], std: List[float], inplace: bool = False,
              device: Any = "cpu") -> Any:
    """(x - mean[c]) / std[c] for a tensor ([..., C, H, W]); see `Normalize`."""
    Normalize.verify_args(std=std, mean=mean)
    ValidateIsTensor.verify(input_data)
    if inplace:
        raise NotImplementedError("normalize(inplace=True) is not supported")
    return _normalize(input_data, mean=mean, std=std, device=device)


def _grayscale(inpt: Any, num_output_channels: int, device: Any) -> Any:
    Grayscale.verify_args(num_output_channels=num_output_channels)
    _, _, channels = get_HWC_from_layout_dynamic(inpt)
    return to_gray(inpt, channels, num_output_channels, device, ndd.cat, ndd.color_space_conversion, ndd.hsv)


@adjust_input
def to_grayscale(inpt: Any, num_output_channels: int = 1, device: Any = "cpu") -> Any:
    return _grayscale(inpt, num_output_channels, device)


@adjust_input
def rgb_to_grayscale(inpt: Any, num_output_channels: int = 1, device: Any = "cpu") -> Any:
    return _grayscale(inpt, num_output_channels, device)
