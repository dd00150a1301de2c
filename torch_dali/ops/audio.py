"""Signal ops: preemphasis_filter, to_decibels (CPU or CUDA tensors) and power_spectrum (CPU).

preemphasis_filter: y[t] = x[t] - coeff * x[t-1] over the sample's elements in memory order (a
multi-dimensional sample is one signal, as in DALI); x[-1] is 0 (`border='zero'`), x[0]
('clamp', the default) or x[1] ('reflect'). Computed in float32 (float64 for float64 input), then
converted to `dtype` with DALI's rounding and saturation.

to_decibels: multiplier * log10(max(x / reference, 10 ** (cutoff_db / multiplier))), float32 in
and out; `reference` defaults to each sample's maximum (a sample of zeros gives cutoff_db); a
`reference` of 0 is refused at build; the floor ratio is at least float32's smallest positive value.

power_spectrum: |rfft(x, nfft)|^power along `axis` (any negative `axis` is the last one, as in DALI),
float32; nfft not given, or <= 0, is the axis' length (as in DALI).
"""
from __future__ import annotations

import math
from typing import Any

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError
from ._operator import Operator, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema, at_most
from .arith_kernels import cast_sat

_BORDERS = ("zero", "clamp", "reflect")
#: the longest FFT / spectrogram window: 2**24 samples is minutes of audio at 48 kHz; 2**31 (a
#: config's typo or attack) meant allocating tens of GB and the process being killed
MAX_FFT = 1 << 24
FFT_BOUND = at_most(MAX_FFT, "2**24 samples")


class PreemphasisFilter(Operator):
    def setup(self) -> None:
        self.dtype = types.to_torch_dtype(self.args["dtype"])
        if self.args["border"] not in _BORDERS:  # at build, a RuntimeError too, as DALI refuses it
            raise ArgumentError(f"{self.name}: `border` must be one of {', '.join(_BORDERS)}, got "
                                f"{self.args['border']!r}")

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x = inputs[0]
        coeff = args["preemph_coeff"] if "preemph_coeff" in args else self.args["preemph_coeff"]
        if isinstance(coeff, list):
            raise ArgumentError(f"{self.name}: `preemph_coeff` must be one number per sample, got {coeff!r}")
        if x.dtype.is_complex:
            raise ArgumentTypeError(f"{self.name}: complex input is not supported")
        work = torch.float64 if x.dtype == torch.float64 else torch.float32
        flat = x.reshape(-1).to(work)
        if flat.numel() == 0:
            return torch.empty(x.shape, dtype=self.dtype, device=x.device)
        border = self.args["border"]
        first = (flat[:1] * 0 if border == "zero" else flat[:1] if border == "clamp"
                 else flat[1:2] if flat.numel() > 1 else flat[:1])
        prev = torch.cat([first, flat[:-1]])
        c = torch.tensor(float(coeff), dtype=torch.float32).to(work)
        y = flat - c.to(flat.device) * prev
        return cast_sat(y, self.dtype).reshape(x.shape)


