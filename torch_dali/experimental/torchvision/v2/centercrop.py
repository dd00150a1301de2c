"""`CenterCrop`: torchvision's centered window (its top/left offset rounds half to even), padded
with zeros where the window is larger than the image."""
from __future__ import annotations

from typing import Any, Literal, Sequence

from .... import fn, math as dmath, types
from .operator import Operator, ValidateSizeDescriptor, get_HWC_from_layout_pipeline


def crop_position(slack: Any) -> Any:
    """`fn.crop`'s relative position that puts the window at torchvision's offset along one axis;
    `slack` = image extent - window extent (an int32 DataNode). With slack > 0 the offset is
    round-half-to-even(slack / 2) (Python's `round`), as a fraction of the slack; otherwise 0.5,
    which centers the zero padding."""
    half = slack // 2
    # floor(slack / 2) is odd and slack is odd exactly when slack % 4 == 3: then round up
    up = (slack - (slack // 4) * 4) == 3
    offset = half + up
    positive = slack > 0
    return positive * offset / dmath.max(slack, 1) + (1.0 - positive) * 0.5


class CenterCrop(Operator):
    """Crops the center `size` ((h, w), or one number for a square) of each image."""

    arg_rules = (ValidateSizeDescriptor,)
    preprocess_data = get_HWC_from_layout_pipeline

    @classmethod
    def adjust_size(cls, size: Any) -> tuple[int, int]:
        if isinstance(size, int):
            return size, size
        if isinstance(size, (list, tuple)):
            if len(size) not in (1, 2):
                raise ValueError(f"size must hold one or two values, got {len(size)}")
            return (size[0], size[0]) if len(size) == 1 else (size[0], size[1])
        raise TypeError(f"size must be an int or a list/tuple, got {type(size).__name__}")

    def __init__(self, size: int | Sequence[int], device: Literal["cpu", "gpu"] = "cpu") -> None:
        super().__init__(device=device, size=size)
        self.size = CenterCrop.adjust_size(size)

    def _kernel(self, data_input: Any) -> Any:
        in_h, in_w, _, data = data_input
        crop_h, crop_w = self.size
        slack_h = fn.cast(in_h, dtype=types.INT32) - crop_h
        slack_w = fn.cast(in_w, dtype=types.INT32) - crop_w
        return fn.crop(data, device=self.device, crop=self.size, crop_pos_y=crop_position(slack_h),
                       crop_pos_x=crop_position(slack_w), out_of_bounds_policy="pad", fill_values=0)
