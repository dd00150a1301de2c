"""`Pad`: a window larger than the image through `fn.slice`, whose out-of-bounds policy gives
torchvision's padding modes (constant -> pad, edge -> clamp, reflect -> reflect_101,
symmetric -> reflect_1001)."""
from __future__ import annotations

from typing import Any, Literal, Sequence

from .... import fn, types
from .operator import ArgumentValidateRule, Operator, ValidateIfNonNegative, get_HWC_from_layout_pipeline


def _ltrb(padding: Any) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) from an int, a pair (left/right, top/bottom) or four values."""
    if isinstance(padding, int):
        return padding, padding, padding, padding
    if isinstance(padding, Sequence) and not isinstance(padding, str):
        if len(padding) == 2:
            return padding[0], padding[1], padding[0], padding[1]
        if len(padding) == 4:
            return tuple(padding)  # type: ignore[return-value]
    raise TypeError(f"padding must be an int or a sequence of 2 or 4 ints, got {type(padding).__name__}")


class PadBase(Operator):
    """Pads each border by `padding`; `border_type` (the slice's out-of-bounds policy) is the mode."""

    preprocess_data = get_HWC_from_layout_pipeline
    border_type = ""

    @classmethod
    def get_padding(cls, padding: Any) -> tuple[int, int, int, int]:
        return _ltrb(padding)

    def __init__(self, padding: Any, fill: Any = 0, device: Literal["cpu", "gpu"] = "cpu") -> None:
        super().__init__(device=device)
        self.pad_left, self.pad_top, self.pad_right, self.pad_bottom = _ltrb(padding)
        self.fill = fill
        self.border_type = type(self).border_type

    def _kernel(self, data_input: Any) -> Any:
        in_h, in_w, _, data = data_input
        anchor = fn.stack(*(fn.cast(-v, dtype=types.INT64) for v in (self.pad_left, self.pad_top)))
        shape = fn.stack(in_w + (self.pad_left + self.pad_right), in_h + (self.pad_top + self.pad_bottom))
        return fn.slice(data, anchor, shape, axis_names="WH", out_of_bounds_policy=self.border_type,
                        fill_values=self.fill, device=self.device)


class PadConstant(PadBase):
    border_type = "pad"


class PadEdge(PadBase):
    border_type = "clamp"


class PadReflect(PadBase):
    """Mirrors without repeating the edge pixel: [1, 2, 3] padded by 2 -> [3, 2, 1, 2, 3, 2, 1]."""
    border_type = "reflect_101"


class PadSymmetric(PadBase):
    """Mirrors repeating the edge pixel: [1, 2, 3] padded by 2 -> [2, 1, 1, 2, 3, 3, 2]."""
    border_type = "reflect_1001"


PADDING_CLASS = {"constant": PadConstant, "edge": PadEdge, "reflect": PadReflect, "symmetric": PadSymmetric}


class ValidatePaddingMode(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, padding_mode: Any, **_: Any) -> None:
        if padding_mode not in PADDING_CLASS:
            raise ValueError(f"padding_mode must be one of {list(PADDING_CLASS)}, got {padding_mode!r}")


class Pad:
    """Pads the image's borders: `padding` (int, (left/right, top/bottom) or (left, top, right,
    bottom)), with `fill` (constant mode) or by `padding_mode` (constant, edge, reflect, symmetric)."""

    def __init__(self, padding: int | Sequence[int], fill: Any = 0,
                 padding_mode: Literal["constant", "edge", "reflect", "symmetric"] = "constant",
                 device: Literal["cpu", "gpu"] = "cpu") -> None:
        ValidatePaddingMode.verify(padding_mode=padding_mode)
        ValidateIfNonNegative.verify(values=padding, name="padding")
        self.device = device
        self.pad = PADDING_CLASS[padding_mode](padding, fill, device)

    def _invoke(self, data_input: Any) -> Any:
        return self.pad.invoke(data_input)

    invoke = _invoke  # what Compose calls (operator.Operator.invoke)

    def __call__(self, data_input: Any) -> Any:
        raise RuntimeError("Pad runs inside a Compose([...]) only; call the Compose, or use the functional pad()")
