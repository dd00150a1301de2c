"""noise.gaussian, noise.salt_and_pepper, noise.shot: random noise on any tensor (CPU or CUDA).

Draws come from `functional.noise`'s counter-based hash keyed by each sample's `SampleRNG`
(pipeline seed, op seed, iteration, sample index): the same seed gives the same output whatever
the threads, the batch's density or its device, and a dense batch is drawn in one set of calls.
DALI's own generator differs, so values match DALI in distribution, not bit for bit.
Output type = input type (DALI's: integers and float32; not float16/float64).
"""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ..rng import SampleRNG
from ..functional import noise as K
from ..functional import ragged as R
from ..functional.ragged import Flat
from ._registry import register
from ._schema import Arg, OpSchema, non_negative, unit_interval
from .layout_op import Args, LayoutOp, per_sample, scalar

NOISE_TYPES = (torch.uint8, torch.int8, torch.uint16, torch.int16, torch.uint32, torch.int32,
               torch.uint64, torch.int64, torch.float32)


def sample_keys(seed: int, iteration: int, indices: list[int]) -> torch.Tensor:
    """Each sample's 63-bit key, from its keyed SampleRNG."""
    return torch.tensor([SampleRNG(seed, iteration, i).seed63() for i in indices], dtype=torch.int64)


def cast_like_dali(v: float, dtype: torch.dtype) -> torch.Tensor:
    """A salt/pepper value in the input's type as DALI converts it: truncated, wrapped for integers."""
    if dtype.is_floating_point:
        return torch.tensor(v, dtype=dtype)
    bits = torch.iinfo(dtype).bits
    n = int(v)  # toward zero
    if torch.iinfo(dtype).min < 0:
        n = ((n + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))
    else:
        n %= 1 << bits
    return torch.tensor(n, dtype=dtype)


class _Noise(LayoutOp):
    params: tuple[str, ...] = ()

    def vector(self, args: dict[str, list[Any]], name: str, n: int) -> torch.Tensor:
        vals = [scalar(self.name, name, v) for v in per_sample(args.get(name), n, self.args.get(name))]
        return torch.tensor(vals, dtype=torch.float64)

    def check_type(self, x: torch.Tensor) -> None:
        if x.dtype not in NOISE_TYPES:
            raise ArgumentTypeError(f"{self.name}: data type {x.dtype} is not supported; supported types are: "
                                    + ", ".join(str(t).replace("torch.", "") for t in NOISE_TYPES))

    def run_one(self, index: int, seed: int, iteration: int, x: torch.Tensor, layout: str,
                args: Args) -> torch.Tensor:
        return self.noise(x.unsqueeze(0), layout, {k: [v] for k, v in args.items()},
                          sample_keys(seed, iteration, [index]))[0]

    def run_dense(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], seed: int,
                  iteration: int) -> torch.Tensor:
        return self.noise(x, layout, args, sample_keys(seed, iteration, list(range(int(x.shape[0])))))

    def noise(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], keys: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


    def flat(self, samples: list[torch.Tensor], inner: int = 0) -> Flat | None:
        """The batch flat (`functional.ragged`) once every sample passed the checks; None for
        mixed types."""
        for x in samples:
            self.check_type(x)
        return Flat(samples, inner) if len({x.dtype for x in samples}) == 1 else None


class GaussianNoise(_Noise):
    def stddev(self, args: dict[str, list[Any]], n: int) -> torch.Tensor:
        std = self.vector(args, "stddev", n)
        if bool((std < 0).any()):
            raise ArgumentError(f"{self.name}: `stddev` must be >= 0, got {float(std.min())}")
        return std

    def noise(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], keys: torch.Tensor) -> torch.Tensor:
        self.check_type(x)
        n = int(x.shape[0])
        std = self.stddev(args, n)
        return K.gaussian(x, keys, self.vector(args, "mean", n).float(), std.float())

    def run_ragged(self, samples: list[torch.Tensor], layout: str, args: dict[str, list[Any]], seed: int,
                   iteration: int) -> list[torch.Tensor] | None:
        flat = self.flat(samples)
        if flat is None:
            return None
        n = len(samples)
        std = self.stddev(args, n)
        ids, counters = R.segments(flat.numels, flat.device)
        y = K.gaussian_flat(flat.data, ids, counters, sample_keys(seed, iteration, list(range(n))),
                            self.vector(args, "mean", n).float(), std.float())
        return flat.split(y)


