"""`RandomCrop` (a uniformly placed window, after optional padding) and `RandomResizedCrop`
(`fn.random_resized_crop`: a random area and aspect ratio, resized to `size`)."""
from __future__ import annotations

import numbers
from typing import Any, Literal, Sequence

from .... import fn, math as dmath, types
from ._enums import InterpolationMode
from .centercrop import CenterCrop
from .operator import (ArgumentValidateRule, Operator, ValidateIfNonNegative, ValidateSizeDescriptor,
                       get_HWC_from_layout_pipeline)
from .pad import PADDING_CLASS, ValidatePaddingMode
from .resize import Resize


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class _ValidateCropSize(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, size: Any, **_: Any) -> None:
        if isinstance(size, (list, tuple)) and not all(_is_int(v) for v in size):
            raise ValueError(f"size values must be ints, got {size}")


class _ValidatePadding(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, padding: Any, pad_if_needed: Any, padding_mode: Any, **_: Any) -> None:
        if not isinstance(pad_if_needed, bool):
            raise TypeError(f"pad_if_needed must be a bool, got {type(pad_if_needed).__name__}")
        if padding is not None:
            if not isinstance(padding, (int, list, tuple)):
                raise TypeError(f"padding must be an int or a list/tuple of 1, 2 or 4 ints, got "
                                f"{type(padding).__name__}")
            if isinstance(padding, (list, tuple)):
                if len(padding) not in (1, 2, 4):
                    raise ValueError(f"padding must hold 1, 2 or 4 values, got {len(padding)}")
                if not all(_is_int(v) for v in padding):
                    raise ValueError(f"padding values must be ints, got {padding}")
            ValidateIfNonNegative.verify(values=padding, name="padding")
        if pad_if_needed or padding is not None:
            ValidatePaddingMode.verify(padding_mode=padding_mode)


class _ValidateFill(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, fill: Any, **_: Any) -> None:
        if fill is None or isinstance(fill, numbers.Number):
            return
        if isinstance(fill, (list, tuple)) and all(isinstance(v, numbers.Number) for v in fill):
            if not fill:
                raise ValueError("fill must not be an empty sequence")
            return
        raise TypeError(f"fill must be a number, a sequence of numbers or None, got {fill!r}")


class _ValidateRandomResizedCropScaleRatio(ArgumentValidateRule):
    @classmethod
    def _check(cls, value: Any, name: str) -> None:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise TypeError(f"{name} must be a sequence of two numbers, got {value!r}")
        if not all(isinstance(v, numbers.Number) for v in value):
            raise TypeError(f"{name} values must be numbers, got {value!r}")
        if any(v <= 0 for v in value):
            raise ValueError(f"{name} values must be positive, got {value}")
        if value[0] > value[1]:
            raise ValueError(f"{name} must be a (min, max) pair with min <= max, got {value}")

    @classmethod
    def verify(cls, *, scale: Any, ratio: Any, **_: Any) -> None:
        cls._check(scale, "scale")
        cls._check(ratio, "ratio")


class _ValidateRandomResizedCropInterpolation(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, interpolation: Any, **_: Any) -> None:
        Resize.validate_interpolation(interpolation)


def _random_offset(max_offset: Any) -> Any:
    """A uniform integer in [0, max_offset] per sample (0 when max_offset < 0)."""
    top = fn.cast(dmath.max(max_offset, 0) + 1, dtype=types.FLOAT)
    draw = fn.random.uniform(range=fn.stack(fn.cast(0, dtype=types.FLOAT), top))
    return fn.cast(dmath.floor(draw), dtype=types.INT32)


