"""DALI's type constants (`types.RGB`, `types.FLOAT`, `types.INTERP_LINEAR`, ...), mapped to torch."""
from __future__ import annotations

import enum
from typing import Any, Callable, NamedTuple

import numpy as np
import torch


class _Numbered(enum.Enum):
    """An enum whose members are `(number, key)`: `.value` is the number DALI gives the member (what
    `types.Constant` stores for it in a tensor, what `fn.cast` gives as an integer), `.key` the name
    torch_dali uses for it (`"float32"`, `"linear"`, `"RGB"`); `Enum(key)` finds a member by its key."""

    key: str

    def __new__(cls, number: int, key: str) -> "_Numbered":
        self = object.__new__(cls)
        self._value_ = number
        self.key = key
        return self

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, str):
            for member in cls:
                if member.key == value:
                    return member
        return None

    def __repr__(self) -> str:
        return f"types.{self.name}"


class DALIDataType(_Numbered):
    """Element types, named and numbered as in DALI."""

    NO_TYPE = (-1, "no_type")
    UINT8 = (0, "uint8")
    UINT16 = (1, "uint16")
    UINT32 = (2, "uint32")
    UINT64 = (3, "uint64")
    INT8 = (4, "int8")
    INT16 = (5, "int16")
    INT32 = (6, "int32")
    INT64 = (7, "int64")
    FLOAT16 = (8, "float16")
    FLOAT = (9, "float32")
    FLOAT64 = (10, "float64")
    BOOL = (11, "bool")
    # Not element types of tensors torch_dali makes; named so that DALI code that mentions them
    # (`dtype=types.NO_TYPE` for "unset") imports and runs.
    STRING = (12, "string")
    FEATURE = (17, "feature")
    # Element types of tensors of enum values (`types.Constant(types.INTERP_LINEAR)`): held as int32
    # (ops/enum_data.py).
    IMAGE_TYPE = (20, "image_type")
    DATA_TYPE = (21, "data_type")
    INTERP_TYPE = (22, "interp_type")
    TENSOR_LAYOUT = (23, "tensor_layout")
    PYTHON_OBJECT = (24, "python_object")
    # DALI 2.4 has no bfloat16; its number is torch_dali's, after DALI's last
    BFLOAT16 = (28, "bfloat16")

    # An element type equals the torch dtype of the same name (`types.FLOAT == torch.float32`), with the
    # same hash: samples of `Pipeline.run()` outputs are torch tensors whose `.dtype` is torch's, and
    # DALI code compares it with `types.X` (in DALI, `Tensor.dtype` is a DALIDataType).
    def __eq__(self, other: object) -> bool:
        if isinstance(other, torch.dtype):
            return _torch_twin(self) == other
        return self is other

    def __hash__(self) -> int:
        twin = _torch_twin(self)
        return hash(twin) if twin is not None else hash(self._name_)

    def __int__(self) -> int:
        """DALI's number of the type (`int(types.INT32) == 6`), as DALI's enums give it."""
        return _number(self)


def _torch_twin(d: DALIDataType) -> torch.dtype | None:
    twin = getattr(torch, d.key, None)
    return twin if isinstance(twin, torch.dtype) else None


class DALIImageType(_Numbered):
    RGB = (0, "RGB")
    BGR = (1, "BGR")
    GRAY = (2, "GRAY")
    YCbCr = (3, "YCbCr")
    ANY_DATA = (4, "ANY_DATA")

    def __int__(self) -> int:
        return _number(self)


class DALIInterpType(_Numbered):
    INTERP_NN = (0, "nn")
    INTERP_LINEAR = (1, "linear")
    INTERP_CUBIC = (2, "cubic")
    INTERP_LANCZOS3 = (3, "lanczos3")
    INTERP_TRIANGULAR = (4, "triangular")
    INTERP_GAUSSIAN = (5, "gaussian")

    def __int__(self) -> int:
        return _number(self)


# DALI's numbers of its enum values (DALI 2.4: `int(types.INTERP_CUBIC) == 2`); bfloat16 has none there
_NUMBERS: dict[str, dict[str, int]] = {
    "DALIDataType": {"NO_TYPE": -1, "UINT8": 0, "UINT16": 1, "UINT32": 2, "UINT64": 3, "INT8": 4, "INT16": 5,
                     "INT32": 6, "INT64": 7, "FLOAT16": 8, "FLOAT": 9, "FLOAT64": 10, "BOOL": 11, "STRING": 12,
                     "FEATURE": 17, "IMAGE_TYPE": 20, "DATA_TYPE": 21, "INTERP_TYPE": 22, "TENSOR_LAYOUT": 23,
                     "PYTHON_OBJECT": 24},
    "DALIImageType": {"RGB": 0, "BGR": 1, "GRAY": 2, "YCbCr": 3, "ANY_DATA": 4},
    "DALIInterpType": {"INTERP_NN": 0, "INTERP_LINEAR": 1, "INTERP_CUBIC": 2, "INTERP_LANCZOS3": 3,
                       "INTERP_TRIANGULAR": 4, "INTERP_GAUSSIAN": 5},
}


