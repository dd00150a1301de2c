"""The dynamic mode's computations: arithmetic on Tensors and Batches (the kernels of torch_dali's
arithmetic op, DALI's type promotion) and every other op, run through `torch_dali.eager.apply`,
the same kernels and pipelines as `fn.*`."""
from __future__ import annotations

import enum
import numbers
from typing import Any, Sequence

from ... import eager
from ...errors import ArgumentError, PipelineError
from ... import types as dali_types
from ...ops import arith_kernels as K
from ...ops._registry import lookup
from ...ops.arg_input_types import data_dtype
from ...ops.arithmetic import check_layouts
from ...ops._schema import COMMON_ARGS
from ...tensor_list import TensorList
from . import _device as D
from . import _type as T
from ._data import Batch, Tensor, as_tensor, sample_of
from ._device import Device
from ._eval import EvalContext
from ._stream import run_on


# -- arithmetic ------------------------------------------------------------------------------------

def _operand(x: Any, gpu: Device | None) -> Tensor | Batch:
    """A Tensor or Batch as is; anything else (a number, a list) as a Tensor on the device of the
    expression's GPU operands if it has any and `x` is a number or a list (DALI's ndd: `gpu_tensor * 2`
    stays on the GPU; a NumPy array stays on the CPU, and mixing devices is refused)."""
    if isinstance(x, (Tensor, Batch)):
        return x
    if isinstance(x, enum.Enum):
        raise TypeError(f"ndd: arithmetic on {x!r} is not supported")
    return as_tensor(x, device=gpu if isinstance(x, (numbers.Real, list, tuple)) else None)


def _device_name(d: Device) -> str:
    return d.device_type.upper()


def _arith(op: str, *operands: Any) -> Tensor | Batch:
    gpu = next((x.device for x in operands if isinstance(x, (Tensor, Batch)) and x.device.device_type == "gpu"),
               None)
    xs = [_operand(x, gpu) for x in operands]
    devs = {x.device.device_type for x in xs}
    if len(devs) > 1:
        a, b = (_device_name(x.device) for x in xs[:2])
        raise ValueError(f"ndd: `{K.display(op)}` got operands on different devices: {a} and {b}")
    for x in xs:
        if x.dtype.kind is T.DType.Kind.enum:
            raise TypeError(f"ndd: arithmetic on {x.dtype} values is not supported")
    try:  # as the pipeline's arithmetic op, a RuntimeError (DALI 2.4's, when it evaluates)
        check_layouts(f"ndd: `{K.display(op)}`", [x.layout or "" for x in xs])
    except ArgumentError as e:
        raise PipelineError(str(e)) from None
    out_type = K.result_type(op, [x.dtype.torch_dtype for x in xs])
    with run_on(EvalContext.current().op_stream()):
        return _compute(op, xs, out_type)


def _compute(op: str, xs: list[Tensor | Batch], out_type: Any) -> Tensor | Batch:
    batches = [x for x in xs if isinstance(x, Batch)]
    if not batches:
        r = K.compute(op, [x.torch() for x in xs], out_type)  # type: ignore[union-attr]
        layout = next((x.layout for x in xs if x.layout and x.ndim == r.dim()), None)
        return sample_of(r, T.DType.from_torch(out_type), layout)
    n = batches[0].batch_size
    if any(b.batch_size != n for b in batches):
        raise ValueError(f"ndd: `{K.display(op)}` got batches of different sizes {[b.batch_size for b in batches]}")
    samples = []
    for k in range(n):
        ts = [x.tensors[k].torch() if isinstance(x, Batch) else x.torch() for x in xs]
        samples.append(sample_of(K.compute(op, ts, out_type), T.DType.from_torch(out_type)))
    layout = next((b.layout for b in batches if b.layout and samples and len(b.layout) == samples[0].ndim), None)
    return Batch(samples, dtype=T.DType.from_torch(out_type), layout=layout)


_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "fdiv", "floordiv": "div", "pow": "pow",
           "mod": "mod", "and": "bitand", "or": "bitor", "xor": "bitxor", "lshift": "lshift", "rshift": "rshift"}
_COMPARE = {"eq": "eq", "ne": "neq", "lt": "lt", "le": "leq", "gt": "gt", "ge": "geq"}


def _install_arithmetic(cls: type) -> None:
    def binary(op: str, reverse: bool) -> Any:
        if reverse:
            return lambda self, other: _arith(op, other, self)
        return lambda self, other: _arith(op, self, other)

    for py, op in _BINARY.items():
        setattr(cls, f"__{py}__", binary(op, False))
        setattr(cls, f"__r{py}__", binary(op, True))
    for py, op in _COMPARE.items():
        setattr(cls, f"__{py}__", binary(op, False))
    cls.__neg__ = lambda self: _arith("minus", self)
    cls.__pos__ = lambda self: _arith("plus", self)
    cls.__abs__ = lambda self: _arith("abs", self)
    cls.__invert__ = lambda self: _arith("bitnot", self)
    cls.__hash__ = None  # `==` is elementwise


_install_arithmetic(Tensor)
_install_arithmetic(Batch)