class ToDecibels(Operator):
    def setup(self) -> None:
        ref = self.args.get("reference")
        if ref is not None and float(ref) == 0.0:  # at build, as in DALI: every value would be divided by it
            # DALI's tests match the fragment "`reference` argument can't be zero" (kept, like other short ones)
            raise ArgumentError(f"{self.name}: `reference` argument can't be zero; it is the 0 dB level every "
                                f"input is divided by")
        # the floor ratio, 10 ** (cutoff_db / multiplier), taken in float64 and stored as float32, never below
        # float32's smallest positive value (DALI 2.4, measured: a multiplier of 0 gives 0 dB for every value
        # when cutoff_db < 0 and NaN otherwise; an underflowing floor gives log2 = -149, not -inf)
        quot = torch.tensor(float(self.args["cutoff_db"]), dtype=torch.float64) / float(self.args["multiplier"])
        floor = torch.pow(10.0, quot).to(torch.float32)
        self.floor = torch.maximum(floor, torch.tensor(2.0 ** -149, dtype=torch.float32))

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x = inputs[0]
        if x.dtype != torch.float32:
            raise ArgumentTypeError(f"{self.name}: the input must be float32, got {x.dtype}")
        mult = float(self.args["multiplier"])
        floor = self.floor.to(x.device)
        if not x.numel():
            return x.clone()
        ref = self.args.get("reference")
        if ref is None:  # each sample's own maximum, NaNs skipped, never below 0 (DALI 2.4, measured)
            ref_t = torch.where(torch.isnan(x), torch.zeros_like(x), x).max().clamp_min(0.0)
        else:  # any sign: a negative reference divides as it is
            ref_t = torch.tensor(float(ref), dtype=torch.float32, device=x.device)
        ratio = x / ref_t
        # a NaN ratio (0 / 0, inf / inf, NaN input) takes the floor; a NaN floor gives NaN everywhere
        floored = torch.where(ratio > floor, ratio, floor)
        # as multiplier * log10(2) * log2(.) in float32: DALI 2.4's values to the last bit (measured)
        scale = torch.tensor(mult, dtype=torch.float32) * torch.tensor(math.log10(2.0), dtype=torch.float32)
        return scale.to(x.device) * torch.log2(floored)


class PowerSpectrum(Operator):
    def setup(self) -> None:
        if self.args["power"] not in (1, 2):
            raise ArgumentError(f"{self.name}: `power` must be 2 (power spectrum) or 1 (magnitude), got "
                                f"{self.args['power']}")

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x = inputs[0]
        if x.dtype != torch.float32:
            raise ArgumentTypeError(f"{self.name}: the input must be float32, got {x.dtype}")
        axis = int(self.args["axis"])
        if axis < 0:  # DALI 2.4 (measured): any negative axis is the last one, not counted from the end
            axis = x.dim() - 1
        if not 0 <= axis < x.dim():
            raise ArgumentError(f"{self.name}: `axis` {axis} is out of range for a {x.dim()}-D sample")
        nfft = self.args.get("nfft")
        # DALI 2.4 (measured): nfft <= 0 is the default too, the axis' length
        n = int(nfft) if nfft is not None and nfft > 0 else int(x.shape[axis])
        spec = torch.fft.rfft(x, n=n, dim=axis).abs()  # nfft below the length truncates, above it zero-pads
        return (spec * spec if self.args["power"] == 2 else spec).to(torch.float32)


register(OpSchema(
    name="power_spectrum", impl=PowerSpectrum, devices=("cpu",),
    doc="|FFT|^power along one axis (nfft // 2 + 1 bins): the power spectrum (power=2) or the magnitude "
        "(power=1); float32 input.",
    args=(Arg("axis", "int", -1, "the axis transformed (any negative value: the last)"),
          Arg("nfft", "int", None, "FFT size (default, or <= 0: the axis' length; shorter truncates, longer zero-pads)",
              check=FFT_BOUND),
          Arg("power", "int", 2, "2: power spectrum, 1: magnitude")),
))
register(OpSchema(
    name="preemphasis_filter", impl=PreemphasisFilter,
    doc="Pre-emphasis: y[t] = x[t] - preemph_coeff * x[t-1] over each sample's elements; `border` sets x[-1].",
    args=(Arg("preemph_coeff", "float", 0.97, "the coefficient", tensor=True),
          Arg("border", "str", "clamp", "x[-1]: 'zero' (0), 'clamp' (x[0]) or 'reflect' (x[1])"),
          Arg("dtype", "dtype", types.FLOAT, "output type")),
))
register(OpSchema(
    name="to_decibels", impl=ToDecibels,
    doc="Decibels: multiplier * log10(max(x / reference, 10 ** (cutoff_db / multiplier))); float32 input.",
    args=(Arg("multiplier", "float", 10.0, "10 for power, 20 for amplitude"),
          Arg("reference", "float", None, "the 0 dB value (default: each sample's maximum)"),
          Arg("cutoff_db", "float", -200.0, "the lowest value out")),
))
