"""Ops that make tensors: `constant` (what `types.Constant` makes), `zeros`/`ones`/`full` and their
`_like` forms. Checked against DALI 2.4's CPU outputs: `zeros`/`ones` default to INT32 and a 0-d
sample; `full` takes its type from `fill_value` and broadcasts it NumPy-style to `shape`; the
`_like` forms take the shape, type and layout of their input (`dtype` overrides the type).
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator, SampleContext
from .arith_kernels import cast_sat
from .enum_data import storage_dtype
from ._registry import call_op, lookup, register
from ._schema import Arg, OpSchema


def _shape_of(op: str, shape: Any) -> tuple[int, ...]:
    dims = [] if shape is None else ([shape] if isinstance(shape, (int, float)) else list(shape))
    if not all(float(d).is_integer() and d >= 0 for d in dims):
        raise ArgumentError(f"{op}: `shape` must be non-negative integers, got {shape!r}")
    return tuple(int(d) for d in dims)


def _check_layout(op: str, layout: str, ndim: int) -> None:
    if layout and len(layout) != ndim:
        raise ArgumentError(f"{op}: `layout` {layout!r} names {len(layout)} dimensions, the output has {ndim}")


class Constant(Operator):
    """The same tensor in every sample (made once, at build)."""

    sample_wise = False

    def setup(self) -> None:
        a = self.args
        fdata, idata = a["fdata"], a["idata"]
        if (fdata is None) == (idata is None):
            raise ArgumentError(f"{self.name}: give exactly one of `fdata` and `idata`")
        data = fdata if fdata is not None else idata
        dtype = a["dtype"] or (types.FLOAT if fdata is not None else types.INT32)
        tdt = storage_dtype(dtype)
        flat = torch.tensor(data, dtype=torch.float64 if fdata is not None else torch.int64)
        # without `shape`, a 1-D tensor of the data, one value included (DALI 2.4: idata=[2] is (1,))
        shape = _shape_of(self.name, a["shape"]) if a["shape"] is not None else (len(data),)
        volume = int(np.prod(shape)) if shape else 1
        if flat.numel() == 1:
            value = flat.reshape(()).expand(shape)
        elif flat.numel() == volume:
            value = flat.reshape(shape)
        else:
            raise ArgumentError(f"{self.name}: {flat.numel()} values do not fill the shape {list(shape)} "
                                f"({volume} elements)")
        _check_layout(self.name, a["layout"] or "", len(shape))
        self.value = cast_sat(value, tdt).contiguous()  # saturating, rounding half away: DALI's conversion

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        v = self.value if self.device.type == "cpu" else self.value.to(self.device)
        return [TensorList(v.unsqueeze(0).expand(ctx.batch_size, *v.shape).clone(), self.args["layout"] or "")]

    def output_layout(self, index: int) -> str:
        return self.args["layout"] or ""


class _Fill(Operator):
    """zeros / ones / full: a tensor of `shape` (per sample, may be an argument input)."""

    fill: float = 0.0

    def setup(self) -> None:
        self.dtype = types.to_torch_dtype(self.args["dtype"]) if self.args.get("dtype") else None

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        shape = _shape_of(self.name, args.get("shape", self.args.get("shape")))
        _check_layout(self.name, self.args.get("layout") or "", len(shape))
        if inputs:  # full: the fill value, broadcast
            return _fit(self.name, inputs[0], tuple(shape), "shape")
        return torch.full(shape, self.fill, dtype=self.dtype or torch.int32)

    def output_layout(self, index: int) -> str:
        return self.args.get("layout") or ""


def _fit(name: str, value: torch.Tensor, shape: tuple[int, ...], what: str) -> torch.Tensor:
    """The fill value spread over `shape` as DALI's full does. Dimensions are matched from the
    last: equal sizes, or a fill dimension of 1 (repeated), or an output dimension of 1; the fill's
    leading dimensions the output lacks are dropped. DALI then reads the fill's first values in
    order, as a tensor of those reduced sizes (so an output dimension of 1 does not take the fill's
    first row but its first values: a (2, 3) fill for (2, 1) gives 0, 1, not 0, 3)."""
    tail = tuple(int(v) for v in value.shape[max(0, value.dim() - len(shape)):])
    lead = len(shape) - len(tail)
    reduced = []
    for i, f in enumerate(tail):
        o = shape[lead + i]
        if f != o and f != 1 and o != 1:
            raise ArgumentError(f"{name}: fill_value of shape {list(value.shape)} does not fit {what} "
                                f"{list(shape)}: dimension {lead + i} is {o} there and {f} in the fill "
                                "(sizes must be equal, or 1 on either side)")
        reduced.append(1 if o == 1 else f)
    n = 1
    for r in reduced:
        n *= r
    v = value.contiguous().reshape(-1)[:n].reshape(reduced)
    return torch.broadcast_to(v, shape).clone()


class Zeros(_Fill):
    fill = 0.0


class Ones(_Fill):
    fill = 1.0


class Full(_Fill):
    pass


class _Like(Operator):
    """zeros_like / ones_like / full_like: the input's shape, type (or `dtype`) and layout."""

    fill: float = 0.0

    def setup(self) -> None:
        d = self.args.get("dtype")
        self.dtype = types.to_torch_dtype(d) if d is not None else None

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        like = inputs[0]
        if len(inputs) == 2:  # full_like: the input's shape and type, the fill value converted
            return cast_sat(_fit(self.name, inputs[1], tuple(like.shape), "the input's shape"), like.dtype)
        return torch.full(like.shape, self.fill, dtype=self.dtype or like.dtype)


