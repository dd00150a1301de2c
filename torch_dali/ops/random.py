"""Random number ops: random.uniform, random.coin_flip, random.normal.

Each sample's draws come from the counter-based SampleRNG (pipeline seed, op seed, iteration,
sample), so outputs never depend on thread count. Without `shape` (and without an input) a sample
is a 0-d tensor, as in DALI; with an input, the output takes that input's shape.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ..rng import first_uniforms
from ..functional.crop import convert, round_half_away
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator, SampleContext, scalar_arg
from ._registry import register
from ._schema import Arg, OpSchema, length, non_negative, unit_interval


class _RandomOp(Operator):
    def setup(self) -> None:
        self.dtype = types.to_torch_dtype(self.args["dtype"])
        shape = self.args.get("shape")
        if shape is not None:
            self._check_shape(shape)

        # One scalar per sample, no inputs, no per-sample arguments: all samples in one vectorised
        # draw (the same values as the per-sample path), not a Python RNG and a tensor per sample.
        self.vectorised = (self.device.type == "cpu" and not self.node.inputs and not self.node.arg_inputs
                           and shape is None and self.args.get("values") is None
                           and self.args.get("_random_state") is None
                           and type(self).draw_batch is not _RandomOp.draw_batch)
        if self.vectorised:
            self.sample_wise = False

    def get(self, args: dict[str, Any], name: str) -> Any:
        return args[name] if name in args else self.args[name]

    def output_layout(self, index: int) -> str:
        return ""  # DALI 2.4's draws have no layout, even shaped like an input that has one

    def scalar(self, args: dict[str, Any], name: str) -> float:
        return float(scalar_arg(self.name, name, self.get(args, name)))

    def draw_batch(self, u: torch.Tensor) -> torch.Tensor:
        """The batch of scalars from each sample's first uniform draw `u` (n,), in one vectorised
        call: ops whose one draw per sample is a function of that uniform override it."""
        raise NotImplementedError(f"{self.name} draws sample by sample")

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        if not self.vectorised:
            return super().run_batch(ctx, inputs, args)
        # draw_batch (ops that have one): the batch of scalars from each sample's first uniform draw
        u = first_uniforms(self.node.seed, ctx.iteration, ctx.batch_size)
        drawn = self.draw_numpy(u)
        return [TensorList(self.draw_batch(torch.from_numpy(u)) if drawn is None else torch.from_numpy(drawn), "")]

    def draw_numpy(self, u: np.ndarray) -> np.ndarray | None:
        """draw_batch's values computed in NumPy, or None (then draw_batch runs): a reader stage
        draws every batch, and each small torch op there releases the GIL, which another thread
        may then keep for up to Python's switch interval."""
        return None

    def _check_shape(self, shape: Any) -> tuple[int, ...]:
        dims = [shape] if isinstance(shape, (int, float)) else list(shape)
        if not all(float(d).is_integer() and d >= 0 for d in dims):
            raise ArgumentError(f"{self.name}: `shape` must be non-negative integers, got {shape!r}")
        return tuple(int(d) for d in dims)

    def shape(self, inputs: list[torch.Tensor], args: dict[str, Any]) -> tuple[int, ...]:
        if inputs:
            return tuple(inputs[0].shape)
        s = self.get(args, "shape")
        return () if s is None else self._check_shape(s)

    def work_dtype(self) -> torch.dtype:
        return torch.float64 if self.dtype == torch.float64 else torch.float32


class Uniform(_RandomOp):
    """Uniform floats in [lo, hi), or a uniform choice among `values`.

    For integer `dtype` (as DALI): the range ends are truncated to integers and the draw from
    [lo, hi) is rounded, so the ends are half as likely as the values between."""

    def setup(self) -> None:
        super().setup()
        if self.args.get("values") is None and "values" not in self.node.arg_inputs \
                and "range" not in self.node.arg_inputs:
            self._range(self.args["range"])
        elif self.args.get("values") is not None and not self.args["values"]:
            raise ArgumentError(f"{self.name}: `values` must not be empty")

    def _range(self, r: Any) -> tuple[float, float]:
        r = [r] if isinstance(r, (int, float)) else list(r)
        if len(r) != 2 or not r[0] < r[1]:
            raise ArgumentError(f"{self.name}: `range` must be [lo, hi] with lo < hi, got {r!r}")
        lo, hi = float(r[0]), float(r[1])
        if not self.dtype.is_floating_point:
            lo, hi = float(math.trunc(lo)), float(math.trunc(hi))
        return lo, hi

    def draw_numpy(self, u: np.ndarray) -> np.ndarray | None:
        if self.dtype not in (torch.float32, torch.float64):
            return None
        lo, hi = self._range(self.args["range"])
        t = np.float32 if self.dtype == torch.float32 else np.float64
        v = (lo + (hi - lo) * u).astype(t)  # the same IEEE operations as draw_batch's
        top = t(hi)
        return np.where(v >= top, np.nextafter(top, t(-np.inf)), v)

    def draw_batch(self, u: torch.Tensor) -> torch.Tensor:
        lo, hi = self._range(self.args["range"])
        v = lo + (hi - lo) * u
        if not self.dtype.is_floating_point:
            v = torch.sign(v) * torch.floor(v.abs() + 0.5)  # round_half_away, as per sample
        return self._below(convert(v.to(self.work_dtype()), self.dtype), hi)

    def _below(self, v: torch.Tensor, hi: float) -> torch.Tensor:
        """Floats stay below `hi` (the range is half-open, as DALI's): a draw that rounds up to
        it in the output type becomes the largest value below it."""
        if not v.dtype.is_floating_point:
            return v
        top = torch.tensor(hi, dtype=v.dtype, device=v.device)
        return torch.where(v >= top, torch.nextafter(top, torch.tensor(-math.inf, dtype=v.dtype, device=v.device)), v)

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        ctx = ctx.keyed(self.get(args, "_random_state"))
        shape = self.shape(inputs, args)
        values = self.get(args, "values")
        if values is not None:
            vals = [values] if isinstance(values, (int, float)) else list(values)
            if not vals:
                raise ArgumentError(f"{self.name}: `values` must not be empty")
            if not shape:
                return convert(torch.tensor(float(vals[ctx.rng.randint(0, len(vals) - 1)]),
                                            dtype=self.work_dtype(), device=self.device), self.dtype)
            table = torch.tensor(vals, dtype=self.work_dtype(), device=self.device)
            idx = torch.randint(len(vals), shape, generator=ctx.rng.generator(self.device), device=self.device)
            return convert(table[idx], self.dtype)
        lo, hi = self._range(self.get(args, "range"))
        if not shape:
            v = ctx.rng.uniform(lo, hi)
            v = float(round_half_away(v)) if not self.dtype.is_floating_point else v
            return self._below(convert(torch.tensor(v, dtype=self.work_dtype(), device=self.device), self.dtype), hi)
        u = torch.rand(shape, generator=ctx.rng.generator(self.device), device=self.device,
                       dtype=self.work_dtype())
        return self._below(convert(lo + (hi - lo) * u, self.dtype), hi)