class SaltAndPepper(_Noise):
    def channel_axis(self, layout: str, ndim: int) -> int | None:
        """The channel axis of a batch (sample axis 0), shared by a pixel's noise; None per channel."""
        if self.args["per_channel"]:
            return None
        if not layout:
            return ndim
        c = layout.find("C")
        if c not in (0, len(layout) - 1):
            raise ArgumentError(f"{self.name}: 'C' should be the first or the last dimension in the layout, except "
                                f'for empty layouts where channel-last is assumed. Got layout: "{layout}".')
        return c + 1

    def value(self, args: dict[str, list[Any]], name: str, n: int, default: float, dtype: torch.dtype) -> torch.Tensor:
        vals = per_sample(args.get(name), n, self.args.get(name))
        return torch.stack([cast_like_dali(default if v is None else scalar(self.name, name, v), dtype)
                            for v in vals])

    def noise(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], keys: torch.Tensor) -> torch.Tensor:
        self.check_type(x)
        n = int(x.shape[0])
        prob, svp = self.vector(args, "prob", n), self.vector(args, "salt_vs_pepper", n)
        for name, v in (("prob", prob), ("salt_vs_pepper", svp)):
            if bool(((v < 0) | (v > 1)).any()):
                raise ArgumentError(f"{self.name}: `{name}` must be in [0, 1], got {v.tolist()}")
        info_max = 1.0 if x.dtype.is_floating_point else float(torch.iinfo(x.dtype).max)
        info_min = -1.0 if x.dtype.is_floating_point else float(torch.iinfo(x.dtype).min)
        salt = self.value(args, "salt_val", n, info_max, x.dtype)
        pepper = self.value(args, "pepper_val", n, info_min, x.dtype)
        axis = self.channel_axis(layout, x.dim() - 1)
        return K.salt_and_pepper(x, keys, prob.float(), svp.float(), salt, pepper, axis)

    def run_ragged(self, samples: list[torch.Tensor], layout: str, args: dict[str, list[Any]], seed: int,
                   iteration: int) -> list[torch.Tensor] | None:
        ndim = samples[0].dim()
        axis = self.channel_axis(layout, ndim)
        if axis is not None and axis != ndim:  # channels first: a pixel's values are apart
            return None
        if axis is not None and any(x.dim() == 0 for x in samples):
            return None
        flat = self.flat(samples, 0 if axis is None else 1)
        if flat is None:
            return None
        n = len(samples)
        prob, svp = self.vector(args, "prob", n), self.vector(args, "salt_vs_pepper", n)
        for name, v in (("prob", prob), ("salt_vs_pepper", svp)):
            if bool(((v < 0) | (v > 1)).any()):
                raise ArgumentError(f"{self.name}: `{name}` must be in [0, 1], got {v.tolist()}")
        dt = flat.dtype
        info_max = 1.0 if dt.is_floating_point else float(torch.iinfo(dt).max)
        info_min = -1.0 if dt.is_floating_point else float(torch.iinfo(dt).min)
        salt = self.value(args, "salt_val", n, info_max, dt)
        pepper = self.value(args, "pepper_val", n, info_min, dt)
        ids, counters = R.segments(flat.rows, flat.device)
        y = K.salt_and_pepper_flat(flat.items(), ids, counters, sample_keys(seed, iteration, list(range(n))),
                                   prob.float(), svp.float(), salt, pepper)
        return flat.split(y)


class ShotNoise(_Noise):
    def noise(self, x: torch.Tensor, layout: str, args: dict[str, list[Any]], keys: torch.Tensor) -> torch.Tensor:
        self.check_type(x)
        return K.shot(x, keys, self.vector(args, "factor", int(x.shape[0])))


register(OpSchema(
    name="noise.gaussian", impl=GaussianNoise, random=True,
    doc="Adds Gaussian noise N(mean, stddev) to every value; the output keeps the input's type "
        "(integers rounded and saturated).",
    args=(Arg("mean", "float", 0.0, "mean of the noise", tensor=True),
          Arg("stddev", "float", 1.0, "standard deviation of the noise", tensor=True, check=non_negative)),
))
register(OpSchema(
    name="noise.salt_and_pepper", impl=SaltAndPepper, random=True,
    doc="Replaces values (or whole pixels) with `salt_val` or `pepper_val` with probability `prob`.",
    args=(Arg("prob", "float", 0.05, "chance that a value is replaced", tensor=True, check=unit_interval),
          Arg("salt_vs_pepper", "float", 0.5, "chance that a replaced value is salt", tensor=True,
              check=unit_interval),
          Arg("salt_val", "float", None, "salt (default: 1.0 for floats, the type's maximum otherwise)",
              tensor=True),
          Arg("pepper_val", "float", None, "pepper (default: -1.0 for floats, the type's minimum otherwise)",
              tensor=True),
          Arg("per_channel", "bool", False, "draw each channel apart (default: a pixel's channels together; "
              "the layout's 'C' must then come first or last, channels last when there is no layout)")),
))
register(OpSchema(
    name="noise.shot", impl=ShotNoise, random=True,
    doc="Shot noise: poisson(max(0, in / factor)) * factor per value (factor 0 leaves the input as it is).",
    args=(Arg("factor", "float", 20.0, "the value one event adds", tensor=True),),
))