class ZerosLike(_Like):
    fill = 0.0


class OnesLike(_Like):
    fill = 1.0


class FullLike(_Like):
    pass


_SHAPE = Arg("shape", "ints", None, "the shape of a sample (default: a scalar)", tensor=True)
_LAYOUT = Arg("layout", "layout", None, "the layout of the output")
_DTYPE_INT32 = Arg("dtype", "dtype", types.INT32, "the element type")

register(OpSchema(
    name="constant", impl=Constant, min_inputs=0, max_inputs=0, devices=("cpu", "gpu"),
    doc="The same constant tensor in every sample (what types.Constant makes): `fdata` (floats) or "
        "`idata` (integers), reshaped to `shape` (a single value fills it).",
    args=(Arg("fdata", "float_list", None, "the values, as floats"),
          Arg("idata", "int_list", None, "the values, as integers"),
          Arg("shape", "int_list", None, "the shape (default: that of the data)"),
          Arg("dtype", "dtype", None, "the element type (default: FLOAT for fdata, INT32 for idata)"),
          Arg("layout", "layout", "", "the layout of the output"))))
for _name, _impl in (("zeros", Zeros), ("ones", Ones)):
    register(OpSchema(name=_name, impl=_impl, min_inputs=0, max_inputs=0, devices=("cpu",),
                      doc=f"A tensor of {_name} of `shape` and `dtype` in every sample.",
                      args=(_SHAPE, _DTYPE_INT32, _LAYOUT)))
register(OpSchema(name="full", impl=Full, min_inputs=1, max_inputs=1, devices=("cpu",),
                  doc="A tensor of `shape` filled with the input (`fill_value`, broadcast NumPy-style); its type "
                      "is the input's.", args=(_SHAPE, _LAYOUT)))
for _name, _impl in (("zeros_like", ZerosLike), ("ones_like", OnesLike)):
    register(OpSchema(name=_name, impl=_impl, min_inputs=1, max_inputs=1, devices=("cpu",), input_kinds=("any",),
                      doc=f"{_name.split('_')[0].capitalize()} with the input's shape, type (or `dtype`) and "
                          "layout.", args=(Arg("dtype", "dtype", None, "the element type (default: the input's)"),)))