def _number(v: enum.Enum) -> int:
    table = _NUMBERS[type(v).__name__]
    if v.name not in table:
        raise TypeError(f"{v!r} has no number in DALI")
    return table[v.name]


def enum_from_number(cls: type[enum.Enum], n: int) -> enum.Enum:
    """The value of DALI enum `cls` whose number (`int(value)`) is `n`."""
    for name, k in _NUMBERS[cls.__name__].items():
        if k == int(n):
            return cls[name]
    raise ValueError(f"{n} is not a value of {cls.__name__}")


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

NO_TYPE, STRING, FEATURE, PYTHON_OBJECT = (DALIDataType.NO_TYPE, DALIDataType.STRING, DALIDataType.FEATURE,
                                           DALIDataType.PYTHON_OBJECT)
IMAGE_TYPE, DATA_TYPE, INTERP_TYPE, TENSOR_LAYOUT = (DALIDataType.IMAGE_TYPE, DALIDataType.DATA_TYPE,
                                                     DALIDataType.INTERP_TYPE, DALIDataType.TENSOR_LAYOUT)

# DALI's backend names the class `.dtype` values belong to `_DALIDataType` (a DALIDataType whose call
# warns); here `.dtype` values are plain DALIDataType members, so both names are the one class.
_DALIDataType = DALIDataType

# The element types DALI groups by kind, in DALI's order (its tests iterate `types._all_types`).
_bool_types = [BOOL]
_int_types = [INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64]
_float_types = [FLOAT16, FLOAT, FLOAT64]
_all_types = _bool_types + _int_types + _float_types


class TensorLayout(str):
    """A layout such as "HWC": a string (DALI has a class of its own; a str subclass compares equal
    to plain strings either way)."""

    def __repr__(self) -> str:
        return f"TensorLayout({str(self)!r})"


# DALI's legacy layout constants (`types.NCHW`) are plain layout strings here.
NCHW, NHWC, NFHWC, NFCHW, SAME = "CHW", "HWC", "FHWC", "FCHW", ""

# `device_id` of a pipeline that runs only on the CPU (DALI's value; `None` means the same here).
CPU_ONLY_DEVICE_ID = -99999


class PipelineAPIType(enum.Enum):
    """How a pipeline is driven (DALI's names); torch_dali drives every kind the same way."""

    BASIC = 0
    ITERATOR = 1
    SCHEDULED = 2


class CUDAStream:
    """A raw CUDA stream handle, as DALI passes it around (`ptr`, 0 = the default stream)."""

    def __init__(self, ptr: int = 0) -> None:
        self._ptr = int(ptr)

    @property
    def ptr(self) -> int:
        return self._ptr


class SampleInfo(NamedTuple):
    """What a per-sample external source callable is given."""

    idx_in_epoch: int
    idx_in_batch: int
    iteration: int
    epoch_idx: int


class BatchInfo(NamedTuple):
    """What a batch external source callable is given with `batch_info=True`."""

    iteration: int
    epoch_idx: int

_TORCH = {
    DALIDataType.BOOL: torch.bool, DALIDataType.UINT8: torch.uint8, DALIDataType.UINT16: torch.uint16,
    DALIDataType.UINT32: torch.uint32, DALIDataType.UINT64: torch.uint64, DALIDataType.INT8: torch.int8,
    DALIDataType.INT16: torch.int16, DALIDataType.INT32: torch.int32, DALIDataType.INT64: torch.int64,
    DALIDataType.FLOAT16: torch.float16, DALIDataType.BFLOAT16: torch.bfloat16,
    DALIDataType.FLOAT: torch.float32, DALIDataType.FLOAT64: torch.float64,
}
_FROM_TORCH = {v: k for k, v in _TORCH.items()}

ENUMS: tuple[type[enum.Enum], ...] = (DALIDataType, DALIImageType, DALIInterpType, OutOfBoundsPolicy)


