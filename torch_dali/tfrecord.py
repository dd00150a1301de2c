"""`torch_dali.tfrecord` mirrors `nvidia.dali.tfrecord`: descriptions of TFRecord features
(`FixedLenFeature([1], tfrecord.int64, -1)`), as `readers.tfrecord`'s `features=` takes them. The
types are DALI's codes (int64 0, string 1, float32 2).

A `Feature` is a dict of plain values (type, shape, fixed_length, partial_shape, default_value),
so a pipeline using it writes to YAML and reads back as it was.
"""
from __future__ import annotations

from typing import Any, Sequence

int64, string, float32 = 0, 1, 2
_NAMES = {int64: "int64", string: "string", float32: "float32"}
_CODES = {v: k for k, v in _NAMES.items()}


class Feature(dict):
    """One feature of a TFRecord example: its type, whether it has a fixed shape (or, varying, a
    partial shape of its inner dimensions), and the value used where an example lacks it."""

    def __init__(self, dtype: int, default_value: Any, shape: Sequence[int] = (),
                 fixed_length: bool = True, partial_shape: Sequence[int] | None = None) -> None:
        if dtype not in _NAMES:
            raise ValueError(f"tfrecord: the feature type must be tfrecord.int64, string or float32, "
                             f"got {dtype!r}")
        super().__init__(type=_NAMES[dtype], shape=[int(s) for s in shape], fixed_length=bool(fixed_length),
                         partial_shape=None if partial_shape is None else [int(s) for s in partial_shape],
                         default_value=default_value)

    @property
    def dtype(self) -> int:
        return _CODES[self["type"]]

    @property
    def default_value(self) -> Any:
        return self["default_value"]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self["shape"])

    @property
    def fixed_length(self) -> bool:
        return bool(self["fixed_length"])

    @property
    def partial_shape(self) -> tuple[int, ...] | None:
        p = self["partial_shape"]
        return None if p is None else tuple(p)

    @classmethod
    def from_plain(cls, d: Any, where: str) -> "Feature":
        """A Feature from its dict form (as read back from YAML); a ValueError says what is wrong."""
        if isinstance(d, Feature):
            return d
        keys = {"type", "shape", "fixed_length", "partial_shape", "default_value"}
        if not isinstance(d, dict) or set(d) != keys or d["type"] not in _CODES:
            raise ValueError(f"{where}: expected a tfrecord.FixedLenFeature / VarLenFeature, got {d!r}")
        return cls(_CODES[d["type"]], d["default_value"], d["shape"] or (), d["fixed_length"], d["partial_shape"])

    def __repr__(self) -> str:
        if self.fixed_length:
            return f"FixedLenFeature({list(self.shape)}, tfrecord.{self['type']}, {self.default_value!r})"
        ps = "" if self.partial_shape is None else f"{list(self.partial_shape)}, "
        return f"VarLenFeature({ps}tfrecord.{self['type']}, {self.default_value!r})"


def FixedLenFeature(shape: Sequence[int], dtype: int, default_value: Any) -> Feature:  # noqa: N802 - DALI's name
    """A feature with the same shape in every example."""
    return Feature(dtype, default_value, tuple(int(s) for s in shape), True)


def VarLenFeature(*args: Any) -> Feature:  # noqa: N802
    """A feature whose length differs between examples: `VarLenFeature(dtype, default)`, or
    `VarLenFeature(partial_shape, dtype, default)` for an output of shape (n, *partial_shape)."""
    if len(args) == 2:
        return Feature(args[0], args[1], (), False)
    if len(args) == 3:
        return Feature(args[1], args[2], (), False, tuple(int(s) for s in args[0]))
    raise TypeError("VarLenFeature takes (dtype, default_value) or (partial_shape, dtype, default_value)")