class RandomCrop(Operator):
    """Crops a `size` window at a uniformly drawn position, after padding the borders by `padding`
    (and, with `pad_if_needed`, enough more to fit the window) with `fill` / `padding_mode`."""

    arg_rules = (ValidateSizeDescriptor, _ValidateCropSize, _ValidatePadding, _ValidateFill)
    preprocess_data = get_HWC_from_layout_pipeline

    @classmethod
    def adjust_size(cls, size: Any) -> tuple[int, int]:
        return CenterCrop.adjust_size(size)

    @classmethod
    def adjust_padding(cls, padding: Any) -> tuple[int, int, int, int]:
        """(left, top, right, bottom)."""
        if padding is None:
            return 0, 0, 0, 0
        if isinstance(padding, int):
            return padding, padding, padding, padding
        if isinstance(padding, (list, tuple)) and len(padding) in (1, 2, 4):
            if len(padding) == 1:
                return (padding[0],) * 4  # type: ignore[return-value]
            if len(padding) == 2:
                return padding[0], padding[1], padding[0], padding[1]
            return tuple(padding)  # type: ignore[return-value]
        raise TypeError(f"padding must be an int or a list/tuple of 1, 2 or 4 ints, got {type(padding).__name__}")

    @staticmethod
    def adjust_fill(fill: Any) -> Any:
        return 0 if fill is None else fill if isinstance(fill, numbers.Number) else tuple(fill)

    def __init__(self, size: int | Sequence[int], padding: Any = None, pad_if_needed: bool = False,
                 fill: Any = 0, padding_mode: Literal["constant", "edge", "reflect", "symmetric"] = "constant",
                 device: Literal["cpu", "gpu"] = "cpu") -> None:
        super().__init__(device=device, size=size, padding=padding, pad_if_needed=pad_if_needed,
                         padding_mode=padding_mode, fill=fill)
        self.size = RandomCrop.adjust_size(size)
        self.padding = RandomCrop.adjust_padding(padding)
        self.pad_if_needed = pad_if_needed
        self.fill = RandomCrop.adjust_fill(fill)
        self.padding_mode = padding_mode
        self.needs_padding = pad_if_needed or any(self.padding)

    def _kernel(self, data_input: Any) -> Any:
        in_h, in_w, _, data = data_input
        crop_h, crop_w = self.size
        left, top, right, bottom = self.padding
        padded_h, padded_w = in_h + (top + bottom), in_w + (left + right)
        if self.pad_if_needed:
            # torchvision pads both sides of a too small image by the shortfall; the window's
            # origin moves by the top/left part only
            extra_h, extra_w = dmath.max(crop_h - padded_h, 0), dmath.max(crop_w - padded_w, 0)
            top, left = top + extra_h, left + extra_w
            padded_h, padded_w = padded_h + 2 * extra_h, padded_w + 2 * extra_w
        y = _random_offset(fn.cast(padded_h, dtype=types.INT32) - crop_h)
        x = _random_offset(fn.cast(padded_w, dtype=types.INT32) - crop_w)
        kwargs: dict[str, Any] = {"device": self.device, "axis_names": "WH"}
        if self.needs_padding:
            kwargs.update(out_of_bounds_policy=PADDING_CLASS[self.padding_mode].border_type, fill_values=self.fill)
        anchor = fn.stack(fn.cast(x - left, dtype=types.INT32), fn.cast(y - top, dtype=types.INT32))
        return fn.slice(data, anchor, fn.stack(crop_w, crop_h), **kwargs)


class RandomResizedCrop(Operator):
    """A window of random area (`scale`, relative to the image) and aspect ratio (`ratio`, w / h),
    resized to `size`."""

    arg_rules = (ValidateSizeDescriptor, _ValidateCropSize, _ValidateRandomResizedCropScaleRatio,
                 _ValidateRandomResizedCropInterpolation)
    preprocess_data = get_HWC_from_layout_pipeline

    @classmethod
    def adjust_size(cls, size: Any) -> tuple[int, int]:
        return CenterCrop.adjust_size(size)

    def __init__(self, size: int | Sequence[int], scale: tuple[float, float] = (0.08, 1.0),
                 ratio: tuple[float, float] = (3.0 / 4.0, 4.0 / 3.0),
                 interpolation: Any = InterpolationMode.BILINEAR, antialias: bool | None = True,
                 device: Literal["cpu", "gpu"] = "cpu") -> None:
        interpolation = Resize.normalize_interpolation(interpolation)
        super().__init__(device=device, size=size, scale=scale, ratio=ratio, interpolation=interpolation)
        self.size = RandomResizedCrop.adjust_size(size)
        self.scale = tuple(scale)
        self.ratio = tuple(ratio)
        self.interpolation = Resize.interpolation_modes[interpolation]
        self.antialias = antialias

    def _kernel(self, data_input: Any) -> Any:
        data = data_input[3]
        return fn.random_resized_crop(data, device=self.device, size=self.size, random_area=self.scale,
                                      random_aspect_ratio=self.ratio, interp_type=self.interpolation,
                                      antialias=self.antialias, num_attempts=10)
