"""`ColorJitter` (`fn.color_twist` with factors drawn per sample), `Grayscale` and `RandomGrayscale`."""
from __future__ import annotations

from typing import Any, Literal, Sequence

from .... import fn, types
from .operator import (ArgumentValidateRule, Operator, ValidateIfNonNegative, ValidateIfRange,
                       ValidateIfZeroOneRange, branch, get_HWC_from_layout_pipeline)


def _factor_range(value: Any) -> tuple[float, float]:
    """A jitter amount `v` means factors in [max(0, 1 - v), 1 + v]; a pair is the range itself."""
    if isinstance(value, (int, float)):
        return max(0.0, 1.0 - value), 1.0 + value
    return tuple(float(v) for v in value)  # type: ignore[return-value]


class _ValidateBrightnessContrastSaturation(ArgumentValidateRule):
    @classmethod
    def _check(cls, value: Any, name: str) -> None:
        if value is None:
            raise ValueError(f"{name} must not be None")
        ValidateIfNonNegative.verify(values=value, name=name)
        ValidateIfRange.verify(values=_factor_range(value) if isinstance(value, (int, float)) else value,
                                name=name)

    @classmethod
    def verify(cls, *, brightness: Any, contrast: Any, saturation: Any, **_: Any) -> None:
        for value, name in ((brightness, "brightness"), (saturation, "saturation"), (contrast, "contrast")):
            cls._check(value, name)


class _ValidateHue(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, hue: Any, **_: Any) -> None:
        if hue is None:
            raise ValueError("hue must not be None")
        if isinstance(hue, (int, float)):
            if not 0 <= hue <= 0.5:
                raise ValueError(f"a single hue value must be in [0, 0.5], got {hue}")
            hue = (-float(hue), float(hue))
        else:
            ValidateIfRange.verify(values=hue, name="hue")
        if hue[0] < -0.5 or hue[1] > 0.5:
            raise ValueError(f"hue must lie in [-0.5, 0.5], got {hue}")


def _draw(bounds: tuple[float, float]) -> Any:
    """A constant when the range is one value, else a uniform draw per sample."""
    return bounds[0] if bounds[0] == bounds[1] else fn.random.uniform(range=bounds)


class ColorJitter(Operator):
    """Scales brightness, contrast and saturation by factors drawn from their ranges and rotates
    the hue by a fraction of a turn drawn from `hue` (DALI's color_twist rotates it in YIQ, close
    to but not torchvision's HSV rotation)."""

    arg_rules = (_ValidateBrightnessContrastSaturation, _ValidateHue)

    def __init__(self, brightness: Any = 0.0, contrast: Any = 0.0, saturation: Any = 0.0, hue: Any = 0.0,
                 device: Literal["cpu", "gpu"] = "cpu") -> None:
        super().__init__(device=device, brightness=brightness, contrast=contrast, saturation=saturation, hue=hue)
        self.brightness = _factor_range(brightness)
        self.contrast = _factor_range(contrast)
        self.saturation = _factor_range(saturation)
        self.hue = (-float(hue), float(hue)) if isinstance(hue, (int, float)) else hue

    def _kernel(self, data_input: Any) -> Any:
        hue_degrees = (float(self.hue[0]) * 360.0, float(self.hue[1]) * 360.0)  # color_twist takes degrees
        return fn.color_twist(data_input, brightness=_draw(self.brightness), contrast=_draw(self.contrast),
                              saturation=_draw(self.saturation), hue=_draw(hue_degrees), device=self.device)


class _ValidateGrayscaleOutputChannels(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, num_output_channels: Any, **_: Any) -> None:
        if num_output_channels not in (1, 3):
            raise ValueError(f"num_output_channels must be 1 or 3, got {num_output_channels}")


def to_gray(data: Any, channels: int, out_channels: int, device: str, cat: Any, csc: Any, hsv: Any) -> Any:
    """The graph for one (input channels, output channels) pair; `cat`, `csc`, `hsv` are the ops
    (pipeline `fn` or dynamic-mode ones)."""
    if out_channels == 1 and channels == 3:
        return csc(data, image_type=types.RGB, output_type=types.GRAY, device=device)
    if out_channels == 1 and channels == 1:
        return data
    if out_channels == 3 and channels == 1:
        return cat(data, data, data, axis_name="C")
    return hsv(data, saturation=0, device=device)  # the luma in every channel


class Grayscale(Operator):
    """Converts to grayscale with 1 or 3 output channels."""

    arg_rules = (_ValidateGrayscaleOutputChannels,)
    preprocess_data = get_HWC_from_layout_pipeline

    def __init__(self, num_output_channels: int = 1, device: Literal["cpu", "gpu"] = "cpu") -> None:
        super().__init__(device=device, num_output_channels=num_output_channels)
        self.num_output_channels = num_output_channels

    def _kernel(self, data_input: Any) -> Any:
        _, _, channels, data = data_input
        return to_gray(data, channels, self.num_output_channels, self.device, fn.cat,
                        fn.color_space_conversion, fn.hsv)


class RandomGrayscale(Operator):
    """With probability `p`, grayscale keeping the number of channels."""

    arg_rules = (ValidateIfZeroOneRange,)
    preprocess_data = get_HWC_from_layout_pipeline

    def __init__(self, p: float = 0.1, device: Literal["cpu", "gpu"] = "cpu") -> None:
        super().__init__(device=device, p=p)
        self.p = p
        self.grayscale = Grayscale(num_output_channels=3, device=device)

    def _kernel(self, data_input: Any) -> Any:
        _, _, channels, data = data_input
        self.grayscale.num_output_channels = channels
        convert = fn.random.coin_flip(dtype=types.DALIDataType.BOOL, probability=self.p)
        return branch(convert, lambda: self.grayscale.invoke(data), lambda: data)
