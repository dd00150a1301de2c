"""`torch_dali.tfrecord` mirrors `nvidia.dali.tfrecord`: descriptions of TFRecord features
(`FixedLenFeature([1], tfrecord.int64, -1)`), as a TFRecord reader's `features=` argument takes
them. The types are DALI's codes (int64 0, string 1, float32 2)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

int64, string, float32 = 0, 1, 2
_NAMES = {int64: "int64", string: "string", float32: "float32"}


@dataclass(frozen=True)
class Feature:
    """One feature of a TFRecord example: its type, whether it has a fixed shape, and the value
    used when an example lacks it."""

    dtype: int
    default_value: Any
    shape: tuple[int, ...] = field(default=())
    fixed_length: bool = True

    def __post_init__(self) -> None:
        if self.dtype not in _NAMES:
            raise ValueError(f"tfrecord: the feature type must be tfrecord.int64, string or float32, got {self.dtype!r}")


def FixedLenFeature(shape: Any, dtype: int, default_value: Any) -> Feature:  # noqa: N802 - DALI's name
    """A feature with the same shape in every example."""
    return Feature(dtype, default_value, tuple(int(s) for s in shape), True)


def VarLenFeature(dtype: int, default_value: Any) -> Feature:  # noqa: N802
    """A feature whose length differs between examples."""
    return Feature(dtype, default_value, (), False)
