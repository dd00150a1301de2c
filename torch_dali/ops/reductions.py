"""reductions.sum/min/max/mean/mean_square/rms/std_dev/variance over `axes` or `axis_names`, with
`keep_dims`, `dtype` (what the mean family and sum accumulate in) and, for std_dev/variance, the
mean as a second input (a batch of means shaped as the result, or a scalar) and `ddof`.

Batch ops: the output layout drops the reduced axes' names (kept with keep_dims), read from each
batch's layout; a dense batch is reduced in one torch call (the std_dev/variance means too)."""
from __future__ import annotations

import math
from typing import Any

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional import reductions as K
from ..functional.reduce_order import dali_sum
from ._dispatch import call
from ..functional.tensor_axes import reduced_axes
from ..tensor_list import TensorList
from ._operator import BatchContext
from ._registry import register
from ._schema import Arg, OpSchema
from .tensor_axes import BatchShapeOp


#: below this many values a batch of equal shapes is stacked and reduced in one call: its per-sample
#: calls cost more in the pool's hand-offs than the copy (48x48x3 float32 x 32: 3.1 -> 0.4 ms)
_STACK_MAX = 1 << 20


def _dense(tl: TensorList) -> torch.Tensor | None:
    """The batch as one tensor: its own dense one, or the samples stacked when they are small and
    of one shape and type (the sums per output position are the same either way)."""
    if tl.dense is not None or len(tl) < 2:
        return tl.dense
    xs = tl.samples
    first = xs[0]
    if first.numel() * len(xs) > _STACK_MAX or first.device.type != "cpu" or \
            any(x.shape != first.shape or x.dtype != first.dtype for x in xs):
        return None
    return torch.stack(xs)


def _sum(v: torch.Tensor, axes: Any) -> torch.Tensor:
    """`dali_sum`, by its registered stand-in where one takes the call (ops/fast/cpu_reduce.py)."""
    return call(dali_sum, v, axes)


class Reduction(BatchShapeOp):
    """One of the plain reductions; `kind` is the schema's last name part."""

    def setup(self) -> None:
        self.kind = self.node.schema.name.split(".")[-1]
        if self.args.get("axes") is not None and self.args.get("axis_names") is not None:
            raise ArgumentError(f"{self.name}: `axes` and `axis_names` are mutually exclusive; give one")
        dt = self.args.get("dtype")
        self.dtype = None if dt is None else types.to_torch_dtype(dt)
        if self.dtype is not None and not (self.dtype.is_floating_point or K.is_int(self.dtype)):
            raise ArgumentTypeError(f"{self.name}: `dtype` must be an integer or floating type, got {dt!r}")

    def check_input(self, tl: TensorList) -> tuple[torch.dtype, int, list[int], str]:
        """The input type, the samples' number of dimensions, the reduced axes and the output layout."""
        ndim = self.sample_ndim(tl)
        dt = tl.dense.dtype if tl.dense is not None else (tl[0].dtype if len(tl) else torch.float32)
        if not (dt.is_floating_point or K.is_int(dt)):
            raise ArgumentTypeError(f"{self.name}: unsupported input type {dt}; give integers or floats")
        layout = tl.layout()
        axes = reduced_axes(self.name, self.args.get("axes"), self.args.get("axis_names"), layout, ndim)
        keep = bool(self.args["keep_dims"])
        out_layout = layout if keep or not layout else "".join(a for k, a in enumerate(layout) if k not in axes)
        return dt, ndim, axes, out_layout

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        dt, ndim, axes, out_layout = self.check_input(tl)
        out_dt = self.dtype or K.default_dtype(self.kind, dt)
        keep = bool(self.args["keep_dims"])
        x = _dense(tl)
        if x is not None and len(tl):
            return [TensorList(K.reduce(x, self.kind, [a + 1 for a in axes], keep, out_dt, _sum), out_layout)]
        return [TensorList(ctx.map(lambda i: K.reduce(tl[i], self.kind, axes, keep, out_dt, _sum), len(tl)), out_layout)]


class Deviation(Reduction):
    """std_dev and variance around the mean given as the second input."""

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl, means = inputs
        dt, ndim, axes, out_layout = self.check_input(tl)
        if len(means) != len(tl):
            raise ArgumentError(f"{self.name}: {len(means)} means for a batch of {len(tl)} samples")
        out_dt = torch.float64 if dt == torch.float64 else torch.float32
        keep, ddof, std = bool(self.args["keep_dims"]), int(self.args["ddof"]), self.kind == "std_dev"
        x, m = _dense(tl), _dense(means)
        if x is not None and m is not None and len(tl):
            n = int(m.shape[0])
            per = m[0].numel() if n else 1
            kept = K.result_shape(x.shape[1:], axes, True)
            shaped = m.reshape([n] + [1] * ndim) if per == 1 else (
                m.reshape([n, *kept]) if per * n == m.numel() and per == math.prod(kept) else None)
            if shaped is not None:
                return [TensorList(K.variance(x, shaped, [a + 1 for a in axes], keep, ddof, out_dt, std, _sum),
                                   out_layout)]

        def one(i: int) -> torch.Tensor:
            x = tl[i]
            m = K.broadcast_mean(means[i], x.shape, axes)
            if m is None:
                raise ArgumentError(f"{self.name}: the mean of sample {i} has {means[i].numel()} elements; it must "
                                    f"have one, or one per result element "
                                    f"({K.result_shape(x.shape, axes, keep_dims=False)})")
            return K.variance(x, m, axes, keep, ddof, out_dt, std, _sum)
        return [TensorList(ctx.map(one, len(tl)), out_layout)]


def _args(dtype: bool, ddof: bool = False) -> tuple[Arg, ...]:
    out = [Arg("axes", "ints", None, "the axes to reduce (negative: from the back); default: all"),
           Arg("axis_names", "layout", None, "the axes to reduce, by layout name"),
           Arg("keep_dims", "bool", False, "keep the reduced axes with extent 1")]
    if dtype:
        out.append(Arg("dtype", "dtype", None, "the output type, which the result accumulates in (default: "
                       "64-bit integers for sums of integers, float for the means, else the input's)"))
    if ddof:
        out.append(Arg("ddof", "int", 0, "delta degrees of freedom: the divisor is N - ddof"))
    return tuple(out)


_DOCS = {"min": "Minimum", "max": "Maximum", "sum": "Sum", "mean": "Mean", "mean_square": "Mean of the squares",
         "rms": "Root of the mean of the squares", "std_dev": "Standard deviation (around the mean given as the "
         "second input)", "variance": "Variance (around the mean given as the second input)"}
_CLASS = {"rms": "RMS"}
for _kind, _doc in _DOCS.items():
    _two = _kind in ("std_dev", "variance")
    register(OpSchema(
        name=f"reductions.{_kind}", impl=Deviation if _two else Reduction, min_inputs=2 if _two else 1,
        max_inputs=2 if _two else 1, class_name_override=_CLASS.get(_kind, ""),
        doc=f"{_doc} of the elements along the given axes.",
        args=_args(dtype=_kind in ("sum", "mean", "mean_square", "rms"), ddof=_two),
    ))
