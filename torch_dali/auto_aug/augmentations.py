"""The standard augmentations of AutoAugment (ImageNet policy), RandAugment and TrivialAugment,
written with torch_dali ops, for uint8 images (HWC) and videos (FHWC).

Each is an `Augmentation` (see `core.augmentation`): call it as
`shear_x(images, magnitude_bin=b, num_magnitude_bins=n)`; the magnitude ranges below are the
defaults each automatic augmentation adjusts (`shear_x.augmentation(mag_range=(0, 0.5))` gives a
copy with another range). The geometric ones take `fill_value` (128; None repeats the border) and
`interp_type` (linear by default); `translate_x`/`translate_y` take `shape` (the image's height
and width, e.g. from `fn.peek_image_shape`) and move by a fraction of it, their `_no_shape`
variants by a number of pixels.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import fn, types
from ..errors import ArgumentError
from ..graph.node import DataNode
from .core import augmentation


# -- magnitude -> parameter ----------------------------------------------------------------------------

def warp_x_param(magnitude: Any) -> list[Any]:
    """A horizontal shear or shift: (x, y) = (magnitude, 0)."""
    return [magnitude, 0]


def warp_y_param(magnitude: Any) -> list[Any]:
    """A vertical shear or shift: (x, y) = (0, magnitude)."""
    return [0, magnitude]


def shift_enhance_range(magnitude: Any) -> Any:
    """Brightness, contrast, color and sharpness are neutral at 1 and take [0, 2]: their
    magnitudes are given in [0, 1], negated at random, and moved up by 1."""
    return 1 + magnitude


def sharpness_kernel(magnitude: Any) -> np.ndarray:
    """The 3x3 filter of a sharpness change by `magnitude` in [-1, 1]: the identity pushed away
    from (positive) or toward (negative) PIL's smoothing filter."""
    smooth = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], dtype=np.float32) / 13
    same = np.zeros((3, 3), dtype=np.float32)
    same[1, 1] = 1
    return (1 + magnitude) * same - magnitude * smooth


def sharpness_kernel_shifted(magnitude: Any) -> np.ndarray:
    """`sharpness_kernel` for a magnitude in [0, 2] (1 is neutral), as PIL's enhance factor."""
    return sharpness_kernel(magnitude - 1)


def poster_mask_uint8(magnitude: Any) -> np.ndarray:
    """The bit mask keeping the `magnitude` (rounded, clamped to [1, 8]) highest bits of a byte.
    0 bits would blank the image, so it counts as 1, as in the RandAugment paper's code."""
    bits = int(np.clip(np.round(magnitude), 1, 8))
    return np.array(0xFF & ~((1 << (8 - bits)) - 1), dtype=np.uint8)


def solarize_add_shift(shift: Any) -> np.ndarray:
    if shift >= 128:
        raise ArgumentError(f"solarize_add: the shift must be in [0, 128), got {shift}")
    return np.uint8(shift)


# -- geometry: warp_affine / rotate -----------------------------------------------------------------------

def _warp(data: DataNode, matrix: DataNode, fill_value: Any, interp_type: Any) -> DataNode:
    # `matrix` maps input to output coordinates (inverse_map=False), as the transforms make it
    return fn.warp_affine(data, matrix=matrix, fill_value=fill_value, interp_type=interp_type, inverse_map=False)


@augmentation(mag_range=(0, 0.3), randomly_negate=True, mag_to_param=warp_x_param)
def shear_x(data: DataNode, shear: Any, fill_value: Any = 128, interp_type: Any = None) -> DataNode:
    return _warp(data, fn.transforms.shear(shear=shear), fill_value, interp_type)


@augmentation(mag_range=(0, 0.3), randomly_negate=True, mag_to_param=warp_y_param)
def shear_y(data: DataNode, shear: Any, fill_value: Any = 128, interp_type: Any = None) -> DataNode:
    return _warp(data, fn.transforms.shear(shear=shear), fill_value, interp_type)


@augmentation(mag_range=(0.0, 1.0), randomly_negate=True, mag_to_param=warp_x_param)
def translate_x(data: DataNode, rel_offset: Any, shape: Any, fill_value: Any = 128, interp_type: Any = None) -> DataNode:
    # shape is (height, width, ...): the width scales the x offset
    return _warp(data, fn.transforms.translation(offset=rel_offset * shape[1]), fill_value, interp_type)