def to_torch_dtype(dtype: DALIDataType | torch.dtype | str | Any) -> torch.dtype:
    """Accepts `types.FLOAT`, `torch.float32`, `"float32"` or a NumPy type (`np.float32`)."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str):
        dtype = DALIDataType(dtype) if dtype in {d.key for d in DALIDataType} else DALIDataType[dtype]
    elif not isinstance(dtype, DALIDataType):
        dtype = to_dali_type(dtype)
    if dtype not in _TORCH:
        raise KeyError(f"{dtype!r} is not an element type of tensors")
    return _TORCH[dtype]


def from_torch_dtype(dtype: torch.dtype) -> DALIDataType:
    return _FROM_TORCH[dtype]


def enum_key(v: Any) -> Any:
    """torch_dali's name of an enum member (`types.INTERP_LINEAR` -> "linear"; `.value` of an enum
    without one); anything else unchanged."""
    if isinstance(v, _Numbered):
        return v.key
    return v.value if isinstance(v, enum.Enum) else v


# The element types of tensors of enum values, and the enum each holds.
ENUM_ELEMENT_TYPES: dict[DALIDataType, type[enum.Enum]] = {
    DALIDataType.DATA_TYPE: DALIDataType, DALIDataType.IMAGE_TYPE: DALIImageType,
    DALIDataType.INTERP_TYPE: DALIInterpType}


def enum_element_type(member: enum.Enum) -> DALIDataType | None:
    """The element type a tensor of `member`'s enum has (`types.RGB` -> `types.IMAGE_TYPE`)."""
    return next((t for t, cls in ENUM_ELEMENT_TYPES.items() if isinstance(member, cls)), None)


def enum_by_name(name: str) -> enum.Enum:
    """`"INTERP_LINEAR"` -> `types.INTERP_LINEAR`; the inverse of how YAML writes enums."""
    for cls in ENUMS:
        if name in cls.__members__:
            return cls[name]
    raise KeyError(name)


_NUMPY = {
    DALIDataType.BOOL: np.bool_, DALIDataType.UINT8: np.uint8, DALIDataType.UINT16: np.uint16,
    DALIDataType.UINT32: np.uint32, DALIDataType.UINT64: np.uint64, DALIDataType.INT8: np.int8,
    DALIDataType.INT16: np.int16, DALIDataType.INT32: np.int32, DALIDataType.INT64: np.int64,
    DALIDataType.FLOAT16: np.float16, DALIDataType.FLOAT: np.float32, DALIDataType.FLOAT64: np.float64,
}
_FROM_NUMPY = {np.dtype(v): k for k, v in _NUMPY.items()}


def to_numpy_type(dali_type: DALIDataType) -> type:
    """`types.FLOAT` -> `np.float32` (element types only)."""
    if dali_type not in _NUMPY:
        raise KeyError(f"{dali_type!r} has no NumPy type")
    return _NUMPY[dali_type]


def to_dali_type(framework_type: Any) -> DALIDataType:
    """A NumPy type or dtype, a torch dtype or a type name (`"float32"`) -> DALIDataType."""
    if isinstance(framework_type, DALIDataType):
        return framework_type
    if isinstance(framework_type, torch.dtype):
        if framework_type not in _FROM_TORCH:
            raise TypeError(f"{framework_type} has no DALI data type")
        return _FROM_TORCH[framework_type]
    name = framework_type
    if isinstance(name, str) and name.startswith("torch."):
        name = name[len("torch."):]
    try:
        dt = np.dtype(name)
    except TypeError:
        raise TypeError(f"{framework_type!r} could not be converted to a DALI data type") from None
    if dt not in _FROM_NUMPY:
        raise TypeError(f"{framework_type!r} could not be converted to a DALI data type")
    return _FROM_NUMPY[dt]


_INTS = {DALIDataType.UINT8, DALIDataType.UINT16, DALIDataType.UINT32, DALIDataType.UINT64, DALIDataType.INT8,
         DALIDataType.INT16, DALIDataType.INT32, DALIDataType.INT64}
_FLOATS = {DALIDataType.FLOAT16, DALIDataType.BFLOAT16, DALIDataType.FLOAT, DALIDataType.FLOAT64}


