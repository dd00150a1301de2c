"""normalize (DALI's fn.normalize) and lookup_table: tensor-wide ops on any layout (CPU or CUDA).

normalize reduces over `axes` (or the layout's `axis_names`; default every axis) per sample, or
over the whole batch with `batch=True`; a dense batch is reduced in one call. `mean`/`stddev` may
be scalars or per-sample tensors of the input's rank (extent 1 on reduced axes); without `axes`
the reduced axes are read from their shape, as DALI does.
"""
from __future__ import annotations

from typing import Any

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..functional import lookup as LK
from ..functional import normalization as K
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from ._registry import register
from ._schema import Arg, OpSchema, non_negative
from .layout_op import Args, LayoutOp


def _tensor(v: Any) -> torch.Tensor:
    return v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=torch.float64)


class Normalize(Operator):
    sample_wise = False

    def setup(self) -> None:
        if self.args.get("axes") is not None and self.args.get("axis_names") is not None:
            raise ArgumentError(f"{self.name}: give `axes` or `axis_names`, not both")
        self.dtype = types.to_torch_dtype(self.args["dtype"])
        if self.dtype == torch.bool:
            raise ArgumentError(f"{self.name}: `dtype` cannot be BOOL")
        self.batch = bool(self.args["batch"])
        if self.batch and ("mean" in self.node.arg_inputs or "stddev" in self.node.arg_inputs):
            raise ArgumentError(f"{self.name}: `mean` and `stddev` must be scalars when `batch` is True")

    def reduced_axes(self, layout: str, ndim: int, params: list[torch.Tensor]) -> list[int]:
        axes, names = self.args.get("axes"), self.args.get("axis_names")
        if names is not None:
            out = []
            for c in names:
                if c not in layout:
                    raise ArgumentError(f'{self.name}: axis "{c}" of `axis_names` is not in the layout "{layout}"')
                out.append(layout.index(c))
            return sorted(out)
        if axes is not None:
            vals = [axes] if isinstance(axes, int) else list(axes)
            out = []
            for a in vals:
                if not 0 <= a < ndim:
                    raise ArgumentError(f"{self.name}: axis index {a} is out of valid range 0..{ndim - 1}")
                out.append(a)
            return sorted(set(out))
        shaped = [p for p in params if p.dim() > 0 and p.numel() > 1]
        if shaped:
            return [a for a in range(ndim) if int(shaped[0].shape[a]) == 1]
        return list(range(ndim))

    def param(self, args: dict[str, list[Any]], name: str, i: int, ndim: int) -> torch.Tensor | None:
        if name in args:
            t = _tensor(args[name][i])
            if t.numel() > 1 and t.dim() != ndim:
                raise ArgumentError(f"{self.name}: `{name}` for sample {i} must be a scalar or have {ndim} "
                                    f"dimensions, got shape {tuple(t.shape)}")
            return t
        v = self.args.get(name)
        return None if v is None else torch.tensor(float(v), dtype=torch.float64)

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        tl = inputs[0]
        n = len(tl)
        if n == 0:
            return [TensorList([], tl.layout())]
        samples = tl.samples
        ndim = int(samples[0].dim())
        if any(int(s.dim()) != ndim for s in samples):
            raise ArgumentError(f"{self.name}: the samples must have the same number of dimensions")
        if not samples[0].dtype.is_floating_point and samples[0].dtype not in (
                torch.uint8, torch.int8, torch.uint16, torch.int16, torch.uint32, torch.int32, torch.int64):
            raise ArgumentTypeError(f"{self.name}: unsupported input type {samples[0].dtype}")
        means = [self.param(args, "mean", i, ndim) for i in range(n)]
        stds = [self.param(args, "stddev", i, ndim) for i in range(n)]
        axes = self.reduced_axes(tl.layout(), ndim, [p for p in means + stds if p is not None])
        if self.batch:
            return [TensorList(self.whole_batch(tl, samples, axes, means[0], stds[0]), tl.layout())]
        if tl.is_dense_tensor() and "mean" not in args and "stddev" not in args:
            x = tl.as_tensor()
            return [TensorList(self.normalize(x, [a + 1 for a in axes], means[0], stds[0]), tl.layout())]
        run = lambda i: self.normalize(samples[i].unsqueeze(0), [a + 1 for a in axes],  # noqa: E731
                                       self.check_shape(means[i], samples[i], axes, "mean"),
                                       self.check_shape(stds[i], samples[i], axes, "stddev"))[0]
        return [TensorList(ctx.map(run, n), tl.layout())]

    def check_shape(self, p: torch.Tensor | None, x: torch.Tensor, axes: list[int], name: str) -> torch.Tensor | None:
        if p is None or p.numel() == 1:
            return None if p is None else p.reshape(())
        for a in range(x.dim()):
            want = 1 if a in axes else int(x.shape[a])
            if int(p.shape[a]) != want:
                raise ArgumentError(f"{self.name}: `{name}` has shape {tuple(p.shape)}; for an input of shape "
                                    f"{tuple(x.shape)} reduced over axes {axes} it must be extent 1 on reduced "
                                    f"axes and match the others")
        return p.unsqueeze(0)

    def normalize(self, x: torch.Tensor, red: list[int], mean: torch.Tensor | None,
                  std: torch.Tensor | None) -> torch.Tensor:
        """A batch `x` (leading sample axis), statistics reduced over `red` per sample."""
        eps, ddof = float(self.args["epsilon"]), int(self.args["ddof"])
        x64 = x.to(K.F64)
        count = 1
        for a in red:
            count *= int(x.shape[a])
        if mean is None:  # a 0-d sample (nothing to reduce) is its own mean, as a one-element sample
            mean = x64 if not red else x64.mean(dim=red, keepdim=True) if count else torch.zeros((), dtype=K.F64)
        mean = mean.to(x.device, K.F64)
        if std is None:
            d = x64 - mean
            d.mul_(d)  # (x - mean) ** 2 (torch's pow of 2 is this product) without another tensor
            ssq = d.sum(dim=red, keepdim=True) if red else d
            std = K.stddev_from(ssq, count, ddof, eps)
        elif eps:
            std = torch.sqrt(std.to(K.F64) ** 2 + eps)
        return K.apply(x, mean, std, float(self.args["scale"]), float(self.args["shift"]), self.dtype)

    def whole_batch(self, tl: TensorList, samples: list[torch.Tensor], axes: list[int],
                    mean: torch.Tensor | None, std: torch.Tensor | None) -> Any:
        kept = [tuple(int(s.shape[a]) for a in range(s.dim()) if a not in axes) for s in samples]
        if len(set(kept)) > 1:
            raise ArgumentError(f"{self.name}: with `batch=True` the samples must match in the non-reduced axes, "
                                f"got shapes {[tuple(s.shape) for s in samples][:4]}")
        eps, ddof = float(self.args["epsilon"]), int(self.args["ddof"])
        if mean is None:
            total, count = K.reduce_sums(samples, axes)
            mean = total / count if count else torch.zeros_like(total)
        if std is None:
            ssq, count = K.reduce_sums(samples, axes, mean)
            std = K.stddev_from(ssq, count, ddof, eps)
        elif eps:
            std = torch.sqrt(std.to(K.F64) ** 2 + eps)
        scale, shift = float(self.args["scale"]), float(self.args["shift"])
        if tl.is_dense_tensor():
            return K.apply(tl.as_tensor(), mean.unsqueeze(0) if mean.dim() else mean,
                           std.unsqueeze(0) if std.dim() else std, scale, shift, self.dtype)
        return [K.apply(s, mean, std, scale, shift, self.dtype) for s in samples]