@augmentation(mag_range=(0, 250), randomly_negate=True, mag_to_param=warp_x_param, name="translate_x")
def translate_x_no_shape(data: DataNode, offset: Any, fill_value: Any = 128, interp_type: Any = None) -> DataNode:
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0.0, 1.0), randomly_negate=True, mag_to_param=warp_y_param)
def translate_y(data: DataNode, rel_offset: Any, shape: Any, fill_value: Any = 128, interp_type: Any = None) -> DataNode:
    return _warp(data, fn.transforms.translation(offset=rel_offset * shape[0]), fill_value, interp_type)


@augmentation(mag_range=(0, 250), randomly_negate=True, mag_to_param=warp_y_param, name="translate_y")
def translate_y_no_shape(data: DataNode, offset: Any, fill_value: Any = 128, interp_type: Any = None) -> DataNode:
    return _warp(data, fn.transforms.translation(offset=offset), fill_value, interp_type)


@augmentation(mag_range=(0, 30), randomly_negate=True)
def rotate(data: DataNode, angle: Any, fill_value: Any = 128, interp_type: Any = None,
           rotate_keep_size: bool = True) -> DataNode:
    return fn.rotate(data, angle=angle, fill_value=fill_value, interp_type=interp_type, keep_size=rotate_keep_size)


# -- color ---------------------------------------------------------------------------------------------

@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def brightness(data: DataNode, parameter: Any) -> DataNode:
    return fn.brightness(data, brightness=parameter)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def contrast(data: DataNode, parameter: Any) -> DataNode:
    """PIL's contrast: pixels move away from (or toward) one gray level, the luma-weighted mean
    of the image (of each frame, for videos). Assumes HWC or FHWC."""
    per_channel = fn.reductions.mean(data, axis_names="HW", keep_dims=True)
    luma = types.Constant(np.array([0.299, 0.587, 0.114], dtype=np.float32))
    gray = fn.reductions.sum(per_channel * luma, axis_names="C", keep_dims=True)
    # arithmetic rather than fn.contrast(contrast_center=gray): a center computed on the GPU
    # could not be passed as an argument
    return fn.cast_like(gray + (data - gray) * parameter, data)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=shift_enhance_range)
def color(data: DataNode, parameter: Any) -> DataNode:
    return fn.saturation(data, saturation=parameter)


@augmentation(mag_range=(0, 0.9), randomly_negate=True, mag_to_param=sharpness_kernel, param_device="auto")
def sharpness(data: DataNode, kernel: Any) -> DataNode:
    """PIL's sharpness, except at the one-pixel border (PIL copies the input there; here the
    filter sees the image reflected)."""
    return fn.experimental.filter(data, kernel)


@augmentation(mag_range=(0, 4), mag_to_param=poster_mask_uint8, param_device="auto")
def posterize(data: DataNode, mask: Any) -> DataNode:
    return data & mask


@augmentation(mag_range=(256, 0), param_device="auto")
def solarize(data: DataNode, threshold: Any) -> DataNode:
    """Pixels at or above `threshold` are inverted."""
    below = data < threshold
    inverted = types.Constant(255, dtype=types.UINT8) - data
    return below * data + (below ^ True) * inverted


@augmentation(mag_range=(0, 110), param_device="auto", mag_to_param=solarize_add_shift)
def solarize_add(data: DataNode, shift: Any) -> DataNode:
    """Pixels below 128 are raised by `shift` (they stay below 238: no overflow)."""
    dark = data < types.Constant(128, dtype=types.UINT8)
    return dark * (data + shift) + (dark ^ True) * data


@augmentation
def invert(data: DataNode, _: Any) -> DataNode:
    return types.Constant(255, dtype=types.UINT8) - data


@augmentation
def equalize(data: DataNode, _: Any) -> DataNode:
    """Histogram equalization per channel (OpenCV's formula for the lookup table, which differs
    slightly from PIL's)."""
    return fn.experimental.equalize(data)


@augmentation
def auto_contrast(data: DataNode, _: Any) -> DataNode:
    """Each channel stretched to [0, 255] (left as it is when it holds one value). Assumes HWC or
    FHWC."""
    lo = fn.reductions.min(data, axis_names="HW", keep_dims=True)
    hi = fn.reductions.max(data, axis_names="HW", keep_dims=True)
    spread = hi - lo
    stretch = spread > 0
    flat = stretch ^ True
    # 255 / spread where the channel has a spread, 255 / 255 = 1 where it is flat
    scale = 255 / (spread * stretch + types.Constant(255, dtype=types.UINT8) * flat)
    return fn.cast_like((data - lo * stretch) * scale, data)


@augmentation
def identity(data: DataNode, _: Any) -> DataNode:
    return data
