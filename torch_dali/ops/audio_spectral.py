"""spectrogram: the short-time Fourier transform of a 1-D float32 signal (CPU or CUDA tensors).

Measured on DALI 2.4's CPU backend: window k covers samples [k * step - pad, k * step - pad +
window_length) with pad = window_length // 2 when `center_windows` (else 0); samples outside the
signal are mirrored without repeating the edge (repeatedly, for signals shorter than the pad) with
`reflect_padding`, zero otherwise. Centered: len // step + 1 windows; not centered:
trunc((len - window_length) / step) + 1 windows (C integer division: a signal a little shorter than
the window still gives one window, its tail zero-padded). The default window is Hann sampled at
half-integer points, w[t] = 0.5 * (1 - cos(2 pi (t + 0.5) / window_length)). Each windowed frame is
zero-padded to nfft (default window_length) and |rfft|^power gives nfft // 2 + 1 bins; layout "ft"
(bins x windows) or "tf".
"""
from __future__ import annotations

import math
from typing import Any

import torch

from ..errors import ArgumentError, ArgumentTypeError
from ._operator import Operator, SampleContext
from ._registry import register
from ._schema import Arg, OpSchema
from .audio import FFT_BOUND


def hann_window(n: int, device: torch.device | None = None) -> torch.Tensor:
    t = torch.arange(n, dtype=torch.float64, device=device)
    return (0.5 * (1.0 - torch.cos(2.0 * math.pi * (t + 0.5) / n))).to(torch.float32)


def reflect_index(idx: torch.Tensor, n: int) -> torch.Tensor:
    """Indices mirrored into [0, n) without repeating the edge sample, as often as needed."""
    if n == 1:
        return torch.zeros_like(idx)
    period = 2 * (n - 1)
    m = torch.remainder(idx, period)
    return torch.where(m >= n, period - m, m)


def one_channel(name: str, x: torch.Tensor) -> torch.Tensor:
    """(n,), (n, 1) or (1, n) as a 1-D signal; anything else is refused."""
    if x.dtype != torch.float32:
        raise ArgumentTypeError(f"{name}: the input must be float32, got {x.dtype}")
    if x.dim() == 0 or sum(1 for e in x.shape if e != 1) > 1:
        raise ArgumentError(f"{name}: the input must be one channel of audio ((n,), (n, 1) or (1, n)), "
                            f"got shape {tuple(x.shape)}")
    return x.reshape(-1)


class Spectrogram(Operator):
    def setup(self) -> None:
        a = self.args
        self.wl = int(a["window_length"])
        self.step = int(a["window_step"])
        if self.wl <= 0:
            raise ArgumentError(f"{self.name}: `window_length` must be positive, got {self.wl}")
        if self.step <= 0:
            raise ArgumentError(f"{self.name}: `window_step` must be positive, got {self.step}")
        self.nfft = self.wl if a.get("nfft") is None else int(a["nfft"])
        if self.nfft < self.wl:
            raise ArgumentError(f"{self.name}: `window_length` ({self.wl}) must not exceed `nfft` ({self.nfft})")
        if a["power"] not in (1, 2):
            raise ArgumentError(f"{self.name}: `power` must be 1 (magnitude) or 2 (power), got {a['power']}")
        if a["layout"] not in ("ft", "tf"):
            raise ArgumentError(f"{self.name}: `layout` must be 'ft' or 'tf', got {a['layout']!r}")
        win = a.get("window_fn")
        if win is not None and len(win) != self.wl:
            raise ArgumentError(f"{self.name}: `window_fn` has {len(win)} values, `window_length` is {self.wl}")
        self.window = (hann_window(self.wl) if win is None
                       else torch.tensor([float(v) for v in win], dtype=torch.float32))

    def output_layout(self, index: int) -> str | None:
        return str(self.args["layout"])

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor], args: dict[str, Any]) -> torch.Tensor:
        x = one_channel(self.name, inputs[0])
        n = x.numel()
        if n == 0:
            raise ArgumentError(f"{self.name}: sample {ctx.index} is empty")
        center = bool(self.args["center_windows"])
        if center:
            nwin, pad = n // self.step + 1, self.wl // 2
        else:
            nwin, pad = (n - self.wl) // self.step + 1 if n >= self.wl else 1 - (self.wl - n) // self.step, 0
            if nwin <= 0:
                raise ArgumentError(f"{self.name}: sample {ctx.index} has {n} samples, too short for a "
                                    f"{self.wl}-sample window not centered")
        idx = (torch.arange(nwin, device=x.device)[:, None] * self.step - pad
               + torch.arange(self.wl, device=x.device)[None, :])
        inside = (idx >= 0) & (idx < n)
        if center and self.args["reflect_padding"]:
            frames = x[reflect_index(idx, n)]
        else:
            frames = torch.where(inside, x[idx.clamp(0, n - 1)], torch.zeros((), dtype=x.dtype, device=x.device))
        spec = torch.fft.rfft(frames * self.window.to(x.device), n=self.nfft, dim=1).abs()
        spec = spec * spec if self.args["power"] == 2 else spec
        return (spec.T if self.args["layout"] == "ft" else spec).contiguous()


register(OpSchema(
    name="spectrogram", impl=Spectrogram,
    doc="Spectrogram of a 1-D float32 signal: |STFT|^power, nfft // 2 + 1 bins per window; layout 'ft' or 'tf'.",
    args=(Arg("window_length", "int", 512, "samples per window", check=FFT_BOUND),
          Arg("window_step", "int", 256, "samples between window starts"),
          Arg("nfft", "int", None, "FFT size (default: window_length; must not be smaller)", check=FFT_BOUND),
          Arg("window_fn", "floats", None, "window_length window samples (default: Hann)"),
          Arg("power", "int", 2, "2: power, 1: magnitude"),
          Arg("center_windows", "bool", True, "pad so that windows are centered at multiples of window_step"),
          Arg("reflect_padding", "bool", True, "mirror the signal at its ends (else zeros); only when centered"),
          Arg("layout", "str", "ft", "'ft' (bins x windows) or 'tf' (windows x bins)")),
))