# -- lookup_table ---------------------------------------------------------------------------------

LUT_IN_TYPES = (torch.uint8, torch.int8, torch.uint16, torch.int16, torch.uint32, torch.int32,
                torch.uint64, torch.int64)


class LookupTable(LayoutOp):
    def setup(self) -> None:
        keys, values = list(self.args["keys"] or []), list(self.args["values"] or [])
        if len(keys) != len(values):
            raise ArgumentError(f"{self.name}: `keys` and `values` must have the same length, got "
                                f"{len(keys)} and {len(values)}")
        if keys and (min(keys) < 0 or max(keys) > LK.MAX_KEY):
            raise ArgumentError(f"{self.name}: `keys` should be in the range [0, {LK.MAX_KEY}]")
        dtype = types.to_torch_dtype(self.args["dtype"])
        self.table, self.default = LK.make_table(keys, values, float(self.args["default_value"]), dtype)

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        return self.run_one(0, seed, iteration, x, layout, {})

    def run_one(self, index: int, seed: int, iteration: int, x: torch.Tensor, layout: str,
                args: Args) -> torch.Tensor:
        if x.dtype not in LUT_IN_TYPES:
            raise ArgumentTypeError(f"{self.name}: unsupported input type {x.dtype}; the input must be integers")
        return LK.lookup(x, self.table, self.default)


register(OpSchema(
    name="normalize", impl=Normalize,
    doc="scale * (in - mean) / stddev + shift, with mean/stddev computed over `axes` (per sample, or over "
        "the batch with `batch=True`) unless given.",
    args=(Arg("axes", "ints", None, "axes to reduce (default: all)"),
          Arg("axis_names", "layout", None, "axes to reduce, by their names in the layout"),
          Arg("batch", "bool", False, "compute the statistics over the whole batch"),
          Arg("mean", "floats", None, "mean to subtract (scalar, or a per-sample tensor)", tensor=True),
          Arg("stddev", "floats", None, "standard deviation to divide by (scalar or per-sample tensor)",
              tensor=True),
          Arg("ddof", "int", 0, "delta degrees of freedom of the computed variance", check=non_negative),
          Arg("epsilon", "float", 0.0, "added to the variance", check=non_negative),
          Arg("scale", "float", 1.0, "multiplies the normalized value"),
          Arg("shift", "float", 0.0, "added last"),
          Arg("dtype", "dtype", types.FLOAT, "output type (integers are rounded and saturated)")),
))
register(OpSchema(
    name="lookup_table", impl=LookupTable,
    doc="Maps integer inputs through a table made of `keys` and `values` (the last value of a repeated key "
        "wins); inputs outside the table give `default_value`.",
    args=(Arg("keys", "int_list", (), "input values (0..65535) with a table entry"),
          Arg("values", "float_list", (), "the output value of each key"),
          Arg("default_value", "float", 0.0, "output for inputs without an entry"),
          Arg("dtype", "dtype", types.FLOAT, "output type", aliases=("output_dtype",))),
))
