"""Tensors of enum values (`types.Constant(types.INTERP_CUBIC)`, `fn.cast(x, dtype=types.INTERP_TYPE)`).

DALI has element types for its enums (`types.DATA_TYPE`, `types.IMAGE_TYPE`, `types.INTERP_TYPE`):
a tensor of them holds each member's number (`.value`). torch has no such dtype, so here the data
are int32 tensors and the element type is known from the graph: a value made by `constant` or
`cast` with an enum `dtype`, or passed on unchanged by an op that only moves or reshapes elements,
is a tensor of enum values. A pipeline output of that kind reports the enum type as its `dtype`.

What DALI 2.4 does with them (measured on its CPU backend): `cast` converts them to and from
integer and boolean types and other enum types, never to or from floating point (the pipeline
fails when it runs); arithmetic on them fails the same way; NumPy views of them (`as_array()`,
`at(i)`) are a TypeError.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from .. import types
from ..errors import ArgumentTypeError

if TYPE_CHECKING:
    from ..graph.node import DataNode

# Ops whose first output holds elements of their first input, moved or reshaped but not converted
# (each takes enum values in DALI 2.4, measured).
_KEEP_ELEMENTS = frozenset({
    "copy", "reshape", "squeeze", "expand_dims", "element_extract", "permute_batch", "_tensor_subscript",
    "_subscript_dim_check", "per_frame", "random.choice", "_conditional.split", "_conditional.merge",
    "_conditional.route", "_conditional.pick", "_conditional.select"})
# The ops that take enum values as data besides those (DALI 2.4, measured); any other op given them
# (arithmetic, slice, cat, stack, transpose, pad, flip, full, zeros_like, python_function...) fails when
# the pipeline runs, in DALI and here.
_TAKE_ENUMS = _KEEP_ELEMENTS | {"reinterpret", "cast", "cast_like", "shapes", "get_property"}


def is_enum_type(dtype: Any) -> bool:
    return isinstance(dtype, types.DALIDataType) and dtype in types.ENUM_ELEMENT_TYPES


def storage_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype a tensor of DALI element type `dtype` is held in (int32 for enum types)."""
    return torch.int32 if is_enum_type(dtype) else types.to_torch_dtype(dtype)


def enum_type_of(d: "DataNode") -> types.DALIDataType | None:
    """The enum element type of the tensors `d` holds, or None when they are not enum values."""
    for _ in range(10_000):  # a chain of element-keeping ops, followed back to its source
        node = d.node
        op = node.schema.name
        if op in ("constant", "cast"):
            dtype = node.args.get("dtype")
            return dtype if is_enum_type(dtype) else None
        if op == "cast_like" and len(node.inputs) > 1:  # the type of the second input
            d = node.inputs[1]
            continue
        if op == "reinterpret" and node.args.get("dtype") is None and node.inputs:
            d = node.inputs[0]
            continue
        if op in _KEEP_ELEMENTS and node.inputs and (d.index == 0 or op == "_conditional.split"):
            d = node.inputs[0]
            continue
        return None
    return None


def enum_refusal(node: Any) -> str | None:
    """Why op `node` cannot run (it is given enum values as data and takes none), or None."""
    if node.schema.name in _TAKE_ENUMS:
        return None
    for k, d in enumerate(node.inputs):
        if isinstance(d, (list, tuple)):  # an input set
            continue
        kind = enum_type_of(d)
        if kind is not None:
            return (f"{node.schema.display_name()}: input {k} holds enum values ({kind!r}), which this op does "
                    "not take; fn.cast them to an integer type first")
    return None


def refuse_float(op: str, source: Any, target: Any) -> None:
    """Raises for a conversion between enum values and floating point (DALI refuses both ways)."""
    raise ArgumentTypeError(f"{op}: tensors of {source!r} cannot be converted to {target!r}; enum values "
                            "convert only to and from integer and boolean types")
