"""Arithmetic on DataNodes (`images / 255`, `labels - 1`, `a * b`, `-x`), as in DALI.

Each expression is an ordinary graph node (so it serializes), computed per sample with torch's
elementwise ops on the op's device. Type promotion follows torch's rules (DALI's differ in corner
cases such as uint8 + int32 constants; cast explicitly where the type matters).
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import torch

from ..errors import ArgumentError
from ._operator import Operator, SampleContext
from ._registry import call_op, lookup, register
from ._schema import Arg, OpSchema, one_of

_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": torch.true_divide,
    "floordiv": torch.floor_divide, "mod": torch.remainder, "pow": torch.pow, "min": torch.minimum,
    "max": torch.maximum, "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt,
    "ge": torch.ge, "and": torch.bitwise_and, "or": torch.bitwise_or, "xor": torch.bitwise_xor,
}
_UNARY: dict[str, Callable[[Any], Any]] = {"neg": torch.neg, "pos": lambda x: x, "abs": torch.abs}


class Arithmetic(Operator):
    def setup(self) -> None:
        self.name_of = self.args["op"]
        self.scalar = self.args["scalar"]
        self.reverse = self.args["reverse"]
        n_in = len(self.node.inputs)
        if self.name_of in _UNARY and (n_in != 1 or self.scalar is not None):
            raise ArgumentError(f"{self.name}: `{self.name_of}` takes one input and no scalar")
        if self.name_of in _BINARY and n_in + (self.scalar is not None) != 2:
            raise ArgumentError(f"{self.name}: `{self.name_of}` takes two operands (inputs or a scalar)")

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        if self.name_of in _UNARY:
            return _UNARY[self.name_of](inputs[0])
        a = inputs[0]
        if len(inputs) == 2:
            return _BINARY[self.name_of](a, inputs[1])
        s = self.scalar
        s = int(s) if float(s).is_integer() and not a.is_floating_point() else s
        return _BINARY[self.name_of](s, a) if self.reverse else _BINARY[self.name_of](a, s)


register(OpSchema(
    name="arithmetic", impl=Arithmetic, min_inputs=1, max_inputs=2, class_name_override="ArithmeticGenericOp",
    doc="Elementwise arithmetic on one or two inputs (or an input and a scalar); what `a + b` makes.",
    args=(Arg("op", "str", doc="operation", check=one_of(*_BINARY, *_UNARY)),
          Arg("scalar", "float", None, doc="the constant operand, if any"),
          Arg("reverse", "bool", False, doc="the scalar is the left operand"))))


def _binary(name: str, reverse: bool = False) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        from ..graph.node import DataNode
        schema = lookup("arithmetic")
        if isinstance(other, DataNode):
            ins = (other, self) if reverse else (self, other)
            return call_op(schema, ins, {"op": name})
        if isinstance(other, bool) or not isinstance(other, (int, float)):
            return NotImplemented
        return call_op(schema, (self,), {"op": name, "scalar": float(other), "reverse": reverse})
    return method


def _unary(name: str) -> Callable[[Any], Any]:
    def method(self: Any) -> Any:
        return call_op(lookup("arithmetic"), (self,), {"op": name})
    return method


def install(cls: type) -> None:
    """Gives DataNode its operators."""
    for py, name in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "truediv"),
                     ("floordiv", "floordiv"), ("mod", "mod"), ("pow", "pow"), ("and", "and"),
                     ("or", "or"), ("xor", "xor")):
        setattr(cls, f"__{py}__", _binary(name))
        setattr(cls, f"__r{py}__", _binary(name, reverse=True))
    for py in ("neg", "pos", "abs"):
        setattr(cls, f"__{py}__", _unary(py))
    # Comparisons stay Python's identity tests: code (ours and users') keeps DataNodes in lists and
    # dicts. Elementwise comparisons are `fn.arithmetic(a, b, op="lt")`.


def _install() -> None:
    from ..graph.node import DataNode
    install(DataNode)


_install()
