"""Element types of the dynamic mode (`ndd.float32`, `ndd.uint8`, ...), as DALI 2.4 names them: a
DType has a kind, a width, DALI's short name (`str(ndd.float32) == "f32"`) and the matching
`types.DALIDataType` (`type_id`). Each is backed by one torch dtype; the three enum types
(`DataType`, `ImageType`, `InterpType`) are stored as int32."""
from __future__ import annotations

import enum
from typing import Any

import numpy as np
import torch

from ... import types as _types

__all__ = ["DType", "dtype", "type_id", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float16", "bfloat16", "float32", "float64", "DataType", "ImageType", "InterpType"]


class DType:
    """One element type."""

    class Kind(enum.Enum):
        signed = 1
        unsigned = 2
        float = 3
        bool = 4
        enum = 5

    _by_id: dict[Any, "DType"] = {}
    _by_name: dict[str, "DType"] = {}

    def __init__(self, kind: "DType.Kind", bits: int, name: str, type_id: Any, torch_dtype: torch.dtype,
                 exponent_bits: int | None = None, significand_bits: int | None = None) -> None:
        self.kind = kind
        self.bits = bits
        self.name = name
        self.type_id = type_id
        self.torch_dtype = torch_dtype
        self.exponent_bits = exponent_bits
        self.significand_bits = significand_bits
        DType._by_id[type_id] = self
        DType._by_name[name] = self

    @property
    def bytes(self) -> int:
        return self.bits // 8

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self.type_id is other.type_id
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("ndd.DType", self.name))

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        extra = (f", exponent_bits={self.exponent_bits}, significand_bits={self.significand_bits}"
                 if self.kind is DType.Kind.float else "")
        return f"DType(kind={self.kind}, bits={self.bits}{extra})"

    @staticmethod
    def from_type_id(type_id: Any) -> "DType":
        """The DType of a `types.DALIDataType`."""
        if type_id not in DType._by_id:
            raise TypeError(f"{type_id!r} is not an element type of the dynamic mode")
        return DType._by_id[type_id]

    @staticmethod
    def from_fw_type(fw_type: Any) -> "DType":
        """The DType of a NumPy type / dtype or a torch dtype."""
        if isinstance(fw_type, torch.dtype):
            return DType.from_torch(fw_type)
        return DType.from_type_id(_types.to_dali_type(np.dtype(fw_type)))

    @staticmethod
    def from_torch(dt: torch.dtype) -> "DType":
        return DType.from_type_id(_types.from_torch_dtype(dt))

    @staticmethod
    def parse(name: str) -> "DType":
        """A DType from DALI's short name ("f32", "u8", "bool") or a type name ("float32")."""
        if name in DType._by_name:
            return DType._by_name[name]
        try:
            return DType.from_type_id(_types.to_dali_type(name))
        except (TypeError, KeyError):
            raise ValueError(f"{name!r} does not name an element type") from None


def _num(kind: DType.Kind, bits: int, name: str, tid: Any, tdt: torch.dtype, e: int | None = None,
         s: int | None = None) -> DType:
    return DType(kind, bits, name, tid, tdt, e, s)


_T = _types.DALIDataType
_K = DType.Kind
bool = _num(_K.bool, 8, "bool", _T.BOOL, torch.bool)  # noqa: A001 - DALI's name
int8 = _num(_K.signed, 8, "i8", _T.INT8, torch.int8)
int16 = _num(_K.signed, 16, "i16", _T.INT16, torch.int16)
int32 = _num(_K.signed, 32, "i32", _T.INT32, torch.int32)
int64 = _num(_K.signed, 64, "i64", _T.INT64, torch.int64)
uint8 = _num(_K.unsigned, 8, "u8", _T.UINT8, torch.uint8)
uint16 = _num(_K.unsigned, 16, "u16", _T.UINT16, torch.uint16)
uint32 = _num(_K.unsigned, 32, "u32", _T.UINT32, torch.uint32)
uint64 = _num(_K.unsigned, 64, "u64", _T.UINT64, torch.uint64)
float16 = _num(_K.float, 16, "f16", _T.FLOAT16, torch.float16, 5, 10)
bfloat16 = _num(_K.float, 16, "bfloat16", _T.BFLOAT16, torch.bfloat16, 8, 7)
float32 = _num(_K.float, 32, "f32", _T.FLOAT, torch.float32, 8, 23)
float64 = _num(_K.float, 64, "f64", _T.FLOAT64, torch.float64, 11, 52)
DataType = _num(_K.enum, 32, "DataType", _T.DATA_TYPE, torch.int32)
ImageType = _num(_K.enum, 32, "ImageType", _T.IMAGE_TYPE, torch.int32)
InterpType = _num(_K.enum, 32, "InterpType", _T.INTERP_TYPE, torch.int32)

# the enum classes whose values make tensors of the enum types
ENUM_TYPES = {_types.DALIDataType: DataType, _types.DALIImageType: ImageType, _types.DALIInterpType: InterpType}


def dtype(*args: Any) -> DType:
    """A DType from a DType, a `types.DALIDataType`, a NumPy / torch type or a name."""
    if len(args) != 1:
        raise TypeError(f"dtype() takes one argument, got {len(args)}")
    return as_dtype(args[0])


def as_dtype(x: Any) -> DType:
    if isinstance(x, DType):
        return x
    if isinstance(x, _types.DALIDataType):
        return DType.from_type_id(x)
    if isinstance(x, str):
        return DType.parse(x)
    return DType.from_fw_type(x)


def type_id(dt: Any) -> Any:
    """The `types.DALIDataType` of a DType (or anything `dtype()` takes)."""
    return as_dtype(dt).type_id