register(OpSchema(name="full_like", impl=FullLike, min_inputs=2, max_inputs=2, devices=("cpu",), input_kinds=("any",),
                  doc="The second input (`fill_value`, broadcast) with the first input's shape and layout."))


# -- types.Constant ----------------------------------------------------------------------------------

def _from_array(value: Any, dtype: Any) -> tuple[np.ndarray, Any]:
    """An array constant as NumPy, with DALI's narrowing: float64 data travel as float32, and 64-bit
    integers of a NumPy array without an explicit `dtype` become 32-bit (values must fit); a torch
    tensor's integers keep their type (DALI 2.4: `fn.copy(torch.full((2,), 6))` is INT64)."""
    arr = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    elif dtype is None and arr.dtype in (np.int64, np.uint64) and not isinstance(value, torch.Tensor):
        narrow = np.int32 if arr.dtype == np.int64 else np.uint32
        info = np.iinfo(narrow)
        if arr.size and (arr.min() < info.min or arr.max() > info.max):
            bad = arr.min() if arr.min() < info.min else arr.max()
            raise OverflowError(f"types.Constant: {bad} does not fit in {np.dtype(narrow).name}; give `dtype`")
        arr = arr.astype(narrow)
    return arr, types.to_dali_type(arr.dtype)


def _from_enums(items: list[Any]) -> tuple[list[Any], Any]:
    """Enum members (all of one enum) as their numbers, and the element type of a tensor of them."""
    kinds = {type(x) for x in items}
    kind = types.enum_element_type(items[0])
    if len(kinds) > 1 or kind is None:
        names = ", ".join(sorted(k.__name__ for k in kinds))
        raise ArgumentTypeError(f"types.Constant: a tensor of enum values holds members of one enum "
                                f"(DALIDataType, DALIImageType or DALIInterpType); got {names}")
    return [x.value for x in items], kind


def _from_python(value: Any) -> tuple[list[Any], Any]:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if items and any(isinstance(x, enum.Enum) for x in items):
        return _from_enums(items)
    for x in items:
        if not isinstance(x, (bool, int, float)):
            raise ArgumentTypeError(f"types.Constant: values must be numbers, got {type(x).__name__}")
    if any(isinstance(x, float) for x in items):
        kind = types.FLOAT
    elif any(isinstance(x, int) and not isinstance(x, bool) for x in items):
        kind = types.INT32
    elif items:
        kind = types.BOOL
    else:
        kind = types.FLOAT
    return items, kind


def constant_node(value: Any, dtype: Any = None, shape: Any = None, layout: str | None = None,
                  device: str | None = None, **kwargs: Any) -> Any:
    """`types.Constant(...)` as a node: `fn.constant` with the data, shape, type and layout."""
    if dtype is not None and not isinstance(dtype, types.DALIDataType):
        dtype = types.to_dali_type(dtype)
    if isinstance(value, (np.ndarray, np.generic, torch.Tensor)):
        arr, own = _from_array(value, dtype)
        if shape is None:
            shape = list(arr.shape)
        data: list[Any] = arr.reshape(-1).tolist()
        is_int = arr.dtype.kind in "biu"
    else:
        data, own = _from_python(value)
        if shape is None:
            shape = [len(data)] if isinstance(value, (list, tuple)) else []
        is_int = own in (types.INT32, types.BOOL) or own in types.ENUM_ELEMENT_TYPES
    args: dict[str, Any] = {"shape": list(shape) if not isinstance(shape, int) else [shape],
                            "dtype": dtype or own, "layout": layout or ""}
    if is_int:
        args["idata"] = [int(x) for x in data]
    else:
        args["fdata"] = [float(x) for x in data]
    if device is not None:
        args["device"] = device
    args.update(kwargs)
    return call_op(lookup("constant"), (), args)


types.set_constant_node(constant_node)
