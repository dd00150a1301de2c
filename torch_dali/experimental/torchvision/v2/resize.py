"""`Resize`: torchvision's output size rules (shorter edge to `size`, the longer scaled and truncated;
`max_size` caps the longer edge), computed per sample in the pipeline, then `fn.resize`."""
from __future__ import annotations

from typing import Any, Literal, Optional, Sequence

import numpy as np

from .... import fn, math as dmath, types
from ....types import DALIInterpType
from ._enums import InterpolationMode, normalize_enum_like_interpolation_mode
from .operator import ArgumentValidateRule, Operator, branch, get_HWC_from_layout_pipeline


class _ValidateSize(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, size: Any, max_size: Any, interpolation: Any, **_: Any) -> None:
        if size is not None and not isinstance(size, (int, tuple, list)):
            raise ValueError(f"size must be an int, a sequence of one or two ints, or None; got {size!r}")
        if size is None and max_size is None:
            raise ValueError("max_size is required when size is None")
        if max_size is not None and np.min(max_size) < 0:
            raise ValueError(f"max_size must not be negative, got {max_size}")
        if size is not None and max_size is not None:
            if isinstance(size, (tuple, list)) and len(size) == 2:
                raise ValueError("max_size applies only when size is one number (the shorter edge's length)")
            if np.min(size) > max_size:
                raise ValueError(f"max_size ({max_size}) is smaller than size ({size})")
        if isinstance(size, int) and size <= 0:
            raise ValueError(f"size must be positive, got {size}")
        if isinstance(size, (tuple, list)):
            if len(size) not in (1, 2):
                raise ValueError(f"size must hold one or two values, got {len(size)}")
            if not all(isinstance(s, int) for s in size):
                raise ValueError(f"size values must be ints, got {size}")
            if any(s <= 0 for s in size):
                raise ValueError(f"size values must be positive, got {size}")
        Resize.validate_interpolation(interpolation)


def _floor_int(x: Any) -> Any:
    return fn.cast(dmath.floor(x), dtype=types.INT32)