class CoinFlip(_RandomOp):
    """1 with probability `probability`, else 0 (int32 by default, as DALI)."""

    def setup(self) -> None:
        super().setup()
        if self.dtype not in (torch.bool, torch.uint8, torch.int32):
            # DALI 2.4 (measured) fails such a pipeline: its coin flips are bool, uint8 or int32
            raise ArgumentTypeError(f"{self.name}: output type {self.dtype} is not supported (bool, uint8 or int32)")
        if not self.vectorised:
            return
        p = float(self.args["probability"])
        if not 0.0 <= p <= 1.0:
            raise ArgumentError(f"{self.name}: `probability` must be in [0, 1], got {p}")

    def draw_batch(self, u: torch.Tensor) -> torch.Tensor:
        return (u < float(self.args["probability"])).to(self.dtype)

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        ctx = ctx.keyed(self.get(args, "_random_state"))
        p = self.scalar(args, "probability")
        if not 0.0 <= p <= 1.0:
            raise ArgumentError(f"{self.name}: `probability` must be in [0, 1], got {p}")
        shape = self.shape(inputs, args)
        if not shape:
            return torch.tensor(int(ctx.rng.bernoulli(p)), device=self.device).to(self.dtype)
        u = torch.rand(shape, generator=ctx.rng.generator(self.device), device=self.device)
        return (u < p).to(self.dtype)


class Normal(_RandomOp):
    """Normally distributed values: mean + stddev * N(0, 1)."""

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        ctx = ctx.keyed(self.get(args, "_random_state"))
        mean, std = self.scalar(args, "mean"), self.scalar(args, "stddev")
        if std < 0:
            raise ArgumentError(f"{self.name}: `stddev` must be >= 0, got {std}")
        shape = self.shape(inputs, args)
        if not shape:
            v = ctx.rng.normal(mean, std)
            return convert(torch.tensor(v, dtype=self.work_dtype(), device=self.device), self.dtype)
        z = torch.randn(shape, generator=ctx.rng.generator(self.device), device=self.device,
                        dtype=self.work_dtype())
        return convert(z * std + mean, self.dtype)


def random_state_arg() -> Arg:
    """DALI's internal `_random_state` (dynamic mode passes each op its random state this way): a
    per-sample array of uint32 words that, with the sample index, decides the sample's draws."""
    return Arg("_random_state", "ints", None, "internal: the random state the draws are keyed by "
               "(uint32 words; the same state gives the same draws)", tensor=True)


def _shape_arg() -> Arg:
    return Arg("shape", "ints", None, "shape of each sample (default: a scalar)", tensor=True,
               check=non_negative)


# the optional input gives only the shape: DALI takes it from either device
_COMMON = dict(min_inputs=0, max_inputs=1, random=True, devices=("cpu", "gpu"), input_kinds=("any",))

register(OpSchema(
    name="random.uniform", impl=Uniform, legacy_names=("Uniform",), **_COMMON,
    doc="Uniformly distributed numbers in `range`, or picks from `values`. An optional input "
        "gives the output shape.",
    args=(
        Arg("range", "float_list", (-1.0, 1.0), "[lo, hi): the interval drawn from", tensor=True,
            check=length(2)),
        Arg("values", "float_list", None, "discrete values to pick from (overrides range)", tensor=True),
        _shape_arg(),
        Arg("dtype", "dtype", types.FLOAT, "output type"),
        random_state_arg(),
    ),
))
register(OpSchema(
    name="random.coin_flip", impl=CoinFlip, legacy_names=("CoinFlip",), **_COMMON,
    doc="Bernoulli draws: 1 with probability `probability`. An optional input gives the shape.",
    args=(
        Arg("probability", "float", 0.5, "chance of a 1", tensor=True, check=unit_interval),
        _shape_arg(),
        Arg("dtype", "dtype", types.INT32, "output type"),
        random_state_arg(),
    ),
))
register(OpSchema(
    name="random.normal", impl=Normal, legacy_names=("Normal",), **_COMMON,
    doc="Normally distributed numbers. An optional input gives the shape.",
    args=(
        Arg("mean", "float", 0.0, "mean of the distribution", tensor=True),
        Arg("stddev", "float", 1.0, "standard deviation", tensor=True, check=non_negative),
        _shape_arg(),
        Arg("dtype", "dtype", types.FLOAT, "output type"),
        random_state_arg(),
    ),
))
