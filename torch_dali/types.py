"""DALI's type constants (`types.RGB`, `types.FLOAT`, `types.INTERP_LINEAR`, ...), mapped to torch."""
from __future__ import annotations

import enum

import torch


class DALIDataType(enum.Enum):
    """Element types, named as in DALI."""

    BOOL = "bool"
    UINT8 = "uint8"
    UINT16 = "uint16"
    UINT32 = "uint32"
    UINT64 = "uint64"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT16 = "float16"
    BFLOAT16 = "bfloat16"
    FLOAT = "float32"
    FLOAT64 = "float64"

    def __repr__(self) -> str:
        return f"types.{self.name}"


class DALIImageType(enum.Enum):
    RGB = "RGB"
    BGR = "BGR"
    GRAY = "GRAY"
    YCbCr = "YCbCr"
    ANY_DATA = "ANY_DATA"

    def __repr__(self) -> str:
        return f"types.{self.name}"


class DALIInterpType(enum.Enum):
    INTERP_NN = "nn"
    INTERP_LINEAR = "linear"
    INTERP_CUBIC = "cubic"
    INTERP_LANCZOS3 = "lanczos3"
    INTERP_TRIANGULAR = "triangular"
    INTERP_GAUSSIAN = "gaussian"

    def __repr__(self) -> str:
        return f"types.{self.name}"


class OutOfBoundsPolicy(enum.Enum):
    ERROR = "error"
    PAD = "pad"
    TRIM_TO_SHAPE = "trim_to_shape"


# Module-level names, as `nvidia.dali.types` exposes them.
BOOL, UINT8, UINT16, UINT32, UINT64 = (DALIDataType.BOOL, DALIDataType.UINT8, DALIDataType.UINT16,
                                       DALIDataType.UINT32, DALIDataType.UINT64)
INT8, INT16, INT32, INT64 = DALIDataType.INT8, DALIDataType.INT16, DALIDataType.INT32, DALIDataType.INT64
FLOAT16, BFLOAT16, FLOAT, FLOAT64 = (DALIDataType.FLOAT16, DALIDataType.BFLOAT16, DALIDataType.FLOAT,
                                     DALIDataType.FLOAT64)
FLOAT32 = FLOAT
RGB, BGR, GRAY, YCbCr, ANY_DATA = (DALIImageType.RGB, DALIImageType.BGR, DALIImageType.GRAY,
                                   DALIImageType.YCbCr, DALIImageType.ANY_DATA)
INTERP_NN, INTERP_LINEAR, INTERP_CUBIC = (DALIInterpType.INTERP_NN, DALIInterpType.INTERP_LINEAR,
                                          DALIInterpType.INTERP_CUBIC)
INTERP_LANCZOS3, INTERP_TRIANGULAR, INTERP_GAUSSIAN = (DALIInterpType.INTERP_LANCZOS3,
                                                       DALIInterpType.INTERP_TRIANGULAR,
                                                       DALIInterpType.INTERP_GAUSSIAN)

# DALI's legacy layout constants (`types.NCHW`) are plain layout strings here.
NCHW, NHWC = "CHW", "HWC"

_TORCH = {
    DALIDataType.BOOL: torch.bool, DALIDataType.UINT8: torch.uint8, DALIDataType.UINT16: torch.uint16,
    DALIDataType.UINT32: torch.uint32, DALIDataType.UINT64: torch.uint64, DALIDataType.INT8: torch.int8,
    DALIDataType.INT16: torch.int16, DALIDataType.INT32: torch.int32, DALIDataType.INT64: torch.int64,
    DALIDataType.FLOAT16: torch.float16, DALIDataType.BFLOAT16: torch.bfloat16,
    DALIDataType.FLOAT: torch.float32, DALIDataType.FLOAT64: torch.float64,
}
_FROM_TORCH = {v: k for k, v in _TORCH.items()}

ENUMS: tuple[type[enum.Enum], ...] = (DALIDataType, DALIImageType, DALIInterpType, OutOfBoundsPolicy)


def to_torch_dtype(dtype: DALIDataType | torch.dtype | str) -> torch.dtype:
    """Accepts `types.FLOAT`, `torch.float32` or `"float32"`."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str):
        dtype = DALIDataType(dtype) if dtype in {d.value for d in DALIDataType} else DALIDataType[dtype]
    return _TORCH[dtype]


def from_torch_dtype(dtype: torch.dtype) -> DALIDataType:
    return _FROM_TORCH[dtype]


def enum_by_name(name: str) -> enum.Enum:
    """`"INTERP_LINEAR"` -> `types.INTERP_LINEAR`; the inverse of how YAML writes enums."""
    for cls in ENUMS:
        if name in cls.__members__:
            return cls[name]
    raise KeyError(name)