def math_op(op: str, *operands: Any) -> Tensor | Batch:
    """An elementwise math function (`sqrt`, `min`, `clamp`...) with DALI's type rules."""
    return _arith(op, *operands)


# -- ops -------------------------------------------------------------------------------------------

def _arg_value(schema: Any, name: str, v: Any, n: int | None) -> Any:
    """An argument as eager.apply takes it: per-sample TensorLists for Batches (and Tensors of
    per-sample arguments in batch mode), plain values otherwise."""
    if isinstance(v, T.DType):
        return v.type_id
    if isinstance(v, Device):
        return str(v.device_type)
    a = schema.arg(name)
    if _nested(v) and a is not None and a.tensor:
        # DALI's ndd makes a nested list a tensor argument (`matrix=[[...], [...]]` is a 2x3
        # matrix), read as the argument's own type (`M=[[1, 0], [0, 2]]` of ints is a float
        # matrix there); the fn API has no such form and refuses it
        v = as_tensor(v)
        want = data_dtype(a.kind)
        if want is not None and v.torch().dtype != want:
            v = as_tensor(v.torch().to(want), layout=v.layout)
    if isinstance(v, Batch):
        if n is not None and v.batch_size != n:
            raise ValueError(f"ndd.{schema.name}: argument {name!r} has {v.batch_size} samples, the batch {n}")
        return TensorList([x.torch().cpu() for x in v.tensors], v.layout or "")
    if isinstance(v, Tensor):
        if a is not None and a.tensor:
            return TensorList([v.torch().cpu()] * (n or 1), v.layout or "")
        value = v.torch().cpu()
        return value.item() if value.dim() == 0 else value.tolist()
    return v


def _nested(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and any(isinstance(e, (list, tuple)) for e in v)


def _input_list(x: Any, n: int | None) -> TensorList:
    if isinstance(x, Batch):
        samples = [t.torch() for t in x.tensors]
        return TensorList(samples, x.layout or "")
    t = as_tensor(x)
    return TensorList([t.torch()] * (n or 1), t.layout or "")


def invoke(name: str, inputs: Sequence[Any], kwargs: dict[str, Any], *, draw: int | None = None) -> Any:
    """Applies the op of schema `name` to Tensors / Batches (and tensor-likes): Batch inputs or
    per-sample arguments give Batches, Tensors give Tensors; `batch_size=` makes an op without
    inputs give a Batch. `device=` picks where it runs (default: where the inputs are)."""
    schema = lookup(name)
    kwargs = dict(kwargs)
    device = kwargs.pop("device", None)
    batch_size = kwargs.pop("batch_size", None)
    kwargs.pop("max_batch_size", None)
    kwargs.pop("name", None)
    if not schema.min_inputs <= len(inputs) <= schema.max_inputs:
        # positional inputs are the function's positional parameters: a wrong count is a
        # TypeError, as DALI 2.4's generated signatures raise it
        want = (str(schema.min_inputs) if schema.min_inputs == schema.max_inputs
                else f"{schema.min_inputs} to {schema.max_inputs}")
        raise TypeError(f"{name.split('.')[-1]}() takes {want} positional input(s), {len(inputs)} given")
    for k in kwargs:
        if schema.arg(k) is None and k not in COMMON_ARGS:
            raise TypeError(f"{name.split('.')[-1]}() got an unexpected keyword argument {k!r}")
    batched = [x for x in [*inputs, *kwargs.values()] if isinstance(x, Batch)]
    n = batched[0].batch_size if batched else (int(batch_size) if batch_size is not None else None)
    if batched and batch_size is not None and int(batch_size) != n:
        raise ValueError(f"ndd.{name}: batch_size={batch_size} does not match the inputs' {n} samples")
    if n is not None and n < 1:
        raise ValueError(f"ndd.{name}: a batch needs at least one sample")
    ins = [_input_list(x, n) for x in inputs]
    args = {k: _arg_value(schema, k, v, n) for k, v in kwargs.items()}
    dev = None if device is None else D.device(device).device_type
    with run_on(EvalContext.current().op_stream()):
        outs = eager.apply(name, ins, args, batch_size=n or 1, device=dev, draw=draw)
    results = [_result(o, n is not None) for o in outs]
    return results[0] if len(results) == 1 else tuple(results)


def _result(tl: TensorList, as_batch_: bool) -> Tensor | Batch:
    samples = tl.samples
    dt = T.DType.from_torch(samples[0].dtype) if samples else T.DType.from_type_id(tl.dtype)
    layout = tl.layout() or None
    if as_batch_:
        return Batch([sample_of(s, dt, layout) for s in samples], dtype=dt, layout=layout)
    return sample_of(samples[0], dt, layout)


def from_tensor_list(tl: TensorList, as_batch_: bool = True) -> Tensor | Batch:
    """A pipeline's output batch as a Batch (or its first sample as a Tensor), sharing memory."""
    return _result(tl, as_batch_)


def enum_value(t: Tensor) -> Any:
    """The DALI enum value an enum-typed scalar Tensor holds."""
    cls = {v: k for k, v in T.ENUM_TYPES.items()}.get(t.dtype)
    return dali_types.enum_from_number(cls, int(t.item())) if cls else t.item()
