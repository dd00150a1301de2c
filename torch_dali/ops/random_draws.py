"""random.beta and random.choice, drawn with each sample's keyed generator (pipeline seed, op seed,
iteration, sample), so the same seed gives the same values whatever the threads. DALI's generator
is not reproduced: the values follow the same distributions, and tests compare them with DALI's in
distribution.

The output shape: `shape`, else the shape of the optional `shape_like` input, else a scalar;
random.choice appends the shape of one element of `a` (its outer dimension indexes the choices).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional import random_draws as K
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator, SampleContext, scalar_arg
from .external_source_checks import dali_type_name
from .enum_data import enum_type_of
from ._registry import register
from ._schema import Arg, OpSchema, non_negative
from .random import random_state_arg

_F32_MAX = float(np.finfo(np.float32).max)
# the types a scalar `a` (a count) may have
_INT_TYPES = "uint8, uint16, uint32, uint64, int8, int16, int32, int64"


def _shape(op: str, v: Any) -> list[int]:
    dims = [v] if isinstance(v, (int, float)) else list(v)
    if not all(float(d).is_integer() and d >= 0 for d in dims):
        raise ArgumentError(f"{op}: `shape` must be non-negative integers, got {v!r}")
    return [int(d) for d in dims]


class _Draws(Operator):
    """What beta and choice share: a per-sample op whose output shape may come from an input."""

    shape_input = 0  # index of the shape_like input

    def get(self, args: dict[str, Any], name: str) -> Any:
        return args[name] if name in args else self.args.get(name)

    def out_shape(self, inputs: list[torch.Tensor], args: dict[str, Any]) -> list[int] | None:
        s = self.get(args, "shape")
        if s is not None:
            return _shape(self.name, s)
        if len(inputs) > self.shape_input:
            return list(inputs[self.shape_input].shape)
        return None


class Beta(_Draws):
    def setup(self) -> None:
        self.dtype = types.to_torch_dtype(self.args["dtype"]) if self.args.get("dtype") is not None else torch.float32
        if self.dtype not in (torch.float32, torch.float64):
            raise ArgumentTypeError(f"{self.name}: `dtype` must be FLOAT or FLOAT64 (float or double), got "
                                    f"{dali_type_name(self.dtype)} ({self.args['dtype']!r})")

    def output_layout(self, index: int) -> str:
        return ""

    def param(self, args: dict[str, Any], name: str, index: int) -> float:
        raw = scalar_arg(self.name, name, self.get(args, name))
        v = float(raw)
        if not 0.0 < v <= _F32_MAX:
            # read as a float32 (1e100 becomes inf), as DALI reads it
            big = math.isfinite(v) and abs(v) > _F32_MAX
            f32 = math.copysign(math.inf, v) if big else v
            given = f" (given {v!r})" if big else ""
            raise ArgumentError(f"{self.name}: `{name}` is {f32:g} for sample {index}{given}; it must be a "
                                "positive float32")
        return v

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        ctx = ctx.keyed(self.get(args, "_random_state"))
        a, b = self.param(args, "alpha", ctx.index), self.param(args, "beta", ctx.index)
        shape = self.out_shape(inputs, args)
        out = K.beta(a, b, shape or [], ctx.rng.generator("cpu"), self.dtype)
        return out.to(self.device)


class Choice(_Draws):
    shape_input = 1
    sample_wise = False

    def setup(self) -> None:
        super().setup()
        # picks among enum values keep their enum type (enum_data); one enum value is not a count
        self.enum_a = enum_type_of(self.node.inputs[0]) if self.node.inputs else None

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        ctx = ctx.keyed(self.get(args, "_random_state"))
        a = inputs[0]
        i = ctx.index
        if a.dim() == 0:
            if self.enum_a is not None or a.dtype.is_floating_point or a.dtype == torch.bool or a.dtype.is_complex:
                # named by the enum's type (DALIInterpType) or the element type (float)
                what = (types.ENUM_ELEMENT_TYPES[self.enum_a].__name__ if self.enum_a is not None
                        else dali_type_name(a.dtype))
                raise ArgumentTypeError(f"{self.name}: a scalar `a` is the number of choices and must be an integer "
                                        f"({_INT_TYPES}), got {what}")
            n = int(a)
            elems = None
        else:
            n = int(a.shape[0])
            elems = a
        if n <= 0:
            raise ArgumentError(f"{self.name}: expected a positive number of elements to choose from, got {n} for "
                                f"sample {i} (`a` gives the elements, or their number)")
        probs = self.probabilities(self.get(args, "p"), n, i)
        shape = self.out_shape(inputs, args)
        count = math.prod(shape) if shape is not None else 1
        idx = K.choice_indices(count, n, probs, ctx.rng.generator("cpu")).to(a.device)
        shape = shape or []
        if elems is None:
            return idx.to(a.dtype).reshape(shape)
        return elems[idx].reshape(shape + list(elems.shape[1:]))

    def probabilities(self, p: Any, n: int, i: int) -> torch.Tensor | None:
        if p is None:
            return None
        if isinstance(p, (int, float)):  # one probability for every element, as DALI broadcasts it
            vals = [float(p)] * n
        elif all(isinstance(v, (int, float)) for v in p):
            vals = [float(v) for v in p]
        else:
            raise ArgumentError(f"{self.name}: `p` must be a 1-D list of probabilities, got {p!r} (sample {i})")
        if len(vals) != n:
            raise ArgumentError(f"{self.name}: `p` has {len(vals)} probabilities, `a` has {n} elements (sample {i})")
        for k, v in enumerate(vals):
            if not 0.0 <= v <= 1.0:
                raise ArgumentError(f"{self.name}: probabilities must be in [0, 1], got {v:g} for sample {i} at "
                                    f"index {k}")
        total = sum(vals)
        if abs(total - 1.0) >= 1e-4:
            raise ArgumentError(f"{self.name}: the probabilities `p` of sample {i} sum to {total:g}, not 1.0")
        return torch.tensor(vals, dtype=torch.float64)

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        """Per sample on the pool's threads; a batch op because the layout depends on the batch's."""
        samples = ctx.map(lambda i: self.run_sample(ctx.sample(i), [x[i] for x in inputs],
                                                    {k: v[i] for k, v in args.items()}), len(inputs[0]))
        out = TensorList(samples)
        return [TensorList(samples, self._layout(inputs[0].layout(), out))]

    def _layout(self, layout: str, out: TensorList) -> str:
        """The input's layout when the output has as many dimensions; one element's when it has one
        fewer (a single choice); none otherwise."""
        if not layout or not len(out):
            return ""
        nd = out[0].dim()
        return layout if nd == len(layout) else layout[1:] if nd == len(layout) - 1 else ""

    def output_layout(self, index: int) -> str | None:
        return ""

    def layout_known(self, index: int) -> bool:
        return False


def _shape_arg() -> Arg:
    return Arg("shape", "ints", None, "shape of each sample's draws (default: that of `shape_like`, or a scalar)",
               tensor=True, check=non_negative)


register(OpSchema(
    name="random.beta", impl=Beta, devices=("cpu",), min_inputs=0, max_inputs=1, random=True, input_kinds=("any",),
    doc="Beta-distributed numbers in [0, 1]. An optional input (shape_like) gives the output shape.",
    args=(Arg("alpha", "float", 1.0, "the alpha parameter (a positive float32)", tensor=True),
          Arg("beta", "float", 1.0, "the beta parameter (a positive float32)", tensor=True),
          _shape_arg(),
          Arg("dtype", "dtype", None, "FLOAT (default) or FLOAT64"),
          random_state_arg()),
))
register(OpSchema(
    name="random.choice", impl=Choice, devices=("cpu",), min_inputs=1, max_inputs=2, random=True,
    input_kinds=("", "any"),
    doc="Random picks among the elements of `a` (its outer dimension), or of range(a) for a scalar "
        "integer `a`, with probabilities `p`. An optional second input (shape_like) gives the output shape.",
    args=(Arg("p", "floats", None, "probability of each element, or one for all (default: uniform)",
              tensor=True),
          _shape_arg(),
          random_state_arg()),
))