class Resize(Operator):
    """Resizes to `size` ((h, w), or the shorter edge's length), capped by `max_size`, with
    `interpolation` (NEAREST, BILINEAR, BICUBIC, LANCZOS; Pillow's integer codes too)."""

    interpolation_modes = {
        InterpolationMode.NEAREST: DALIInterpType.INTERP_NN,
        InterpolationMode.BILINEAR: DALIInterpType.INTERP_LINEAR,
        InterpolationMode.BICUBIC: DALIInterpType.INTERP_CUBIC,
        InterpolationMode.LANCZOS: DALIInterpType.INTERP_LANCZOS3,
        # listed so that the check reports them as not implemented rather than unknown
        InterpolationMode.NEAREST_EXACT: DALIInterpType.INTERP_NN,
        InterpolationMode.BOX: DALIInterpType.INTERP_NN,
        InterpolationMode.HAMMING: DALIInterpType.INTERP_NN,
    }
    not_supported_interpolation_modes = [InterpolationMode.NEAREST_EXACT, InterpolationMode.BOX,
                                         InterpolationMode.HAMMING]
    # Pillow's integer filter codes, as torchvision reads them
    int_to_interpolation_mode = {0: InterpolationMode.NEAREST, 1: InterpolationMode.LANCZOS,
                                 2: InterpolationMode.BILINEAR, 3: InterpolationMode.BICUBIC,
                                 4: InterpolationMode.BOX, 5: InterpolationMode.HAMMING}

    arg_rules = (_ValidateSize,)
    preprocess_data = get_HWC_from_layout_pipeline

    @classmethod
    def normalize_interpolation(cls, interpolation: Any) -> InterpolationMode:
        if isinstance(interpolation, int):
            if interpolation not in cls.int_to_interpolation_mode:
                raise ValueError(f"{interpolation} is no Pillow filter (PIL code) torchvision accepts; "
                                 f"known codes: {sorted(cls.int_to_interpolation_mode)}")
            return cls.int_to_interpolation_mode[interpolation]
        return normalize_enum_like_interpolation_mode(interpolation)

    @classmethod
    def validate_interpolation(cls, interpolation: Any) -> None:
        mode = cls.normalize_interpolation(interpolation)
        if mode in cls.not_supported_interpolation_modes:
            raise NotImplementedError(f"Interpolation mode {mode} is not implemented")
        if mode not in cls.interpolation_modes:
            raise ValueError(f"Interpolation {mode!r} is not supported")

    @classmethod
    def infer_effective_size(cls, size: Any) -> Any:
        """`[n]` means `n`: the shorter edge's length."""
        return size[0] if isinstance(size, (tuple, list)) and len(size) == 1 else size

    @classmethod
    def calculate_target_size_dynamic_mode(cls, orig_size: Sequence[int], size: Any,
                                           max_size: Optional[int]) -> tuple[int, int]:
        """(out_h, out_w) for one image whose (h, w) is known (Python numbers)."""
        h, w = orig_size[0], orig_size[1]
        if isinstance(size, (tuple, list)):
            return size[0], size[1]
        if size is None:
            return (max_size, int(max_size * w / h)) if h >= w else (int(max_size * h / w), max_size)
        short, long_ = (h, w) if h <= w else (w, h)
        new_short, new_long = size, int(size * long_ / short)
        if max_size is not None and new_long > max_size:
            new_short, new_long = int(max_size * new_short / new_long), max_size
        return (new_short, new_long) if h <= w else (new_long, new_short)

    @classmethod
    def calculate_target_size_pipeline_mode(cls, orig_size: Sequence[Any], size: Any,
                                            max_size: Optional[int]) -> tuple[Any, Any]:
        """The same rules on per-sample DataNodes (h, w from the input's shape): the branches
        where the rule depends on the sample are pipeline conditionals."""
        h, w = orig_size[0], orig_size[1]
        if isinstance(size, (tuple, list)):
            return size[0], size[1]

        def scaled(edge: Any, num: Any, den: Any) -> Any:
            return _floor_int(edge * num / den)

        if size is None:
            hw = branch(h >= w, lambda: (max_size, scaled(max_size, w, h)),
                        lambda: (scaled(max_size, h, w), max_size))
            return hw[0], hw[1]

        def capped(short: Any, long_: Any) -> tuple[Any, Any]:
            if max_size is None:
                return short, long_
            return branch(long_ > max_size, lambda: (scaled(max_size, short, long_), max_size),
                          lambda: (short, long_))

        def height_shorter() -> tuple[Any, Any]:
            return capped(size, scaled(size, w, h))

        def width_shorter() -> tuple[Any, Any]:
            short, long_ = capped(size, scaled(size, h, w))
            return long_, short

        hw = branch(h <= w, height_shorter, width_shorter)
        return hw[0], hw[1]

    def __init__(self, size: Any, interpolation: Any = InterpolationMode.BILINEAR,
                 max_size: Optional[int] = None, antialias: Optional[bool] = True,
                 device: Literal["cpu", "gpu"] = "cpu") -> None:
        interpolation = Resize.normalize_interpolation(interpolation)
        super().__init__(device=device, size=size, max_size=max_size, interpolation=interpolation)
        self.size = size
        self.max_size = max_size
        self.interpolation = Resize.interpolation_modes[interpolation]
        self.size_normalized = Resize.infer_effective_size(size)
        self.antialias = antialias

    def _kernel(self, data_input: Any) -> Any:
        in_h, in_w, _, data = data_input
        out_h, out_w = Resize.calculate_target_size_pipeline_mode((in_h, in_w), self.size_normalized,
                                                                   self.max_size)
        as_float = [fn.cast(v, dtype=types.FLOAT) for v in (out_h, out_w)]
        return fn.resize(data, device=self.device, size=fn.stack(*as_float), interp_type=self.interpolation,
                         antialias=self.antialias)