class ScalarConstant:
    """A typed scalar for arithmetic on DataNodes (`x * types.Constant(2, types.UINT8)`): the
    type takes part in type promotion as a tensor of that type would. Python `bool`, `int` and
    `float` count as BOOL, INT32 and FLOAT; NumPy scalars keep their own type."""

    def __init__(self, value: Any, dtype: DALIDataType | None = None) -> None:
        self.shape: list[int] = []
        if hasattr(value, "dtype") and hasattr(value, "item"):  # NumPy scalar or 0-d array/tensor
            own = to_dali_type(value.dtype)
            value = value.item()
            dtype = own if dtype is None else dtype
        if isinstance(value, enum.Enum) or not isinstance(value, (bool, int, float)):
            raise TypeError(f"types.Constant: a scalar must be a bool, int or float, got {type(value).__name__}")
        if dtype is None:
            dtype = (DALIDataType.BOOL if isinstance(value, bool) else
                     DALIDataType.INT32 if isinstance(value, int) else DALIDataType.FLOAT)
        dtype = to_dali_type(dtype) if not isinstance(dtype, DALIDataType) else dtype
        if dtype == DALIDataType.BOOL:
            value = bool(value)
        elif dtype in _INTS:
            value = int(value)
        elif dtype in _FLOATS:
            value = float(value)
        else:
            raise TypeError(f"types.Constant: a scalar cannot have type {dtype!r}")
        self.value: bool | int | float = value
        self.dtype: DALIDataType = dtype

    def _as(self, dtype: DALIDataType) -> "ScalarConstant":
        return ScalarConstant(self.value, dtype)

    def bool(self) -> "ScalarConstant":
        return self._as(DALIDataType.BOOL)

    def int8(self) -> "ScalarConstant":
        return self._as(DALIDataType.INT8)

    def int16(self) -> "ScalarConstant":
        return self._as(DALIDataType.INT16)

    def int32(self) -> "ScalarConstant":
        return self._as(DALIDataType.INT32)

    def int64(self) -> "ScalarConstant":
        return self._as(DALIDataType.INT64)

    def uint8(self) -> "ScalarConstant":
        return self._as(DALIDataType.UINT8)

    def uint16(self) -> "ScalarConstant":
        return self._as(DALIDataType.UINT16)

    def uint32(self) -> "ScalarConstant":
        return self._as(DALIDataType.UINT32)

    def uint64(self) -> "ScalarConstant":
        return self._as(DALIDataType.UINT64)

    def float16(self) -> "ScalarConstant":
        return self._as(DALIDataType.FLOAT16)

    def float32(self) -> "ScalarConstant":
        return self._as(DALIDataType.FLOAT)

    def float64(self) -> "ScalarConstant":
        return self._as(DALIDataType.FLOAT64)

    def __eq__(self, other: Any) -> Any:
        if isinstance(other, ScalarConstant):
            return self.value == other.value and self.dtype == other.dtype
        return NotImplemented  # a DataNode's reflected __eq__ makes the comparison node

    def __ne__(self, other: Any) -> Any:
        if isinstance(other, ScalarConstant):
            return not (self.value == other.value and self.dtype == other.dtype)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.value, self.dtype))

    def __bool__(self) -> bool:
        if self.dtype in _FLOATS:
            raise TypeError("types.Constant: a floating-point constant has no truth value; convert it "
                            "with .bool() or .int32() first")
        return bool(self.value)

    def __int__(self) -> int:
        if self.dtype in _FLOATS:
            raise TypeError("types.Constant: convert a floating-point constant with .int32() (or "
                            "another integer type) before int()")
        return int(self.value)

    def __float__(self) -> float:
        if self.dtype not in _FLOATS:
            raise TypeError("types.Constant: convert an integer constant with .float32() before float()")
        return float(self.value)

    def __str__(self) -> str:
        return f"{self.value}:{self.dtype}"

    def __repr__(self) -> str:
        return repr(self.value)


def _is_array(value: Any) -> bool:
    return isinstance(value, (np.ndarray, torch.Tensor))


def Constant(value: Any, dtype: DALIDataType | None = None, shape: Any = None, layout: str | None = None,
             device: str | None = None, **kwargs: Any) -> Any:
    """A constant: a ScalarConstant when `value` is a scalar and nothing forces a tensor (a shape,
    a layout, a device or any other argument); otherwise a node (`fn.constant`) that gives the
    same tensor for every sample."""
    scalar_shape = shape is None or (isinstance(shape, (list, tuple)) and len(shape) == 0)
    is_enum = isinstance(value, enum.Enum) or dtype in (DALIDataType.DATA_TYPE, DALIDataType.IMAGE_TYPE,
                                                       DALIDataType.INTERP_TYPE)
    array = _is_array(value) and tuple(value.shape) != ()
    if (device is None and not array and not isinstance(value, (list, tuple)) and not is_enum
            and scalar_shape and not kwargs and layout is None):
        return ScalarConstant(value, dtype)
    return _constant_node(value, dtype=dtype, shape=shape, layout=layout, device=device, **kwargs)


def ConstantNode(device: str | None, value: Any, dtype: DALIDataType | None, shape: Any, layout: str | None,
                 **kwargs: Any) -> Any:
    """DALI's spelling of Constant(..., device=...) that always makes a node."""
    return _constant_node(value, dtype=dtype, shape=shape, layout=layout, device=device, **kwargs)


# -- the node behind Constant(...) -------------------------------------------------------------------
# A constant node is an op (`fn.constant`), and ops sit above this module: the ops layer registers
# the maker (ops/tensor_create.py, on `import torch_dali`) instead of this module importing up.

def _no_constant_node(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("types.Constant: no constant op is registered (import torch_dali first)")


_constant_node: Callable[..., Any] = _no_constant_node


def set_constant_node(maker: Callable[..., Any]) -> None:
    """Sets what `Constant(...)` calls to make a constant node: `maker(value, dtype=, shape=,
    layout=, device=, **kwargs)`."""
    global _constant_node
    _constant_node = maker
