"""`InterpolationMode`: torchvision's names and values, so that torchvision's own enum (or any enum
with the same names or values) can be passed where ours is expected without importing torchvision."""
from __future__ import annotations

from enum import Enum
from typing import Any


class InterpolationMode(Enum):
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def normalize_enum_like_interpolation_mode(interpolation: Any) -> InterpolationMode:
    """Ours, from ours or from an enum-like object with one of our names (tried first) or values."""
    if isinstance(interpolation, InterpolationMode):
        return interpolation
    name, value = getattr(interpolation, "name", None), getattr(interpolation, "value", None)
    if isinstance(name, str) and name in InterpolationMode.__members__:
        return InterpolationMode[name]
    if isinstance(value, str) and value in {m.value for m in InterpolationMode}:
        return InterpolationMode(value)
    raise ValueError(f"interpolation must be an InterpolationMode (or an enum with its names or values) or a "
                     f"Pillow integer code, got {interpolation}")


__all__ = ["InterpolationMode"]
