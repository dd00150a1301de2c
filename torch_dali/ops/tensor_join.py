"""cat and stack: join the i-th samples of several inputs along an existing axis (cat) or a new one
(stack). Dense batches are joined in one torch call over the whole batch."""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentError
from ..functional import tensor_axes as K
from ..tensor_list import TensorList
from ._operator import BatchContext
from ._registry import register
from ._schema import Arg, OpSchema
from .tensor_axes import BatchShapeOp


class JoinOp(BatchShapeOp):
    """What cat and stack share: argument checks, the batch checks and the joined layout."""

    def setup(self) -> None:
        name = self.args.get("axis_name")
        if name is not None and len(name) != 1:
            raise ArgumentError(f"{self.name}: `axis_name` must be a single character, got {name!r}")

    def check_batch(self, inputs: list[TensorList]) -> tuple[int, str]:
        """The samples' number of dimensions, and the layout of the first input."""
        sizes = {len(t) for t in inputs}
        if len(sizes) > 1:
            raise ArgumentError(f"{self.name}: the inputs have different batch sizes {sorted(sizes)}")
        ndims = {self.sample_ndim(t) for t in inputs}
        dtypes = {t.dense.dtype if t.dense is not None else t[0].dtype for t in inputs if len(t)}
        if len(ndims) > 1 or len(dtypes) > 1:
            raise ArgumentError(f"{self.name}: all inputs must have the same type and number of dimensions; got "
                                f"{sorted(ndims)} dimensions and types {sorted(map(str, dtypes))}")
        return ndims.pop(), inputs[0].layout()  # DALI reads the first input's layout only

    def join(self, ctx: BatchContext, inputs: list[TensorList], axis: int, layout: str) -> list[TensorList]:
        """Sample i of the output: sample i of every input joined at `axis` (per the subclass)."""
        n = len(inputs[0])
        if n and all(t.dense is not None for t in inputs):
            samples = [t.dense[0] for t in inputs]
            self.check(samples, axis)
            return [TensorList(self.combine([t.dense for t in inputs], axis + 1), layout)]

        def one(i: int) -> torch.Tensor:
            parts = [t[i] for t in inputs]
            self.check(parts, axis)
            return self.combine(parts, axis)
        return [TensorList(ctx.map(one, n), layout)]

    def check(self, parts: list[torch.Tensor], axis: int) -> None:
        raise NotImplementedError

    def combine(self, parts: list[torch.Tensor], axis: int) -> torch.Tensor:
        raise NotImplementedError


class Cat(JoinOp):
    """Joins along an existing axis; the shapes may differ only along it (empty inputs left out)."""

    def setup(self) -> None:
        super().setup()
        if self.args.get("axis_name") is not None and self.args.get("axis") is not None:
            raise ArgumentError(f"{self.name}: `axis` and `axis_name` cannot be used together")

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        ndim, layout = self.check_batch(inputs)
        name = self.args.get("axis_name")
        if name is not None:
            if name not in layout:
                raise ArgumentError(f'{self.name}: `axis_name` names an axis \'{name}\' the layout "{layout}" does '
                                    "not have")
            axis = layout.index(name)
        else:
            if ndim == 0:
                raise ArgumentError(f"{self.name}: 0-dimensional samples have no axis to concatenate along")
            axis = K.wrap_axis(self.name, int(self.args.get("axis") or 0), ndim)
        return self.join(ctx, _with_elements(inputs), axis, layout)

    def check(self, parts: list[torch.Tensor], axis: int) -> None:
        K.check_joinable(self.name, parts, axis)

    def combine(self, parts: list[torch.Tensor], axis: int) -> torch.Tensor:
        return torch.cat(parts, dim=axis)


def _with_elements(inputs: list[TensorList]) -> list[TensorList]:
    """The inputs cat joins: as DALI 2.4, an input whose whole batch holds no element is left out,
    shapes and all (cat of (0, 5) and (2, 3) is (2, 3)); when every input is, the first is the
    output ((2, 0) and (3, 0) give (2, 0)). An empty sample of an input with elements elsewhere
    is joined as any other ((2, 0) and (1, 0) give (3, 0))."""
    kept = [t for t in inputs if (t.dense.numel() if t.dense is not None else any(x.numel() for x in t))]
    return kept or inputs[:1]


class Stack(JoinOp):
    """Joins along a new axis inserted at `axis` (ndim: the inputs' values interleaved)."""

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        ndim, layout = self.check_batch(inputs)
        axis = int(self.args.get("axis") or 0)
        if not -ndim <= axis <= ndim:
            raise ArgumentError(f"{self.name}: axis {axis} is out of range for {ndim}-dimensional inputs "
                                f"(accepted: [{-ndim}, {ndim}])")
        axis = axis + ndim + 1 if axis < 0 else axis
        name = self.args.get("axis_name")
        if name is None:
            out_layout = ""
        elif ndim == 0:
            out_layout = name
        elif not layout:
            raise ArgumentError(f"{self.name}: naming the new axis (`axis_name`) of non-scalar inputs needs an "
                                "input with a layout")
        else:
            out_layout = layout[:axis] + name + layout[axis:]
        return self.join(ctx, inputs, axis, out_layout)

    def check(self, parts: list[torch.Tensor], axis: int) -> None:
        K.check_joinable(self.name, parts, None)

    def combine(self, parts: list[torch.Tensor], axis: int) -> torch.Tensor:
        return torch.stack(parts, dim=axis)


_JOIN = dict(min_inputs=1, max_inputs=999)
register(OpSchema(
    name="cat", impl=Cat, **_JOIN,
    doc="Concatenates the inputs' samples along an existing axis (the shapes may differ only along it).",
    args=(Arg("axis", "int", None, "the axis to join along (negative: from the back); default 0"),
          Arg("axis_name", "str", None, "the axis to join along, by layout name")),
))
register(OpSchema(
    name="stack", impl=Stack, **_JOIN,
    doc="Stacks the inputs' samples (of equal shapes) along a new axis.",
    args=(Arg("axis", "int", None, "where the new axis goes, in [-ndim, ndim] (negative: from the back); "
              "default 0"),
          Arg("axis_name", "str", None, "the layout name of the new axis")),
))
