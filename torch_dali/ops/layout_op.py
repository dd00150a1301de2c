"""A base for ops that need their input's layout (filters, color, noise): they run per batch, so
they see the batch's layout, and they run as one batched torch call over a dense batch.

DALI's rule for an input without a layout: the first layout the op lists with as many dimensions
as the sample has (so contrast reads a 4-D sample as FHWC); that layout is then the output's.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from ..errors import ArgumentError
from ..tensor_list import TensorList
from . import batching
from ._operator import BatchContext, Operator
from .layouts import refuse_input

Args = dict[str, Any]


def resolve_layout(op: str, layout: str, ndim: int, allowed: Sequence[str]) -> str:
    """`layout`, checked against `allowed`; an empty layout becomes the first allowed one of `ndim`
    dimensions, as in DALI."""
    if not layout:
        for cand in allowed:
            if len(cand) == ndim:
                return cand
        raise ArgumentError(f"{op}: the number of dimensions {ndim} does not match any of the allowed "
                            f"layouts: {', '.join(allowed)}")
    if layout not in allowed:
        raise ArgumentError(f'{op}: the layout "{layout}" does not match any of the allowed layouts: '
                            f"{', '.join(allowed)}")
    if len(layout) != ndim:
        raise ArgumentError(f'{op}: the layout "{layout}" has {len(layout)} dimensions but the sample has {ndim}')
    return layout


def scalar(op: str, name: str, v: Any) -> float:
    """A per-sample scalar argument (a 0-d or 1-element value) as a float."""
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise ArgumentError(f"{op}: `{name}` must be a scalar per sample, got {v!r}")
        v = v[0]
    return float(v)


class LayoutOp(Operator):
    """Runs per batch. `layouts` lists what DALI accepts (None: the op reads the layout itself, in
    `check_layout`). Subclasses write `run_one` (one sample) and, where it pays, `run_dense` (the
    whole batch as one tensor with a leading sample axis) and `run_ragged` (a batch of
    variable-size samples in one call, where `batching.batched` says so: on CUDA)."""

    sample_wise = False
    strided_input_ok = True
    layouts: tuple[str, ...] | None = None

    def get(self, args: Args, name: str) -> Any:
        return args[name] if name in args else self.args[name]

    def check_layout(self, layout: str, ndim: int) -> str:
        if self.layouts is None:
            return layout
        try:
            return resolve_layout(self.name, layout, ndim, self.layouts)
        except ArgumentError as e:
            raise refuse_input(self.node, e) from None

    def out_layout(self, layout: str) -> str:
        return layout

    def dense_ok(self, args: dict[str, list[Any]], x: torch.Tensor, layout: str) -> bool:
        """Whether `run_dense` handles this batch; by default when it has one."""
        return type(self).run_dense is not LayoutOp.run_dense

    def run_one(self, index: int, seed: int, iteration: int, x: torch.Tensor, layout: str,
                args: Args) -> torch.Tensor:
        raise NotImplementedError

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        """The whole batch (`x` has a leading sample axis; `args` hold one value per sample)."""
        raise NotImplementedError

    def run_ragged(self, samples: list[torch.Tensor], layout: str, args: dict[str, list[Any]], seed: int,
                   iteration: int) -> list[torch.Tensor] | None:
        """The samples' outputs computed together, with the values `run_one` gives each; None
        where this op (or this batch) has no such path: then each sample runs alone."""
        return None

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        n = len(tl)
        if n == 0:
            return [TensorList([], tl.layout())]
        seed, it = self.node.seed, ctx.iteration
        if tl.is_dense_tensor():
            x = tl.as_tensor()
            layout = self.check_layout(tl.layout(), int(x.dim()) - 1)
            if self.dense_ok(args, x, layout):
                return [TensorList(self.run_dense(x, layout, args, seed, it), self.out_layout(layout))]
        else:
            ndims = {int(t.dim()) for t in tl.samples}
            if len(ndims) != 1:
                raise ArgumentError(f"{self.name}: the samples of a batch must have the same number of "
                                    f"dimensions, got {sorted(ndims)}")
            layout = self.check_layout(tl.layout(), ndims.pop())
        if batching.batched(self, tl):
            outs = self.run_ragged(tl.samples, layout, args, seed, it)
            if outs is not None:
                return [TensorList(outs, self.out_layout(layout))]
        run: Callable[[int], torch.Tensor] = lambda i: self.run_one(
            i, seed, it, tl[i], layout, {k: v[i] for k, v in args.items()})
        return [TensorList(ctx.map(run, n), self.out_layout(layout))]

    def output_layout(self, index: int) -> str | None:
        return None


def per_sample(values: list[Any] | None, n: int, const: Any) -> list[Any]:
    """One value per sample: the per-sample input's, or the constant repeated."""
    return list(values) if values is not None else [const] * n


def uniform(values: list[Any]) -> bool:
    """Whether every sample has the same value (then one batched call can take them all)."""
    first = values[0]
    return all(v == first for v in values[1:])
