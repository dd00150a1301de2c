"""`_conditional.select`: what `enable_conditionals` makes where the branches of an `if` on a
DataNode meet: sample i of the output is sample i of the `if` branch's value where the predicate
of sample i is true, else of the `else` branch's value. Both values are full batches (see
`torch_dali.conditionals` for why); the predicate is one scalar per sample on the CPU, of any
type (nonzero is true)."""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema


class Select(Operator):
    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        true, false, pred = inputs
        n = len(pred)
        if len(true) != n or len(false) != n:
            raise ArgumentError(f"{self.name}: the branches and the predicate have different batch sizes "
                                f"({len(true)}, {len(false)}, {n})")
        flags = []
        for i, p in enumerate(pred.samples):
            if p.dim() != 0:
                raise ArgumentError(f"{self.name}: the condition of an `if` on a DataNode must be one scalar (a 0-d "
                                    f"tensor) per sample, on the CPU; sample {i} is {p.dim()}-d, shape "
                                    f"{list(p.shape)}")
            flags.append(bool(p.item()))
        out = [t if f else e for f, t, e in zip(flags, true.samples, false.samples)]
        dtypes = {x.dtype for x in out}
        if len(dtypes) > 1:
            raise ArgumentTypeError(f"{self.name}: the `if` and `else` branches give a variable different "
                                    f"element types ({', '.join(sorted(str(d) for d in dtypes))}); cast one")
        ndims = {x.dim() for x in out}
        if len(ndims) > 1:
            raise ArgumentError(f"{self.name}: the `if` and `else` branches give a variable different numbers of "
                                f"dimensions ({sorted(ndims)})")
        # the layout of the branch the samples took, as DALI's merge gives it (a branch no sample
        # took does not count); two taken branches must agree where both have one (DALI also
        # refuses one empty: on_purpose.md)
        taken = set(flags)
        if taken == {True, False} and true.layout() and false.layout() and true.layout() != false.layout():
            raise ArgumentError(f"{self.name}: the branches give different layouts ({true.layout()!r}, "
                                f"{false.layout()!r})")
        layout = false.layout() if taken == {False} else true.layout() if taken == {True} else \
            (true.layout() or false.layout())
        if out and all(x.shape == out[0].shape for x in out) and out[0].device.type == "cpu":
            return [TensorList(torch.stack(out), layout)]
        return [TensorList(out, layout)]

    def output_layout(self, index: int) -> str | None:
        return None


register(OpSchema(
    name="_conditional.select", impl=Select, min_inputs=3, max_inputs=3, devices=("cpu", "gpu"),
    input_devices="any", class_name_override="Select",
    doc="Per sample, the first input where the third (the predicate, a CPU scalar) is true, else the second: "
        "where the branches of an `if` on a DataNode meet (enable_conditionals)."))


class ValidateLogical(Operator):
    """Passes its input through after checking it can be an operand of `and`, `or` or `not` on
    DataNodes: one scalar (0-d) per sample, and of type bool for `and` and `or` (`not` takes any
    type: nonzero is true)."""
    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        (data,) = inputs
        expr, side = self.args.get("expression_name", ""), self.args.get("expression_side", "")
        what = f"the {side} operand of `{expr}`" if side else f"the operand of `{expr}`"
        for i, x in enumerate(data.samples):
            if x.dim() != 0:
                raise ArgumentError(f"{self.name}: {what} on DataNodes must be one scalar (0-d) per sample; "
                                    f"sample {i} is {x.dim()}-d, shape {list(x.shape)}")
            if expr != "not" and x.dtype != torch.bool:
                raise ArgumentTypeError(f"{self.name}: {what} on DataNodes must be of type bool, got "
                                        f"{str(x.dtype).replace('torch.', '')} (sample {i}); compare it "
                                        "(`x != 0`) or cast it to bool")
        return [data]

    def output_layout(self, index: int) -> str | None:
        return None


register(OpSchema(
    name="_conditional.validate_logical", impl=ValidateLogical, devices=("cpu",),
    class_name_override="ValidateLogical",
    args=(Arg("expression_name", "str", "", "the logical expression checked: `and`, `or` or `not`"),
          Arg("expression_side", "str", "", "which operand: `left`, `right`, or empty for `not`")),
    doc="Its input, after checking that it can be an operand of `and`, `or` or `not` on DataNodes "
        "(enable_conditionals): a CPU scalar per sample, of type bool for `and` and `or`."))


class Not(Operator):
    """DALI's `_conditional.not_`: per sample, the logical negation of a CPU scalar (0-d) of any
    type (nonzero is true), as a bool."""
    sample_wise = False

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        (data,) = inputs
        out = []
        for i, x in enumerate(data.samples):
            if x.dim() != 0:
                raise ArgumentError(f"{self.name}: the operand of `not` on DataNodes must be one scalar (0-d) per "
                                    f"sample; sample {i} is {x.dim()}-d, shape {list(x.shape)}. For other "
                                    "shapes, compare elementwise (`x == 0`)")
            out.append(torch.logical_not(x))
        return [TensorList(out, "")]

    def output_layout(self, index: int) -> str | None:
        return ""


register(OpSchema(
    name="_conditional.not_", impl=Not, devices=("cpu",), class_name_override="Not_",
    doc="Per sample, `not` of a CPU scalar of any type (nonzero is true), as a bool: what `not` on a "
        "DataNode makes under enable_conditionals."))
