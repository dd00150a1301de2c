"""nonsilent_region: where a 1-D audio sample stops being silent, as (begin, length) int32 scalars.

Measured on DALI 2.4's CPU backend: the short-term power at sample i is the mean of x^2 over the
window_length samples ending at i (samples before 0 count as 0; integer samples are squared as
they are, not scaled to [-1, 1]). A sample is loud when that power is at least
reference * 10 ** (cutoff_db / 10), the reference being `reference_power` (which must be positive)
or, when it is not given, the sample's largest short-term power (so an all-zero signal is loud
throughout). With i0 and i1 the first and last loud indices, the region begins at max(0, i0 - window_length + 1) and ends at i1;
no loud index gives (0, 0). The power is summed in float64 here, so `reset_interval` (DALI's
guard against float32 drift) changes nothing but is checked as DALI checks it.
"""
from __future__ import annotations

from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ._operator import Operator, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema

_TYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float32,
          torch.uint16, torch.uint32, torch.uint64)


def short_term_power(x: torch.Tensor, window: int) -> torch.Tensor:
    """Mean of x^2 over the `window` samples ending at each index (zeros before the start), float64."""
    sq = x.to(torch.float64) ** 2
    c = torch.cumsum(torch.cat([sq.new_zeros(1), sq]), 0)
    hi = torch.arange(1, x.numel() + 1, device=x.device)
    return (c[hi] - c[(hi - window).clamp(min=0)]) / window


class NonsilentRegion(Operator):
    def setup(self) -> None:
        wl = int(self.args["window_length"])
        if wl <= 0:
            raise ArgumentError(f"{self.name}: `window_length` must be positive, got {wl}")

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor],
                   args: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        x = inputs[0]
        wl = int(self.args["window_length"])
        if x.dtype not in _TYPES:
            raise ArgumentTypeError(f"{self.name}: the input must be float32 or an integer type, got {x.dtype}")
        if x.dim() != 1:
            raise ArgumentError(f"{self.name}: the input must be 1-D audio, got shape {tuple(x.shape)} "
                                f"(sample {ctx.index})")
        if x.numel() == 0:
            raise ArgumentError(f"{self.name}: sample {ctx.index} is empty")
        reset = int(self.args["reset_interval"])
        if x.dtype == torch.float32 and reset != -1 and (reset <= 0 or reset % wl):
            raise ArgumentError(f"{self.name}: `reset_interval` ({reset}) must be -1 or a positive multiple of "
                                f"`window_length` ({wl})")
        ref = self.args.get("reference_power")
        if ref is not None and not float(ref) > 0:  # given, it must be positive: 0 does not mean the maximum
            raise ArgumentError(f"{self.name}: `reference_power` must be positive (leave it out for the "
                                f"sample's maximum), got {ref}")
        power = short_term_power(x, wl)
        reference = power.max() if ref is None else torch.tensor(float(ref), dtype=torch.float64, device=x.device)
        loud = torch.nonzero(power >= reference * 10.0 ** (float(self.args["cutoff_db"]) / 10.0)).flatten()
        zero = torch.zeros((), dtype=torch.int32, device=x.device)
        if loud.numel() == 0:
            return zero, zero.clone()
        begin = (loud[0] - (wl - 1)).clamp(min=0)
        return begin.to(torch.int32), (loud[-1] - begin + 1).to(torch.int32)

    def output_layout(self, index: int) -> str | None:
        return ""


register(OpSchema(
    name="nonsilent_region", impl=NonsilentRegion, num_outputs=2,
    doc="Leading and trailing silence detection in 1-D audio: (begin, length) of the region whose short-term "
        "power is within cutoff_db of the reference; int32 scalars.",
    args=(Arg("cutoff_db", "float", -60.0, "the threshold in dB below which the signal is silent"),
          Arg("window_length", "int", 2048, "samples in the short-term power window"),
          Arg("reference_power", "float", None,
              "the 0 dB power, positive (default: the sample's largest short-term power)"),
          Arg("reset_interval", "int", 8192, "DALI's float32 drift guard: -1 or a multiple of window_length")),
))
